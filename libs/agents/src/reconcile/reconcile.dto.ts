import { IsBoolean, IsString, Matches } from 'class-validator';
import { ApiProperty, ApiPropertyOptional } from '@app/common';
import { AGENT_NAME_SCHEMA, AgentRefDto, NAMESPACE_SCHEMA } from '../api/requests.dto.js';
import { AgentDto } from '../api/responses.dto.js';
import { Optional } from '@app/doors';

const DNS1123_LABEL = new RegExp(NAMESPACE_SCHEMA.pattern);

/** Which agents to reconcile: one (namespace and name), one namespace, or all; dryRun lists what would be done. */
export class ReconcileRequestDto {
  @ApiPropertyOptional({ description: 'Only agents in this namespace (with name: that one agent)', ...NAMESPACE_SCHEMA })
  @Optional()
  @IsString()
  @Matches(DNS1123_LABEL, { message: 'namespace must be a DNS-1123 label' })
  namespace?: string;

  @ApiPropertyOptional({ description: 'One agent (needs namespace)', ...AGENT_NAME_SCHEMA })
  @Optional()
  @IsString()
  @Matches(DNS1123_LABEL, { message: 'name must be a DNS-1123 label' })
  name?: string;

  @ApiPropertyOptional({ description: 'List what the reconciler would do, do nothing', default: false })
  @Optional()
  @IsBoolean()
  dryRun?: boolean;
}

export class AdoptAgentDto extends AgentRefDto {
  @ApiPropertyOptional({ description: 'List the revisions that would be taken in, write nothing', default: false })
  @Optional()
  @IsBoolean()
  dryRun?: boolean;
}

export class ReconcileItemDto {
  @ApiProperty({ example: 'agents' }) namespace: string;
  @ApiProperty({ example: 'incident-helper' }) name: string;
  @ApiProperty({ enum: ['none', 'record-create', 'uninstall', 'reinstall', 'rollback', 'report'], description: 'What the decision table chose' }) action: string;
  @ApiPropertyOptional({ enum: ['missing', 'drift', 'unmanaged', 'failed', 'no-live-object'], description: 'For a report: what disagrees' }) finding?: string;
  @ApiProperty({ description: 'What was found and what is (or would be) done' }) detail: string;
  @ApiProperty({ description: 'Whether the action was carried out' }) done: boolean;
  @ApiPropertyOptional({ description: 'Why the agent was skipped or the action failed' }) error?: string;
}

export class ReconcileResultDto {
  @ApiProperty() dryRun: boolean;
  @ApiProperty({ type: [ReconcileItemDto] }) items: ReconcileItemDto[];
}

export class AdoptedRevisionDto {
  @ApiProperty({ type: 'integer', description: "agent-manager's revision" }) revision: number;
  @ApiProperty({ type: 'integer', description: "helm's release revision it was taken from" }) helmRevision: number;
  @ApiProperty({ example: 'superseded' }) status: string;
}

export class AdoptResultDto {
  @ApiProperty() dryRun: boolean;
  @ApiProperty({ description: 'The agent as recorded (null on a dry run)', type: AgentDto, nullable: true }) agent: AgentDto | null;
  @ApiProperty({ type: [AdoptedRevisionDto] }) revisions: AdoptedRevisionDto[];
}
