import { ApiProperty, ApiPropertyOptional } from '@app/common';
import { ProblemDto } from '@app/doors';

export { ProblemDto };

const EXAMPLE = {
  modelConfig: 'default-model-config',
  toolset: ['preset:read-only', 'workflow:incident-triage'],
  description: 'Helps the on-call engineer triage incidents',
  displayName: 'Incident helper',
  systemMessage: 'You help the on-call engineer triage incidents. Read before you act; never change anything.',
  labels: { team: 'sre' },
  annotations: { 'example.com/runbook': 'https://runbooks.example.com/incident-triage' },
  date: '2026-03-14T09:26:53.000Z',
  actor: 'alice@example.com',
} as const;

/** The manifests helm renders for the example values (YAML text). */
export const MANIFESTS_EXAMPLE = `---
# Source: agent/templates/agent.yaml
apiVersion: kagent.dev/v1alpha2
kind: Agent
metadata:
  name: "incident-helper"
  namespace: "agents"
  labels:
    app.kubernetes.io/instance: incident-helper
    app.kubernetes.io/managed-by: Helm
    app.kubernetes.io/name: agent
    app.kubernetes.io/version: 0.6.0
    helm.sh/chart: agent-0.6.0
    team: sre
  annotations:
    agent-manager.giantswarm.io/display-name: Incident helper
    example.com/runbook: https://runbooks.example.com/incident-triage
spec:
  type: Declarative
  description: "Helps the on-call engineer triage incidents"
  declarative:
    systemMessage: "You help the on-call engineer triage incidents. Read before you act; never change anything."
    modelConfig: "default-model-config"
    tools:
      - type: McpServer
        mcpServer:
          kind: "RemoteMCPServer"
          apiGroup: "kagent.dev"
          name: "muster"
          toolNames: ["list_tools","filter_tools","describe_tool","call_tool","list_core_tools","list_resources","get_resource","list_prompts","get_prompt"]
        headersFrom:
          - name: X-Muster-Toolset
            value: "preset:read-only,workflow:incident-triage"
`;
const MANIFESTS_DOC = 'YAML text: the Kubernetes objects helm renders for these values, as documents separated by "---"';
const STRING_MAP = { type: 'object', additionalProperties: { type: 'string' } } as const;

export class AgentSpecDto {
  @ApiProperty({ example: EXAMPLE.modelConfig }) modelConfig: string;
  @ApiProperty({ type: [String], example: EXAMPLE.toolset }) toolset: string[];
  @ApiPropertyOptional({ example: EXAMPLE.description }) description?: string;
  @ApiPropertyOptional({ example: EXAMPLE.displayName }) displayName?: string;
  @ApiPropertyOptional({ example: EXAMPLE.systemMessage }) systemMessage?: string;
  @ApiPropertyOptional({ ...STRING_MAP, example: EXAMPLE.labels }) labels?: Record<string, string>;
  @ApiPropertyOptional({ ...STRING_MAP, example: EXAMPLE.annotations }) annotations?: Record<string, string>;
}

export class ChartValuesDto {
  @ApiProperty({ example: EXAMPLE.modelConfig }) modelConfig: string;
  @ApiProperty({ type: [String], example: EXAMPLE.toolset }) toolset: string[];
  @ApiProperty({ example: EXAMPLE.description }) description: string;
  @ApiProperty({ example: EXAMPLE.displayName }) displayName: string;
  @ApiProperty({ example: EXAMPLE.systemMessage }) systemMessage: string;
  @ApiProperty({ ...STRING_MAP, example: EXAMPLE.labels }) labels: Record<string, string>;
  @ApiProperty({ ...STRING_MAP, example: EXAMPLE.annotations }) annotations: Record<string, string>;
}

/** The chart an agent's release was written with, by name and version (never a path or URL). */
export class AgentChartDto {
  @ApiProperty({ description: "The chart's name (its Chart.yaml)", example: 'agent' }) name: string;
  @ApiProperty({ nullable: true, type: String, description: "The chart's version; null for an agent last written before versions were recorded", example: '0.6.0' })
  version: string | null;
}

export class OperationDto {
  @ApiProperty({ example: 'c5b1f0e2-7f43-4d8e-9a51-2b7d0c9e4f11' }) id: string;
  @ApiProperty({ enum: ['create', 'update', 'delete', 'rollback'], example: 'create' }) kind: string;
  @ApiProperty({ enum: ['pending', 'succeeded', 'failed'], example: 'succeeded' }) state: string;
  @ApiProperty({ example: EXAMPLE.actor }) actor: string;
  @ApiProperty({ format: 'date-time', example: EXAMPLE.date }) startedAt: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: EXAMPLE.date }) finishedAt: string | null;
  @ApiProperty({ nullable: true, type: 'integer', example: 1 }) helmRevision: number | null;
  @ApiProperty({ nullable: true, type: String, example: null }) errorCode: string | null;
  @ApiProperty({ nullable: true, type: String, example: null }) errorMessage: string | null;
}

export class AgentOriginDto {
  @ApiProperty({ description: 'The blueprint the agent was created from (its MCP tool name)', example: 'incident_helper' }) blueprint: string;
  @ApiProperty({ type: 'integer', description: "The blueprint version the agent's values come from", example: 2 }) version: number;
}

export class AgentDto {
  @ApiProperty({ example: '0b7e6c1a-3f0d-4c55-8d2e-6a9f1e2b3c4d' }) id: string;
  @ApiProperty({ example: 'agents' }) namespace: string;
  @ApiProperty({ example: 'incident-helper' }) name: string;
  @ApiProperty({ enum: ['active', 'deleted'], example: 'active' }) state: string;
  @ApiProperty({ type: AgentSpecDto }) spec: AgentSpecDto;
  @ApiProperty({ type: ChartValuesDto, description: 'The chart values helm reports for the applied revision' }) values: ChartValuesDto;
  @ApiProperty({ type: [String], description: 'The declared toolset, exactly as written', example: EXAMPLE.toolset }) toolset: string[];
  @ApiProperty({ type: 'integer', description: 'The agent-manager revision applied', example: 1 }) revision: number;
  @ApiProperty({ nullable: true, type: 'integer', description: 'The helm release revision applied', example: 1 }) helmRevision: number | null;
  @ApiProperty({ type: 'integer', description: 'Changes on every applied write; the ETag', example: 1 }) version: number;
  @ApiProperty({ type: AgentChartDto }) chart: AgentChartDto;
  @ApiProperty({ format: 'date-time', example: EXAMPLE.date }) createdAt: string;
  @ApiProperty({ format: 'date-time', example: EXAMPLE.date }) updatedAt: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: null }) deletedAt: string | null;
  @ApiProperty({ example: EXAMPLE.actor }) createdBy: string;
  @ApiProperty({ example: EXAMPLE.actor }) updatedBy: string;
  @ApiProperty({ type: OperationDto, nullable: true, description: 'The latest write on this agent (in flight, failed or done)' }) lastOperation: OperationDto | null;
  @ApiProperty({ type: AgentOriginDto, nullable: true, description: 'The blueprint and version the agent was created from (moved by an upgrade); null when created directly' })
  blueprint: AgentOriginDto | null;
}

export class AgentPageDto {
  @ApiProperty({ type: [AgentDto] }) items: AgentDto[];
  @ApiProperty({ nullable: true, type: String, description: 'Pass as cursor for the next page; null on the last page', example: null }) nextCursor: string | null;
}

/** What every create answer carries besides dryRun and agent. */
class CreateAnswerDto {
  @ApiProperty({ type: ChartValuesDto, description: 'The chart values written (or that would be)' }) values: ChartValuesDto;
  @ApiProperty({ description: MANIFESTS_DOC, example: MANIFESTS_EXAMPLE }) manifests: string;
  @ApiProperty({ type: [ProblemDto], description: 'Non-blocking hints, e.g. a preset name close to a shipped one', example: [] }) warnings: ProblemDto[];
}

/** The 201 answer of a create: the agent exists now. */
export class CreatedAgentDto extends CreateAnswerDto {
  @ApiProperty({ enum: [false], description: 'Always false: the agent was created' }) dryRun: false;
  @ApiProperty({ type: AgentDto, description: 'The created agent' }) agent: AgentDto;
}

/** The 200 answer of a create with dryRun: what would be written; nothing was. */
export class CreateDryRunDto extends CreateAnswerDto {
  @ApiProperty({ enum: [true], description: 'Always true: nothing was written' }) dryRun: true;
  @ApiProperty({ type: 'object', additionalProperties: false, nullable: true, enum: [null], description: 'Always null: a dry run creates no agent', example: null }) agent: null;
}

export class ApproverGrantDto {
  @ApiProperty({ description: "The policy's namespace pattern the approver role is bound in", example: 'prod-*' }) pattern: string;
  @ApiProperty({ type: [String], example: ['token:alice'] }) subjects: string[];
  @ApiProperty({ type: [String], example: ['platform-leads'] }) groups: string[];
}

/** What a write that became a proposal carries beside its dry run's answer. */
export class ProposedChangeDto {
  @ApiProperty({ example: 'ch-3b1f0c9a12ab' }) id: string;
  @ApiProperty({ description: 'Where to follow it', example: '/api/v1/changes/ch-3b1f0c9a12ab' }) location: string;
  @ApiProperty({ type: [ApproverGrantDto], description: 'Who may approve it' }) approvers: ApproverGrantDto[];
  @ApiProperty({ type: 'integer', example: 1 }) required: number;
  @ApiProperty({ description: 'A unified diff of the rendered manifests' }) diff: string;
  @ApiProperty({ format: 'date-time' }) expiresAt: string;
}

const PENDING_DOC = 'pending_approval: an approval rule made this write a proposal; nothing was applied (the rest of the answer is its dry run). Absent: the write ran as asked.';
const CHANGE_DOC = 'The proposal, when status is pending_approval: approve it with approve_change (POST /api/v1/changes/{id}/approve)';

/** Either create answer (the MCP tool's output): agent is null exactly when dryRun is true. */
export class CreateResultDto extends CreateAnswerDto {
  @ApiProperty({ description: 'True when nothing was written' }) dryRun: boolean;
  @ApiProperty({ type: AgentDto, nullable: true, description: 'The created agent; null on a dry run' }) agent: AgentDto | null;
  @ApiPropertyOptional({ enum: ['pending_approval'], description: PENDING_DOC }) status?: 'pending_approval';
  @ApiPropertyOptional({ type: ProposedChangeDto, description: CHANGE_DOC }) change?: ProposedChangeDto;
}

export class UpdateResultDto {
  @ApiProperty() dryRun: boolean;
  @ApiProperty({ description: 'False when the update changed nothing (no helm run, no revision)' }) changed: boolean;
  @ApiProperty({ type: ChartValuesDto }) before: ChartValuesDto;
  @ApiProperty({ type: ChartValuesDto }) after: ChartValuesDto;
  @ApiProperty({ type: AgentDto }) agent: AgentDto;
  @ApiProperty({ description: MANIFESTS_DOC, example: MANIFESTS_EXAMPLE }) manifests: string;
  @ApiProperty({ type: [ProblemDto], example: [] }) warnings: ProblemDto[];
  @ApiPropertyOptional({ enum: ['pending_approval'], description: PENDING_DOC }) status?: 'pending_approval';
  @ApiPropertyOptional({ type: ProposedChangeDto, description: CHANGE_DOC }) change?: ProposedChangeDto;
}

export class DeleteResultDto {
  @ApiProperty() dryRun: boolean;
  @ApiProperty({ type: AgentDto, description: 'The agent removed (kept in the store as deleted, with its history)' }) deleted: AgentDto;
  @ApiProperty({ description: 'Whether a helm release was uninstalled (false when it was already gone or on a dry run)' }) releaseRemoved: boolean;
  @ApiPropertyOptional({ enum: ['pending_approval'], description: PENDING_DOC }) status?: 'pending_approval';
  @ApiPropertyOptional({ type: ProposedChangeDto, description: CHANGE_DOC }) change?: ProposedChangeDto;
}

export class RollbackResultDto {
  @ApiProperty() dryRun: boolean;
  @ApiProperty({ type: 'integer', description: 'The revision whose values were restored', example: 1 }) rolledBackTo: number;
  @ApiProperty({ type: ChartValuesDto }) before: ChartValuesDto;
  @ApiProperty({ type: ChartValuesDto }) after: ChartValuesDto;
  @ApiProperty({ type: AgentDto }) agent: AgentDto;
  @ApiPropertyOptional({ enum: ['pending_approval'], description: PENDING_DOC }) status?: 'pending_approval';
  @ApiPropertyOptional({ type: ProposedChangeDto, description: CHANGE_DOC }) change?: ProposedChangeDto;
}

export class ValidateResultDto {
  @ApiProperty({ description: 'True when the write would be accepted' }) valid: boolean;
  @ApiProperty({ type: [ProblemDto], example: [] }) violations: ProblemDto[];
  @ApiProperty({ type: [ProblemDto], example: [] }) warnings: ProblemDto[];
  @ApiProperty({ nullable: true, type: String, description: `${MANIFESTS_DOC}; null when the input could not be rendered`, example: MANIFESTS_EXAMPLE }) manifests: string | null;
}

export class RevisionDto {
  @ApiProperty({ type: 'integer', example: 1 }) revision: number;
  @ApiProperty({ nullable: true, type: 'integer', example: 1 }) helmRevision: number | null;
  @ApiProperty({ enum: ['create', 'update', 'rollback'], example: 'create' }) kind: string;
  @ApiProperty({ nullable: true, type: 'integer', description: 'For a rollback, the revision restored', example: null }) rolledBackTo: number | null;
  @ApiProperty({ description: 'Who applied it', example: EXAMPLE.actor }) createdBy: string;
  @ApiProperty({ format: 'date-time', example: EXAMPLE.date }) createdAt: string;
  @ApiProperty({ type: AgentSpecDto }) spec: AgentSpecDto;
  @ApiProperty({ type: ChartValuesDto }) values: ChartValuesDto;
  @ApiProperty({ type: 'integer', description: 'Which agent of this name the revision belongs to: 1 for the first ever created, counting deleted ones', example: 1 }) life: number;
  @ApiProperty({ description: 'The id of the agent of that life', example: '0b7e6c1a-3f0d-4c55-8d2e-6a9f1e2b3c4d' }) agentId: string;
}

/** One agent that had the name: the current one, or an earlier one since deleted. */
export class AgentLifeDto {
  @ApiProperty({ type: 'integer', description: '1 for the first agent of this name, counting deleted ones', example: 1 }) life: number;
  @ApiProperty({ example: '0b7e6c1a-3f0d-4c55-8d2e-6a9f1e2b3c4d' }) agentId: string;
  @ApiProperty({ enum: ['active', 'deleted'], example: 'active' }) state: string;
  @ApiProperty({ format: 'date-time', example: EXAMPLE.date }) createdAt: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: null }) deletedAt: string | null;
  @ApiProperty({ type: 'integer', description: 'Its last revision', example: 1 }) revisions: number;
}

export class RevisionListDto {
  @ApiProperty({ example: 'agents' }) namespace: string;
  @ApiProperty({ example: 'incident-helper' }) name: string;
  @ApiProperty({
    nullable: true,
    type: 'integer',
    description: 'The revision currently applied; null only with life=all when no agent of this name exists now',
    example: 1,
  })
  current: number | null;
  @ApiProperty({ type: [AgentLifeDto], description: 'Every agent that had this name, oldest first (the current one last while it exists)' }) lives: AgentLifeDto[];
  @ApiProperty({ type: [RevisionDto], description: 'Oldest first; with life=all, life by life' }) items: RevisionDto[];
}

/** What a changed field holds: a text, a list (the toolset, a blueprint's open arguments) or a map (a blueprint's fixed labels). */
const FIELD_VALUE = [{ type: 'string' }, { type: 'array', items: { type: 'string' } }, { type: 'object', additionalProperties: true }];

/** One field that differs between two sides of a diff (domain/spec-diff.ts): absent before (added) or after (removed). */
export class FieldChangeDto {
  @ApiProperty({ description: 'The field, dotted for a key of labels or annotations', example: 'labels.team' }) path: string;
  @ApiPropertyOptional({ description: 'Its value before (absent: the field was not set)', oneOf: FIELD_VALUE, example: 'sre' }) before?: unknown;
  @ApiPropertyOptional({ description: 'Its value after (absent: the field is not set)', oneOf: FIELD_VALUE, example: 'platform' }) after?: unknown;
}

/** One side of a revision diff: a stored revision, or the live object on the cluster. */
export class RevisionDiffSideDto {
  @ApiProperty({ description: 'A stored revision, the live object read from the cluster, or none (before the first revision: the diff is the whole create)', enum: ['revision', 'live', 'none'], example: 'revision' }) source: string;
  @ApiProperty({ nullable: true, type: 'integer', description: "The revision's life (1 for the first agent of this name); for live, the current agent's, null when none exists", example: 1 }) life: number | null;
  @ApiProperty({ nullable: true, type: 'integer', description: 'The revision; null for live', example: 1 }) revision: number | null;
  @ApiProperty({ nullable: true, type: AgentSpecDto, description: "The spec of that side: the revision's, or the one the live object says (its fields read back as the chart writes them); null when there is no object (a deleted agent)" })
  spec: AgentSpecDto | null;
  @ApiProperty({ nullable: true, type: AgentChartDto, description: 'The chart its manifest was rendered with; null for live' }) chart: AgentChartDto | null;
}

export class RevisionDiffDto {
  @ApiProperty({ example: 'agents' }) namespace: string;
  @ApiProperty({ example: 'incident-helper' }) name: string;
  @ApiProperty({ type: RevisionDiffSideDto }) from: RevisionDiffSideDto;
  @ApiProperty({ type: RevisionDiffSideDto }) to: RevisionDiffSideDto;
  @ApiProperty({ description: 'Whether the spec or the manifest differs', example: true }) changed: boolean;
  @ApiProperty({ type: [FieldChangeDto], description: 'The spec fields that differ, from → to, fields sorted' }) fields: FieldChangeDto[];
  @ApiProperty({
    description:
      "Unified diff of the rendered manifests ('' when they are the same): each revision's chart values rendered with helm template and the chart that revision used; against live, the agent's object in the revision's manifest and the live one, at the fields the chart sets",
    example: '--- agents/incident-helper (revision 1)\n+++ agents/incident-helper (live)\n@@ -8,1 +8,1 @@\n-    team: sre\n+    team: platform\n',
  })
  manifestDiff: string;
}

export class ConditionDto {
  @ApiProperty({ example: 'Accepted' }) type: string;
  @ApiProperty({ enum: ['True', 'False', 'Unknown'], example: 'True' }) status: string;
  @ApiPropertyOptional({ example: 'AgentReconciled' }) reason?: string;
  @ApiPropertyOptional({ example: 'Agent reconciled successfully' }) message?: string;
}

export class StatusDto {
  @ApiProperty({ example: 'agents' }) namespace: string;
  @ApiProperty({ example: 'incident-helper' }) name: string;
  @ApiProperty({ enum: ['ready', 'progressing', 'failed', 'unknown'], example: 'ready' }) verdict: string;
  @ApiProperty({ description: 'One sentence saying why', example: 'release deployed (revision 1) and the Agent is Accepted and Ready' }) message: string;
  @ApiProperty({ nullable: true, type: String, description: 'The helm release status, null when there is no release', example: 'deployed' }) releaseStatus: string | null;
  @ApiProperty({ nullable: true, type: 'integer', example: 1 }) releaseRevision: number | null;
  @ApiProperty({ type: [ConditionDto] }) conditions: ConditionDto[];
  @ApiProperty({ type: [String], description: 'What differs between the store, the release and the live object; empty when nothing drifted', example: [] }) drift: string[];
}

export class PresetDto {
  @ApiProperty({ example: 'read-only' }) name: string;
  @ApiProperty({ enum: ['muster', 'platform', 'configured'], description: 'Built into Muster, shipped by the platform chart (listed while MUSTER_PRESETS holds no presets), or read from MUSTER_PRESETS (list_toolset_presets has their descriptions)', example: 'muster' }) source: string;
}

export class ToolsetLimitsDto {
  @ApiProperty({ type: 'integer', example: 32 }) maxSelectors: number;
  @ApiProperty({ type: 'integer', description: 'Characters (code points) one selector may have', example: 256 }) maxSelectorLength: number;
  @ApiProperty({ type: 'integer', description: 'Bytes (UTF-8) of the selectors joined by commas: the X-Muster-Toolset header', example: 4096 }) maxToolsetHeaderBytes: number;
  @ApiProperty({ example: '^(preset|server|workflow|tool):[^\\s,]+$' }) selectorPattern: string;
  @ApiProperty({ type: [String], example: ['toolset'] }) reservedPrefixes: string[];
  @ApiProperty({ type: [String], example: ['label'] }) presetOnlyPrefixes: string[];
}

export class HelmInfoDto {
  @ApiProperty({ nullable: true, type: String, example: 'v4.0.1' }) version: string | null;
  @ApiProperty({ nullable: true, type: 'integer', example: 4 }) major: number | null;
  @ApiProperty({ example: '/opt/agent-manager/node_modules/.cache/agent-manager/helm' }) binary: string;
}

/** The chart writes use at this moment: AGENT_CHART, or the bundled chart while an OCI AGENT_CHART cannot be pulled. */
export class ChartInEffectDto {
  @ApiProperty({ description: 'AGENT_CHART, or the bundled chart while it stands in', example: 'oci://registry.example.com/charts/agent' }) ref: string;
  @ApiProperty({ nullable: true, type: String, description: "The chart's name (its Chart.yaml); null for an OCI chart no write has pulled yet", example: 'agent' }) name: string | null;
  @ApiProperty({ nullable: true, type: String, example: '0.6.1' }) version: string | null;
}

/** Why the bundled chart stands in for an OCI AGENT_CHART, and when a write tries the registry again. */
export class ChartFallbackDto {
  @ApiProperty({ description: 'Why the configured chart could not be pulled (helm\'s message)', example: 'failed to do request: dial tcp 10.0.0.5:443: connect: connection refused' }) reason: string;
  @ApiProperty({ description: 'The first write from this time on pulls the configured chart again', format: 'date-time', example: '2025-01-01T12:01:00.000Z' }) retryAfter: string;
}

export class ChartInfoDto {
  @ApiProperty({ description: 'AGENT_CHART: a local path or an oci:// reference', example: '/opt/agent-manager/charts/agent' }) ref: string;
  @ApiProperty({ nullable: true, type: String, description: 'AGENT_CHART_VERSION', example: '0.6.0' }) version: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'sha256 of values.schema.json of the chart in effect (null for an OCI chart not pulled yet)', example: 'sha256:3b1f0c9a5e7d2b4c6a8e0f1d3c5b7a9e2d4f6b8a0c1e3d5f7a9b2c4d6e8f0a1b' })
  valuesSchemaDigest: string | null;
  @ApiProperty({ type: ChartInEffectDto, description: 'The chart writes use now' }) inEffect: ChartInEffectDto;
  @ApiProperty({ type: ChartFallbackDto, nullable: true, description: 'Set while the bundled chart stands in for an OCI AGENT_CHART the registry did not give' }) fallback: ChartFallbackDto | null;
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

export class ClusterInfoDto {
  @ApiProperty({ enum: ['not_configured', 'unreachable', 'reachable', 'unknown'], example: 'reachable', description: 'Whether helm has a cluster to write to' })
  state: 'not_configured' | 'unreachable' | 'reachable' | 'unknown';
  @ApiProperty({
    example: 'KUBECONFIG=/etc/agent-manager/kubeconfig',
    description: 'Where the cluster configuration came from; with its path to admins, by kind to others (KUBECONFIG, ~/.kube/config, the in-cluster ServiceAccount, none)',
  })
  source: string;
  @ApiProperty({ nullable: true, type: String, example: 'https://10.0.0.1:6443', description: "The API server's address, when configured: to admins only (null for others)" })
  server: string | null;
  @ApiProperty({ nullable: true, type: String, example: null, description: 'Why writes cannot reach the cluster; null when they can' }) reason: string | null;
}

export class InfoDto {
  @ApiProperty({ example: 'agent-manager' }) service: string;
  @ApiProperty({ example: '0.1.0' }) version: string;
  @ApiProperty({ type: ChartInfoDto }) chart: ChartInfoDto;
  @ApiProperty({ type: HelmInfoDto }) helm: HelmInfoDto;
  @ApiProperty({ enum: ['sqlite', 'postgresql'], example: 'sqlite' }) store: string;
  @ApiProperty({ type: CapabilitiesDto }) capabilities: CapabilitiesDto;
  @ApiProperty({ type: ToolsetLimitsDto }) toolsetLimits: ToolsetLimitsDto;
  @ApiProperty({ type: [PresetDto] }) presets: PresetDto[];
  @ApiProperty({ type: ClusterInfoDto }) cluster: ClusterInfoDto;
}

/** One entry of the audit trail: a write or a refusal by authorization. */
export class AuditedOperationDto {
  @ApiProperty({ example: 'c5b1f0e2-7f43-4d8e-9a51-2b7d0c9e4f11' }) id: string;
  @ApiProperty({ description: 'The operation, named as the MCP tools are', example: 'create_agent' }) operation: string;
  @ApiProperty({ description: 'The target namespace ("*" for a refusal without one)', example: 'agents' }) namespace: string;
  @ApiProperty({ description: 'The agent name ("" when the operation names none)', example: 'incident-helper' }) name: string;
  @ApiProperty({ enum: ['pending', 'succeeded', 'failed', 'refused', 'proposed'], description: 'proposed: a write an approval rule made a proposal (docs/approvals.md)', example: 'succeeded' }) outcome: string;
  @ApiProperty({ description: 'Who acted: the verified subject when authentication is on', example: 'token:ci-platform' }) actor: string;
  @ApiProperty({ nullable: true, type: String, description: 'The verified principal', example: 'token:ci-platform' }) subject: string | null;
  @ApiProperty({ nullable: true, type: String, enum: ['oidc', 'token', 'local', 'anonymous'], example: 'token' }) authMethod: string | null;
  @ApiProperty({ nullable: true, type: String, enum: ['rest', 'mcp-http', 'mcp-stdio', 'internal'], example: 'rest' }) door: string | null;
  @ApiProperty({ nullable: true, type: String, description: "The MCP client's name from initialize", example: null }) client: string | null;
  @ApiProperty({ nullable: true, type: String, example: '2b7d0c9e-4f11-4d8e-9a51-c5b1f0e27f43' }) requestId: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'X-Actor as sent, a free-text note beside the verified subject', example: 'release pipeline #812' }) actorNote: string | null;
  @ApiProperty({ nullable: true, type: String, example: null }) errorCode: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: "Why it failed or was refused; a refusal names the principal's groups and grants only to that principal and to admins",
    example: null,
  })
  errorMessage: string | null;
  @ApiProperty({
    type: 'integer',
    description: 'How many refusals the entry stands for: the refusals of one principal, operation and namespace in one minute are one entry (finishedAt: the last); 1 for a write',
    example: 1,
  })
  count: number;
  @ApiProperty({ format: 'date-time', example: '2026-03-14T09:26:53.000Z' }) startedAt: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: '2026-03-14T09:26:58.000Z' }) finishedAt: string | null;
}

export class OperationPageDto {
  @ApiProperty({ type: [AuditedOperationDto] }) items: AuditedOperationDto[];
  @ApiProperty({ nullable: true, type: String, description: 'Pass as cursor for the next (older) page; null on the last page', example: null }) nextCursor: string | null;
}
