import { IsIn, IsString, Matches, MaxLength } from 'class-validator';
import { ApiProperty, ApiPropertyOptional } from '@app/common';
import { Optional, ProblemDto } from '@app/doors';
import { ApproverGrantDto } from '../api/responses.dto.js';

/** What a proposal can become (docs/approvals.md). */
export const CHANGE_STATES = ['pending', 'applying', 'applied', 'conflicted', 'failed', 'rejected', 'withdrawn', 'expired'] as const;
export type ChangeState = (typeof CHANGE_STATES)[number];
export const PROPOSABLE = ['create_agent', 'update_agent', 'delete_agent', 'rollback_agent'] as const;
const CHANGE_ID = /^ch-[0-9a-f]{12}$/;
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export class ChangeRefDto {
  @ApiProperty({ description: 'The change id, from the write that proposed it (Location) or list_changes', example: 'ch-3b1f0c9a12ab' })
  @IsString()
  @Matches(CHANGE_ID, { message: 'id must be a change id as list_changes shows it, e.g. ch-3b1f0c9a12ab' })
  id: string;
}

/** An approval's, rejection's or withdrawal's note, journaled with it. */
export class ChangeDecisionDto {
  @ApiPropertyOptional({ description: 'Why: kept with the change and its journal entry', example: 'checked the diff with the on-call' })
  @Optional()
  @IsString()
  @MaxLength(1000, { message: 'comment must be at most 1000 characters' })
  comment?: string;
}

export class ListChangesQueryDto {
  @ApiPropertyOptional({ enum: CHANGE_STATES, description: 'Only changes in this state' })
  @Optional()
  @IsIn(CHANGE_STATES, { message: `state must be one of ${CHANGE_STATES.join(', ')}` })
  state?: ChangeState;

  @ApiPropertyOptional({ description: 'Only changes in this namespace', example: 'prod-payments' })
  @Optional()
  @Matches(NAMESPACE, { message: 'namespace must be a namespace name (a DNS-1123 label)' })
  namespace?: string;

  @ApiPropertyOptional({ description: 'Only changes this subject proposed', example: 'token:llm-bot' })
  @Optional()
  @IsString()
  @MaxLength(256)
  proposer?: string;

  @ApiPropertyOptional({ enum: PROPOSABLE, description: 'Only changes of this write' })
  @Optional()
  @IsIn(PROPOSABLE, { message: `operation must be one of ${PROPOSABLE.join(', ')}` })
  operation?: string;
}

export class ApprovalDto {
  @ApiProperty({ description: 'The approver, as the policy names subjects', example: 'token:alice' }) subject: string;
  @ApiProperty({ format: 'date-time', example: '2026-03-14T09:26:53.000Z' }) at: string;
  @ApiProperty({ nullable: true, type: String, example: null }) comment: string | null;
}

/** A proposal: what was asked, by whom, the diff, and what became of it. */
export class ChangeDto {
  @ApiProperty({ example: 'ch-3b1f0c9a12ab' }) id: string;
  @ApiProperty({ enum: CHANGE_STATES, example: 'pending' }) state: string;
  @ApiProperty({ enum: PROPOSABLE, example: 'update_agent' }) operation: string;
  @ApiProperty({ example: 'prod-payments' }) namespace: string;
  @ApiProperty({ example: 'incident-helper' }) name: string;
  @ApiProperty({ description: 'Who proposed it; the change applies as their write', example: 'token:llm-bot' }) proposer: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The write as it was asked (without its idempotency key)' }) request: Record<string, unknown>;
  @ApiProperty({ nullable: true, type: 'integer', description: 'The agent version it was planned on: applied with If-Match on it (null for a create)', example: 4 })
  plannedVersion: number | null;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The chart values before and after' }) values: { before: unknown; after: unknown };
  @ApiProperty({ description: "A unified diff of the rendered manifests, the cluster's objects before → after", example: '--- team-a/reviewer (current)\n+++ team-a/reviewer (proposed)\n@@ …' }) diff: string;
  @ApiProperty({ type: [ProblemDto], example: [] }) warnings: ProblemDto[];
  @ApiProperty({ description: 'The role whose holders approve', example: 'approver' }) approverRole: string;
  @ApiProperty({ type: [ApproverGrantDto], description: 'Who holds the approver role in this namespace, by the policy' }) approvers: ApproverGrantDto[];
  @ApiProperty({ type: 'integer', description: 'Distinct approvals needed, never the proposer', example: 1 }) required: number;
  @ApiProperty({ type: [ApprovalDto] }) approvals: ApprovalDto[];
  @ApiProperty({ nullable: true, type: String, description: 'Who rejected or withdrew it', example: null }) decidedBy: string | null;
  @ApiProperty({ nullable: true, type: String, example: null }) comment: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'What became of it, in words (a conflict says to re-propose)', example: null }) message: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'The journal entry of the applied write (list_operations)', example: null }) operationId: string | null;
  @ApiProperty({ format: 'date-time', example: '2026-03-15T09:26:53.000Z' }) expiresAt: string;
  @ApiProperty({ format: 'date-time', example: '2026-03-14T09:26:53.000Z' }) createdAt: string;
  @ApiProperty({ format: 'date-time', example: '2026-03-14T09:26:53.000Z' }) updatedAt: string;
}

export class ChangeListDto {
  @ApiProperty({ type: [ChangeDto] }) items: ChangeDto[];
}

