import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class ProblemDto {
  @ApiProperty({ description: 'Where: a field or a list item such as toolset[3]' }) path: string;
  @ApiProperty({ description: 'What is wrong and what to do instead' }) message: string;
}

export class AgentSpecDto {
  @ApiProperty() modelConfig: string;
  @ApiProperty({ type: [String] }) toolset: string[];
  @ApiPropertyOptional() description?: string;
  @ApiPropertyOptional() displayName?: string;
  @ApiPropertyOptional() systemMessage?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } }) labels?: Record<string, string>;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } }) annotations?: Record<string, string>;
}

export class ChartValuesDto {
  @ApiProperty() modelConfig: string;
  @ApiProperty({ type: [String] }) toolset: string[];
  @ApiProperty() description: string;
  @ApiProperty() displayName: string;
  @ApiProperty() systemMessage: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) labels: Record<string, string>;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) annotations: Record<string, string>;
}

export class ChartRefDto {
  @ApiProperty({ description: 'The chart reference helm installs' }) ref: string;
  @ApiProperty({ nullable: true, type: String }) version: string | null;
}

export class OperationDto {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['create', 'update', 'delete', 'rollback'] }) kind: string;
  @ApiProperty({ enum: ['pending', 'succeeded', 'failed'] }) state: string;
  @ApiProperty() actor: string;
  @ApiProperty({ format: 'date-time' }) startedAt: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) finishedAt: string | null;
  @ApiProperty({ nullable: true, type: Number }) helmRevision: number | null;
  @ApiProperty({ nullable: true, type: String }) errorCode: string | null;
  @ApiProperty({ nullable: true, type: String }) errorMessage: string | null;
}

export class AgentDto {
  @ApiProperty() id: string;
  @ApiProperty() namespace: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['active', 'deleted'] }) state: string;
  @ApiProperty({ type: AgentSpecDto }) spec: AgentSpecDto;
  @ApiProperty({ type: ChartValuesDto, description: 'The chart values helm reports for the applied revision' }) values: ChartValuesDto;
  @ApiProperty({ type: [String], description: 'The declared toolset, exactly as written' }) toolset: string[];
  @ApiProperty({ description: 'The agent-manager revision applied' }) revision: number;
  @ApiProperty({ nullable: true, type: Number, description: 'The helm release revision applied' }) helmRevision: number | null;
  @ApiProperty({ description: 'Changes on every applied write' }) version: number;
  @ApiProperty({ type: ChartRefDto }) chart: ChartRefDto;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) deletedAt: string | null;
  @ApiProperty() createdBy: string;
  @ApiProperty() updatedBy: string;
  @ApiProperty({ type: OperationDto, nullable: true, description: 'The latest write on this agent (in flight, failed or done)' }) lastOperation: OperationDto | null;
}

export class AgentPageDto {
  @ApiProperty({ type: [AgentDto] }) items: AgentDto[];
  @ApiProperty({ nullable: true, type: String, description: 'Pass as cursor for the next page; null on the last page' }) nextCursor: string | null;
}

export class CreateResultDto {
  @ApiProperty() dryRun: boolean;
  @ApiProperty({ type: AgentDto, nullable: true, description: 'The created agent; null on a dry run' }) agent: AgentDto | null;
  @ApiProperty({ type: ChartValuesDto, description: 'The chart values written (or that would be)' }) values: ChartValuesDto;
  @ApiProperty({ description: 'The manifests helm renders for these values (YAML)' }) manifests: string;
  @ApiProperty({ type: [ProblemDto], description: 'Non-blocking hints, e.g. a preset name close to a shipped one' }) warnings: ProblemDto[];
}

export class UpdateResultDto {
  @ApiProperty() dryRun: boolean;
  @ApiProperty({ description: 'False when the update changed nothing (no helm run, no revision)' }) changed: boolean;
  @ApiProperty({ type: ChartValuesDto }) before: ChartValuesDto;
  @ApiProperty({ type: ChartValuesDto }) after: ChartValuesDto;
  @ApiProperty({ type: AgentDto }) agent: AgentDto;
  @ApiProperty({ description: 'The manifests helm renders for the values after (YAML)' }) manifests: string;
  @ApiProperty({ type: [ProblemDto] }) warnings: ProblemDto[];
}

export class DeleteResultDto {
  @ApiProperty() dryRun: boolean;
  @ApiProperty({ type: AgentDto, description: 'The agent removed (kept in the store as deleted, with its history)' }) deleted: AgentDto;
  @ApiProperty({ description: 'Whether a helm release was uninstalled (false when it was already gone or on a dry run)' }) releaseRemoved: boolean;
}

export class RollbackResultDto {
  @ApiProperty() dryRun: boolean;
  @ApiProperty({ description: 'The revision whose values were restored' }) rolledBackTo: number;
  @ApiProperty({ type: ChartValuesDto }) before: ChartValuesDto;
  @ApiProperty({ type: ChartValuesDto }) after: ChartValuesDto;
  @ApiProperty({ type: AgentDto }) agent: AgentDto;
}

export class ValidateResultDto {
  @ApiProperty({ description: 'True when the write would be accepted' }) valid: boolean;
  @ApiProperty({ type: [ProblemDto] }) violations: ProblemDto[];
  @ApiProperty({ type: [ProblemDto] }) warnings: ProblemDto[];
  @ApiProperty({ nullable: true, type: String, description: 'The manifests helm renders (YAML); null when the input could not be rendered' }) manifests: string | null;
}

export class RevisionDto {
  @ApiProperty() revision: number;
  @ApiProperty({ nullable: true, type: Number }) helmRevision: number | null;
  @ApiProperty({ enum: ['create', 'update', 'rollback'] }) kind: string;
  @ApiProperty({ nullable: true, type: Number, description: 'For a rollback, the revision restored' }) rolledBackTo: number | null;
  @ApiProperty({ description: 'Who applied it' }) createdBy: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: AgentSpecDto }) spec: AgentSpecDto;
  @ApiProperty({ type: ChartValuesDto }) values: ChartValuesDto;
}

export class RevisionListDto {
  @ApiProperty() namespace: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'The revision currently applied' }) current: number;
  @ApiProperty({ type: [RevisionDto] }) items: RevisionDto[];
}

export class ConditionDto {
  @ApiProperty() type: string;
  @ApiProperty() status: string;
  @ApiPropertyOptional() reason?: string;
  @ApiPropertyOptional() message?: string;
}

export class StatusDto {
  @ApiProperty() namespace: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['ready', 'progressing', 'failed', 'unknown'] }) verdict: string;
  @ApiProperty({ description: 'One sentence saying why' }) message: string;
  @ApiProperty({ nullable: true, type: String, description: 'The helm release status, null when there is no release' }) releaseStatus: string | null;
  @ApiProperty({ nullable: true, type: Number }) releaseRevision: number | null;
  @ApiProperty({ type: [ConditionDto] }) conditions: ConditionDto[];
  @ApiProperty({ type: [String], description: 'What differs between the store, the release and the live object; empty when nothing drifted' }) drift: string[];
}

export class PresetDto {
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['muster', 'platform'], description: 'Built into Muster, or shipped by the platform chart' }) source: string;
}

export class ToolsetLimitsDto {
  @ApiProperty() maxSelectors: number;
  @ApiProperty() selectorPattern: string;
  @ApiProperty({ type: [String] }) reservedPrefixes: string[];
  @ApiProperty({ type: [String] }) presetOnlyPrefixes: string[];
}

export class HelmInfoDto {
  @ApiProperty({ nullable: true, type: String }) version: string | null;
  @ApiProperty({ nullable: true, type: Number }) major: number | null;
  @ApiProperty() binary: string;
}

export class ChartInfoDto {
  @ApiProperty() ref: string;
  @ApiProperty({ nullable: true, type: String }) version: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'sha256 of values.schema.json for a local chart' }) valuesSchemaDigest: string | null;
}

export class CapabilitiesDto {
  @ApiProperty({ description: 'Writes take dryRun' }) dryRun: boolean;
  @ApiProperty({ description: 'validate_agent / POST /api/v1/agents/validate' }) validate: boolean;
  @ApiProperty() rollback: boolean;
  @ApiProperty({ description: 'Status folds the release, the live Agent and drift' }) status: boolean;
  @ApiProperty({ description: 'MCP tools at /mcp and over stdio' }) mcp: boolean;
  @ApiProperty({ description: 'Writes take Idempotency-Key (REST) / requestId (MCP)' }) idempotentWrites: boolean;
  @ApiProperty({ description: 'Writes take If-Match (REST) / expectedVersion (MCP); agents carry a version (ETag)' }) optimisticConcurrency: boolean;
  @ApiProperty({ description: 'One writer per agent across replicas; a second one gets 409' }) perAgentLock: boolean;
}

export class InfoDto {
  @ApiProperty() service: string;
  @ApiProperty() version: string;
  @ApiProperty({ type: ChartInfoDto }) chart: ChartInfoDto;
  @ApiProperty({ type: HelmInfoDto }) helm: HelmInfoDto;
  @ApiProperty({ enum: ['sqlite', 'postgresql'] }) store: string;
  @ApiProperty({ type: CapabilitiesDto }) capabilities: CapabilitiesDto;
  @ApiProperty({ type: ToolsetLimitsDto }) toolsetLimits: ToolsetLimitsDto;
  @ApiProperty({ type: [PresetDto] }) presets: PresetDto[];
}
