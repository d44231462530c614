import { IsInt, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { ApiProperty, ApiPropertyOptional } from '@app/common';
import { Optional, WholeNumberText } from '@app/doors';

/** A type filter: a whole event type, or one with `*` standing for any text (`io.agent-manager.agent.*`). */
export const EVENT_TYPE_FILTER = /^[a-z0-9*][a-z0-9._*-]{0,199}$/;

export class ListEventsQueryDto {
  @ApiPropertyOptional({ description: 'Only events of this type; `*` stands for any text', example: 'io.agent-manager.agent.*', maxLength: 200 })
  @Optional()
  @IsString()
  @Matches(EVENT_TYPE_FILTER, { message: 'type must be an event type, `*` standing for any text, e.g. io.agent-manager.agent.* or io.agent-manager.blueprint.updated' })
  type?: string;

  @ApiPropertyOptional({ description: 'Only events of this subject: ns/name of an agent or a change, a blueprint name, a rollout id', example: 'team-a/support-bot', maxLength: 253 })
  @Optional()
  @IsString()
  @MaxLength(253)
  @Matches(/^[a-z0-9][-a-z0-9./]*$/, { message: 'subject must be ns/name of an agent, a blueprint name or a rollout id, e.g. team-a/support-bot' })
  subject?: string;

  @ApiPropertyOptional({ description: 'Page size, 1 to 500', type: 'integer', default: 100, minimum: 1, maximum: 500 })
  @Optional()
  @WholeNumberText()
  @IsInt({ message: 'limit must be a whole number from 1 to 500' })
  @Min(1)
  @Max(500)
  limit?: number;

  @ApiPropertyOptional({ description: 'The nextCursor of the previous page (events after it, oldest first)' })
  @Optional()
  @IsString()
  @MaxLength(64)
  cursor?: string;
}

/** A change event as CloudEvents 1.0 structures it (docs/contract.md §14). */
export class ChangeEventDto {
  @ApiProperty({ example: '1.0' }) specversion: string;
  @ApiProperty({ description: 'Given once; the same on every delivery (a consumer deduplicates on it)', example: '0b8f2a4e-3c1d-4e9a-8f7b-2d6c5a4b3e21' }) id: string;
  @ApiProperty({ example: 'io.agent-manager.agent.updated' }) type: string;
  @ApiProperty({ example: '/agent-manager/namespaces/team-a' }) source: string;
  @ApiProperty({ example: 'team-a/support-bot' }) subject: string;
  @ApiProperty({ format: 'date-time' }) time: string;
  @ApiProperty({ example: 'application/json' }) datacontenttype: string;
  @ApiProperty({ description: 'The commit order of the events (the `sequence` extension): later writes have larger numbers', example: '42' }) sequence: string;
  @ApiPropertyOptional({ description: "The agent's namespace (the `namespace` extension); absent for blueprints and rollouts", example: 'team-a' }) namespace?: string;
  @ApiProperty({
    description: 'operationId, actor, revision and version, and `changes`: the spec fields that changed, each {path, before, after}',
    type: 'object',
    additionalProperties: true,
    example: { operationId: 'c5b1f0e2-7f43-4d8e-9a51-2b7d0c9e4f11', operation: 'update', actor: 'token:ci-platform', revision: 3, changes: [{ path: 'systemMessage', before: 'old', after: 'new' }] },
  })
  data: Record<string, unknown>;
}

export class ChangeEventPageDto {
  @ApiProperty({ type: [ChangeEventDto] }) items: ChangeEventDto[];
  @ApiProperty({ nullable: true, type: String, description: 'Pass as cursor to read the events after this page (a consumer polls with it for newer ones); null on an empty page: keep the cursor you sent', example: null })
  nextCursor: string | null;
}
