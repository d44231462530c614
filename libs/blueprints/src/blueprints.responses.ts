import { ChartValuesDto, FieldChangeDto } from '@app/agents';
import { ProblemDto } from '@app/doors';
import { ApiProperty, ApiPropertyOptional } from '@app/common';

const DATE = '2026-03-14T09:26:53.000Z';
const ACTOR = 'alice@example.com';
const OBJECT = { type: 'object', additionalProperties: true } as const;

/** A blueprint as list_blueprints shows it: no fixed value (reading those needs get_blueprint). */
export class BlueprintSummaryDto {
  @ApiProperty({ example: 'incident_helper' }) name: string;
  @ApiProperty({ nullable: true, type: String, description: "The tool's description (null when the stored body cannot be read)", example: 'Creates an incident helper for a team.' })
  description: string | null;
  @ApiProperty({ type: [String], description: 'The open arguments besides name and namespace', example: ['displayName', 'labels'] }) open: string[];
  @ApiProperty({ type: 'integer', example: 2 }) activeVersion: number;
  @ApiProperty({ type: 'integer', example: 3 }) latestVersion: number;
  @ApiProperty({ enum: ['file', 'operator'], description: 'file: seeded from BLUEPRINTS_FILE and untouched since; operator: written through the API', example: 'operator' })
  owner: string;
  @ApiProperty({ description: 'True when the active version no longer passes the create checks: its tool is not served, only delete clears it', example: false })
  conflicted: boolean;
  @ApiProperty({ nullable: true, type: String, description: 'Why it is conflicted; null when healthy', example: null }) conflictedReason: string | null;
  @ApiProperty({ format: 'date-time', example: DATE }) createdAt: string;
  @ApiProperty({ format: 'date-time', example: DATE }) updatedAt: string;
  @ApiProperty({ example: ACTOR }) createdBy: string;
  @ApiProperty({ example: ACTOR }) updatedBy: string;
}

export class BlueprintListDto {
  @ApiProperty({ type: [BlueprintSummaryDto] }) items: BlueprintSummaryDto[];
  @ApiProperty({ nullable: true, type: String, description: 'Pass as cursor for the next page; null on the last page', example: null }) nextCursor: string | null;
}

/** One version's body and its record. */
export class BlueprintVersionDto {
  @ApiProperty({ type: 'integer', example: 1 }) version: number;
  @ApiProperty({ description: 'Whether this version is the active one', example: true }) active: boolean;
  @ApiProperty({ nullable: true, type: String, example: 'Creates an incident helper for a team.' }) description: string | null;
  @ApiProperty({ ...OBJECT, description: 'The create arguments baked in', example: { modelConfig: 'default-model-config', toolset: ['preset:read-only'] } })
  fixed: Record<string, unknown>;
  @ApiProperty({ type: [String], example: ['displayName'] }) open: string[];
  @ApiProperty({ ...OBJECT, example: { namespace: 'agents' } }) defaults: Record<string, unknown>;
  @ApiProperty({ nullable: true, type: String, example: 'first version' }) note: string | null;
  @ApiProperty({ nullable: true, type: 'integer', description: 'For a rollback: the version whose body it restored', example: null }) rolledBackTo: number | null;
  @ApiProperty({ format: 'date-time', example: DATE }) createdAt: string;
  @ApiProperty({ example: ACTOR }) createdBy: string;
}

/** get_blueprint: the blueprint and one version (the active one unless asked), fixed values included. */
export class BlueprintDto extends BlueprintSummaryDto {
  @ApiProperty({ type: BlueprintVersionDto, description: 'The version read: the active one unless version was given' }) body: BlueprintVersionDto;
}

export class BlueprintVersionListDto {
  @ApiProperty({ example: 'incident_helper' }) name: string;
  @ApiProperty({ type: 'integer', example: 2 }) activeVersion: number;
  @ApiProperty({ type: [BlueprintVersionDto] }) items: BlueprintVersionDto[];
}

export class BlueprintVersionDiffDto {
  @ApiProperty({ example: 'incident_helper' }) name: string;
  @ApiProperty({ nullable: true, type: 'integer', description: 'The version diffed from; null before version 1 (the diff is the whole first body)', example: 1 }) from: number | null;
  @ApiProperty({ type: 'integer', description: 'The version diffed to', example: 2 }) to: number;
  @ApiProperty({ type: 'integer', example: 2 }) activeVersion: number;
  @ApiProperty({ description: 'Whether any field differs', example: true }) changed: boolean;
  @ApiProperty({
    type: [FieldChangeDto],
    description: 'The body fields that differ, from → to: description, open, and each fixed argument and default by its path (fixed.modelConfig, defaults.namespace)',
    example: [{ path: 'fixed.modelConfig', before: 'default-model-config', after: 'large-model-config' }],
  })
  fields: FieldChangeDto[];
}

export class ValidateBlueprintResultDto {
  @ApiProperty({ description: 'Whether the write would be accepted', example: true }) valid: boolean;
  @ApiProperty({ enum: ['create', 'save'], description: 'The checks run: a create (new name) or a save-version (existing name)', example: 'create' }) checked: string;
  @ApiProperty({ type: [ProblemDto], example: [] }) violations: ProblemDto[];
}

export class BlueprintHolderDto {
  @ApiProperty({ example: 'agents' }) namespace: string;
  @ApiProperty({ example: 'payments-helper' }) name: string;
  @ApiProperty({ type: 'integer', description: 'The blueprint version the agent holds', example: 1 }) version: number;
}

/** Holders in namespaces the caller may not read: counted, never named. */
export class CountedHoldersDto {
  @ApiProperty({ description: 'The namespace patterns of the policy under which these holders may be deleted (who can clear them), comma-separated; the namespaces themselves are not named', example: 'payments-*' }) namespaces: string;
  @ApiProperty({ type: 'integer', example: 2 }) count: number;
  @ApiProperty({ example: 'agent: 2 not readable with your role' }) summary: string;
}

export class BlueprintRefereesDto {
  @ApiProperty({ example: 'incident_helper' }) name: string;
  @ApiProperty({ type: [BlueprintHolderDto], description: 'Active agents created from the blueprint, in namespaces the caller may read' }) holders: BlueprintHolderDto[];
  @ApiProperty({ type: [CountedHoldersDto], description: 'Holders the caller may not read, as counts', example: [] }) counted: CountedHoldersDto[];
}

export class DeleteBlueprintResultDto {
  @ApiProperty({ example: 'incident_helper' }) name: string;
  @ApiProperty({ example: true }) deleted: boolean;
}

export class UpgradedAgentDto {
  @ApiProperty({ example: 'agents' }) namespace: string;
  @ApiProperty({ example: 'payments-helper' }) name: string;
  @ApiProperty({ type: 'integer', description: 'The version the agent held', example: 1 }) fromVersion: number;
  @ApiProperty({ enum: ['updated', 'unchanged', 'failed', 'would-update', 'pending-approval'], description: 'pending-approval: an approval rule made the update a proposal (change names it; docs/approvals.md)', example: 'updated' }) outcome: string;
  @ApiPropertyOptional({ type: ChartValuesDto, description: 'The values before (dry run and updated)' }) before?: ChartValuesDto;
  @ApiPropertyOptional({ type: ChartValuesDto, description: 'The values after (dry run and updated)' }) after?: ChartValuesDto;
  @ApiPropertyOptional({ description: 'Why it failed', example: 'agent agents/payments-helper is at version 4, not 3: …' }) error?: string;
  @ApiPropertyOptional({ description: 'The proposal awaiting approval (pending-approval): GET /api/v1/changes/{id}', example: 'ch-3b1f0c9a12ab' }) change?: string;
}

export class UpgradeResultDto {
  @ApiProperty({ example: false }) dryRun: boolean;
  @ApiProperty({ example: 'incident_helper' }) name: string;
  @ApiProperty({ type: 'integer', description: 'The active version the holders move to', example: 2 }) version: number;
  @ApiProperty({ type: [UpgradedAgentDto] }) items: UpgradedAgentDto[];
  @ApiProperty({
    type: 'integer',
    description: 'Holders on older versions in namespaces the caller may not read (get_agent): neither named nor upgraded; list_blueprint_referees counts them by who can',
    example: 0,
  })
  notShown: number;
}
