import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsISO8601, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';
import { MAX_INLINE_SELECTORS, MAX_SELECTOR_LENGTH, MAX_TOOLSET_HEADER_BYTES, SELECTOR_PATTERN } from '@app/toolset';
import { ApiProperty, ApiPropertyOptional } from '@app/common';
import { IsLabelSelector, IsMetadataMap, IsToolset, MaxCodePoints, Optional, WholeNumberText } from '@app/doors';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_MESSAGE = (field: string, max: number) =>
  `${field} must be a DNS-1123 label: lower-case letters, digits and "-", starting and ending with a letter or digit, at most ${max} characters`;

export const SYSTEM_MESSAGE_MAX = 20_000;

/** The OpenAPI/JSON Schema of an agent's name and namespace: what the class-validator rules below enforce. */
export const AGENT_NAME_SCHEMA = { type: 'string', pattern: DNS1123_LABEL.source, minLength: 1, maxLength: 53, example: 'incident-helper' } as const;
export const NAMESPACE_SCHEMA = { type: 'string', pattern: DNS1123_LABEL.source, minLength: 1, maxLength: 63, example: 'agents' } as const;

/** dryRun: answer as the write would, write nothing. */
function DryRun(): PropertyDecorator {
  return (target: object, key: string | symbol) => {
    ApiPropertyOptional({ description: 'Answer as the write would, write nothing', default: false })(target, key);
    Optional()(target, key);
    IsBoolean()(target, key);
  };
}

/** name: the agent and helm release name, chosen by the caller. */
function AgentName(description = 'The agent and helm release name, chosen by the caller (DNS-1123 label, at most 53 characters)'): PropertyDecorator {
  return (target: object, key: string | symbol) => {
    ApiProperty({ description, ...AGENT_NAME_SCHEMA })(target, key);
    IsString()(target, key);
    Matches(DNS1123_LABEL, { message: DNS1123_MESSAGE('name', 53) })(target, key);
    MaxLength(53, { message: DNS1123_MESSAGE('name', 53) })(target, key);
  };
}

/** namespace: the agent's Kubernetes namespace. */
function AgentNamespace(): PropertyDecorator {
  return (target: object, key: string | symbol) => {
    ApiProperty({ description: 'The Kubernetes namespace (DNS-1123 label, at most 63 characters)', ...NAMESPACE_SCHEMA })(target, key);
    IsString()(target, key);
    Matches(DNS1123_LABEL, { message: DNS1123_MESSAGE('namespace', 63) })(target, key);
    MaxLength(63, { message: DNS1123_MESSAGE('namespace', 63) })(target, key);
  };
}

/**
 * modelConfig: the kagent ModelConfig the agent uses. Its form is left to the cluster (kagent's
 * CRD checks it, and the refusal comes back as invalid_request with the server's words).
 */
function ModelConfig(required: boolean): PropertyDecorator {
  return (target: object, key: string | symbol) => {
    const doc = { description: 'Name of the kagent ModelConfig the agent uses', example: 'default-model-config', minLength: 1, maxLength: 253 };
    (required ? ApiProperty(doc) : ApiPropertyOptional(doc))(target, key);
    if (!required) Optional()(target, key);
    IsString()(target, key);
    MinLength(1)(target, key);
    MaxLength(253)(target, key);
  };
}

const REQUEST_ID_DOC =
  'Makes the write idempotent: a retry with the same requestId and the same arguments gets the first answer without a second helm run (REST: the Idempotency-Key header)';
const EXPECTED_VERSION_DOC =
  "Refuse the write with precondition_failed unless the agent's version is still this one (REST: the If-Match header with the ETag)";

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
export const IDEMPOTENCY_KEY_PATTERN = IDEMPOTENCY_KEY.source;

/** requestId: the idempotency key of a write. */
function RequestId(): PropertyDecorator {
  return (target: object, key: string | symbol) => {
    // no example: a fixed key copied from the docs would turn the next user's write into a 409
    ApiPropertyOptional({ description: REQUEST_ID_DOC, pattern: IDEMPOTENCY_KEY.source, minLength: 1, maxLength: 255 })(target, key);
    Optional()(target, key);
    IsString()(target, key);
    Matches(IDEMPOTENCY_KEY, { message: 'requestId must be 1 to 255 visible ASCII characters, e.g. a UUID' })(target, key);
  };
}

/** Versions and revisions are the store's 32-bit integers (PostgreSQL INTEGER). */
const MAX_COUNTER = 2_147_483_647;

/** expectedVersion: optimistic concurrency on an existing agent. */
function ExpectedVersion(): PropertyDecorator {
  return (target: object, key: string | symbol) => {
    ApiPropertyOptional({ description: EXPECTED_VERSION_DOC, type: 'integer', minimum: 1, maximum: MAX_COUNTER, example: 3 })(target, key);
    Optional()(target, key);
    IsInt({ message: 'expectedVersion must be a whole number: the version from get_agent' })(target, key);
    Min(1)(target, key);
    Max(MAX_COUNTER, { message: 'expectedVersion is beyond any version an agent reaches: send the version from get_agent' })(target, key);
  };
}

/** A toolset as the schema states it; the grammar of libs/toolset enforces it (and says more, e.g. toolset: and label: are refused). */
const TOOLSET_SCHEMA = {
  type: 'array',
  items: { type: 'string', pattern: SELECTOR_PATTERN.source, maxLength: MAX_SELECTOR_LENGTH },
  minItems: 1,
  maxItems: MAX_INLINE_SELECTORS,
  example: ['preset:read-only', 'workflow:incident-triage'],
} as const;

const TOOLSET_DOC =
  `Selectors that bound which Muster tools the agent may use, written to the chart exactly as given. ` +
  `Each matches ^(preset|server|workflow|tool):[^\\s,]+$ with no invisible character (control, zero-width, bidirectional), at most ${MAX_SELECTOR_LENGTH} characters; ` +
  `1 to ${MAX_INLINE_SELECTORS} items, at most ${MAX_TOOLSET_HEADER_BYTES} bytes joined by commas; ["preset:none"] is a chat-only agent.`;

/** The optional details of an agent, the same on create, update and validate. */
class AgentDetailsDto {
  @ApiPropertyOptional({ description: "The Agent's spec.description", maxLength: 2000, example: 'Helps the on-call engineer triage incidents' })
  @Optional()
  @IsString()
  @MaxCodePoints(2000)
  description?: string;

  @ApiPropertyOptional({ description: 'A human-friendly name, written as an annotation', maxLength: 253, example: 'Incident helper' })
  @Optional()
  @IsString()
  @MaxCodePoints(253)
  displayName?: string;

  @ApiPropertyOptional({
    description: 'The system prompt of the agent',
    maxLength: SYSTEM_MESSAGE_MAX,
    example: 'You help the on-call engineer triage incidents. Read before you act; never change anything.',
  })
  @Optional()
  @IsString()
  @MaxCodePoints(SYSTEM_MESSAGE_MAX)
  systemMessage?: string;

  @ApiPropertyOptional({
    description: 'Labels on the Agent object (replaced whole on update); the chart sets app.kubernetes.io/* and helm.sh/chart itself',
    type: 'object',
    additionalProperties: { type: 'string', maxLength: 63 },
    example: { team: 'sre' },
  })
  @Optional()
  @IsMetadataMap('labels')
  labels?: Record<string, string>;

  @ApiPropertyOptional({
    description: 'Annotations on the Agent object (replaced whole on update); helm.sh/*, meta.helm.sh/* and agent-manager.giantswarm.io/* are refused',
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { 'example.com/runbook': 'https://runbooks.example.com/incident-triage' },
  })
  @Optional()
  @IsMetadataMap('annotations')
  annotations?: Record<string, string>;
}

/** modelConfig and toolset as an update or validate takes them: optional, never null. */
export class AgentPatchFieldsDto extends AgentDetailsDto {
  @ModelConfig(false)
  modelConfig?: string;

  @ApiPropertyOptional({ description: TOOLSET_DOC, ...TOOLSET_SCHEMA })
  @Optional()
  @IsToolset({ required: true })
  toolset?: string[];
}

export class CreateAgentDto extends AgentDetailsDto {
  @RequestId()
  requestId?: string;

  @AgentName()
  name: string;

  @AgentNamespace()
  namespace: string;

  @ModelConfig(true)
  modelConfig: string;

  @ApiProperty({ description: TOOLSET_DOC, ...TOOLSET_SCHEMA })
  @IsToolset({ required: true })
  toolset: string[];

  @DryRun()
  dryRun?: boolean;
}

/** `Base` with, after its own fields, the arguments every write on an existing agent takes. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- TypeScript's mixin pattern requires (...args: any[])
function withWriteArguments<Base extends new (...args: any[]) => object>(base: Base) {
  class WriteArguments extends base {
    @RequestId()
    requestId?: string;

    @ExpectedVersion()
    expectedVersion?: number;

    @DryRun()
    dryRun?: boolean;
  }
  return WriteArguments;
}

/** A delete takes only the write arguments. */
export class DeleteAgentDto extends withWriteArguments(class {}) {}

/** The update fields and, after them, the write arguments. */
export class UpdateAgentDto extends withWriteArguments(AgentPatchFieldsDto) {}

export const VALIDATE_MODES = ['create', 'update'] as const;

export class ValidateAgentDto extends AgentPatchFieldsDto {
  @ApiPropertyOptional({ description: 'Validate a create (default) or an update of an existing agent', enum: VALIDATE_MODES, default: 'create' })
  @Optional()
  @IsIn(VALIDATE_MODES)
  mode?: (typeof VALIDATE_MODES)[number];

  @AgentName()
  name: string;

  @AgentNamespace()
  namespace: string;
}

export class RollbackAgentDto extends DeleteAgentDto {
  @ApiProperty({ description: 'The agent revision to return to (see list_agent_revisions)', type: 'integer', example: 1, minimum: 1, maximum: MAX_COUNTER })
  @IsInt({ message: 'revision must be a whole number, e.g. 1' })
  @Min(1)
  @Max(MAX_COUNTER, { message: 'revision is beyond any revision an agent reaches: pick one from list_agent_revisions' })
  revision: number;

  @ApiPropertyOptional({
    description:
      'Roll back even though helm holds the release pending-install/upgrade/rollback from an interrupted helm run (a 409 says when): ' +
      'only when no helm run is active on it; the interrupted operations are then closed as failed',
    default: false,
  })
  @Optional()
  @IsBoolean()
  freeStuckRelease?: boolean;
}

export class AgentRefDto {
  @AgentNamespace()
  namespace: string;

  @AgentName()
  name: string;
}

export const REVISION_LIVES = ['current', 'all'] as const;

export class RevisionsQueryDto {
  @ApiPropertyOptional({
    description: "Whose revisions: the current agent's (default), or those of every agent that had this name, earlier deleted ones included, each marked with its life",
    enum: REVISION_LIVES,
    default: 'current',
  })
  @Optional()
  @IsIn(REVISION_LIVES, { message: `life must be one of ${REVISION_LIVES.join(', ')}` })
  life?: (typeof REVISION_LIVES)[number];
}

/** A revision as a diff names it: `3` (of the life `life` says) or `1:3` (revision 3 of life 1); `to` may also be `live`. */
export const REVISION_REF = /^([1-9][0-9]{0,8}:)?[1-9][0-9]{0,8}$/;

/** An MCP client may send a revision as a number: it means the same as its digits. */
function RevisionRefText(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) => (typeof value === 'number' && Number.isInteger(value) ? String(value) : value));
}

export class RevisionDiffQueryDto {
  @ApiPropertyOptional({
    description: 'The revision to diff from: a number (of the life `life` names) or `<life>:<revision>` (as list_agent_revisions with life=all numbers them); default: the revision before `to` (the current revision when `to` is live)',
    type: 'string',
    pattern: REVISION_REF.source,
    example: '1',
  })
  @Optional()
  @RevisionRefText()
  @IsString({ message: 'from must be a revision number, e.g. 1, or <life>:<revision>, e.g. 1:2' })
  @Matches(REVISION_REF, { message: 'from must be a revision number, e.g. 1, or <life>:<revision>, e.g. 1:2' })
  from?: string;

  @ApiPropertyOptional({
    description: 'The revision to diff to: `live` (default: the live object read from the cluster, so the diff shows drift), a number (of the life `life` names) or `<life>:<revision>`',
    type: 'string',
    pattern: `^live$|${REVISION_REF.source}`,
    default: 'live',
    example: 'live',
  })
  @Optional()
  @RevisionRefText()
  @IsString({ message: 'to must be live, a revision number, e.g. 2, or <life>:<revision>, e.g. 2:1' })
  @Matches(new RegExp(`^live$|${REVISION_REF.source}`), { message: 'to must be live, a revision number, e.g. 2, or <life>:<revision>, e.g. 2:1' })
  to?: string;

  @ApiPropertyOptional({
    description: "The life a bare revision number belongs to (1 for the first agent of this name, counting deleted ones, as list_agent_revisions' lives number them); default: the current agent, or the last one when none exists now",
    type: 'integer',
    minimum: 1,
    example: 1,
  })
  @Optional()
  @WholeNumberText()
  @IsInt({ message: 'life must be a whole number from 1: the life as list_agent_revisions with life=all numbers it' })
  @Min(1, { message: 'life must be a whole number from 1: the life as list_agent_revisions with life=all numbers it' })
  life?: number;
}

/** A chart's name as helm accepts it in Chart.yaml (lower case, digits, dashes). */
const CHART_NAME_PATTERN = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** A semantic version as helm requires of Chart.yaml (no leading v), bounded. */
const CHART_VERSION_PATTERN = /^\d{1,9}\.\d{1,9}\.\d{1,9}([-+][0-9A-Za-z.+-]{1,100})?$/;

export const LIST_STATUSES = ['active', 'deleted', 'all'] as const;

export class ListAgentsQueryDto {
  @ApiPropertyOptional({ description: 'Only agents in this namespace', ...NAMESPACE_SCHEMA })
  @Optional()
  @IsString()
  @Matches(DNS1123_LABEL, { message: DNS1123_MESSAGE('namespace', 63) })
  namespace?: string;

  @ApiPropertyOptional({ description: 'Only agents with this label: key=value, or key for any value', example: 'team=sre' })
  @Optional()
  @IsString()
  @IsLabelSelector()
  label?: string;

  @ApiPropertyOptional({ description: 'Only agents created from this blueprint (its name)', pattern: '^[a-z][a-z0-9_]{0,62}$', example: 'incident_helper' })
  @Optional()
  @IsString()
  @Matches(/^[a-z][a-z0-9_]{0,62}$/, { message: 'blueprint must be a blueprint name: a lower-case letter, then up to 62 lower-case letters, digits or "_"' })
  blueprint?: string;

  @ApiPropertyOptional({ description: 'Only agents whose last write used a chart of this name (as get_agent shows it: chart.name)', example: 'agent', pattern: CHART_NAME_PATTERN.source, maxLength: 63 })
  @Optional()
  @IsString()
  @Matches(CHART_NAME_PATTERN, { message: 'chartName must be a chart name as Chart.yaml spells it, e.g. agent: lower-case letters, digits and "-", up to 63' })
  chartName?: string;

  @ApiPropertyOptional({ description: 'Only agents whose last write used this chart version (as get_agent shows it: chart.version), e.g. to find who a rollout has not reached', example: '0.6.0', pattern: CHART_VERSION_PATTERN.source, maxLength: 128 })
  @Optional()
  @IsString()
  @Matches(CHART_VERSION_PATTERN, { message: 'chartVersion must be a semantic version as Chart.yaml spells it, e.g. 0.6.0 or 1.0.0-rc.1' })
  chartVersion?: string;

  @ApiPropertyOptional({ description: 'Which records: active agents (default), deleted ones kept for their history, or all', enum: LIST_STATUSES, default: 'active' })
  @Optional()
  @IsIn(LIST_STATUSES, { message: `status must be one of ${LIST_STATUSES.join(', ')}` })
  status?: (typeof LIST_STATUSES)[number];

  @ApiPropertyOptional({ description: 'Page size, 1 to 100', type: 'integer', default: 20, minimum: 1, maximum: 100 })
  @Optional()
  @WholeNumberText()
  @IsInt({ message: 'limit must be a whole number from 1 to 100' })
  @Min(1)
  @Max(100)
  limit?: number;

  @ApiPropertyOptional({ description: 'The nextCursor of the previous page' })
  @Optional()
  @IsString()
  cursor?: string;
}

/**
 * The request bodies Swagger UI offers for "Try it out": dry runs with realistic values, no
 * requestId (a copied key would make the next user's write a 409), so executing one unchanged
 * writes nothing.
 */
/** The agent the examples of writes on a path (and adopt) name: none that an example creates. */
export const WRITE_EXAMPLE_AGENT = 'example-agent';

export const REQUEST_EXAMPLES = {
  create: {
    name: 'incident-helper',
    namespace: 'agents',
    modelConfig: 'default-model-config',
    toolset: ['preset:read-only', 'workflow:incident-triage'],
    dryRun: true,
  },
  update: { toolset: ['preset:read-only', 'workflow:incident-triage', 'server:github'], dryRun: true },
  validate: { name: 'incident-helper', namespace: 'agents', modelConfig: 'default-model-config', toolset: ['preset:read-only', 'workflow:incident-triage'] },
  rollback: { revision: 1, dryRun: true },
  reconcile: { dryRun: true },
  adopt: { namespace: 'agents', name: WRITE_EXAMPLE_AGENT, dryRun: true },
} as const;

const OUTCOME_VALUES = ['pending', 'succeeded', 'failed', 'refused', 'proposed'] as const;
const OPERATION_NAME = /^[a-z][a-z_]{0,63}$/;

/** One journal entry by its id (GET /api/v1/operations/{id}, get_operation). */
export class OperationRefDto {
  @ApiProperty({ description: "The entry's id: a write's operationId (an agent's lastOperation.id) or an id list_operations answered", example: 'c5b1f0e2-7f43-4d8e-9a51-2b7d0c9e4f11' })
  @IsString()
  @Matches(/^[A-Za-z0-9-]{1,64}$/, { message: "id must be an operation id as a write's lastOperation.id or list_operations answers it, e.g. c5b1f0e2-7f43-4d8e-9a51-2b7d0c9e4f11" })
  id: string;
}

/** The filters of the audit trail (GET /api/v1/operations, list_operations). */
export class ListOperationsQueryDto {
  @ApiPropertyOptional({ description: 'Only entries of this principal: token:NAME (an API token), an OIDC username, local:USER (stdio) or anonymous', example: 'token:ci-platform', maxLength: 253 })
  @Optional()
  @IsString()
  @MinLength(1)
  @MaxLength(253)
  subject?: string;

  @ApiPropertyOptional({ description: 'Only entries in this namespace', ...NAMESPACE_SCHEMA })
  @Optional()
  @IsString()
  @Matches(DNS1123_LABEL, { message: DNS1123_MESSAGE('namespace', 63) })
  namespace?: string;

  @ApiPropertyOptional({ description: 'Only entries of this agent name', ...AGENT_NAME_SCHEMA })
  @Optional()
  @IsString()
  @Matches(DNS1123_LABEL, { message: DNS1123_MESSAGE('name', 53) })
  @MaxLength(53)
  name?: string;

  @ApiPropertyOptional({ description: 'Only this operation, named as the MCP tools are', example: 'create_agent', pattern: OPERATION_NAME.source })
  @Optional()
  @IsString()
  @Matches(OPERATION_NAME, { message: 'operation must be an operation name as the MCP tools are named, e.g. create_agent' })
  operation?: string;

  @ApiPropertyOptional({ description: 'Only this outcome', enum: OUTCOME_VALUES })
  @Optional()
  @IsIn(OUTCOME_VALUES, { message: `outcome must be one of ${OUTCOME_VALUES.join(', ')}` })
  outcome?: (typeof OUTCOME_VALUES)[number];

  @ApiPropertyOptional({ description: 'Only entries started at or after this time (RFC 3339)', format: 'date-time', example: '2026-03-14T09:00:00Z' })
  @Optional()
  @IsString()
  @Matches(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/, { message: 'since must be an RFC 3339 time, e.g. 2026-03-14T09:00:00Z' })
  // The shape alone lets 2026-13-01 or +99:99 through (a 500 from the store) and reads 2026-02-30 as 2 March.
  @IsISO8601({ strict: true }, { message: 'since must be an RFC 3339 time, e.g. 2026-03-14T09:00:00Z' })
  since?: string;

  @ApiPropertyOptional({ description: 'Only entries started before this time (RFC 3339)', format: 'date-time', example: '2026-03-15T09:00:00Z' })
  @Optional()
  @IsString()
  @Matches(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/, { message: 'until must be an RFC 3339 time, e.g. 2026-03-15T09:00:00Z' })
  // The shape alone lets 2026-13-01 or +99:99 through (a 500 from the store) and reads 2026-02-30 as 2 March.
  @IsISO8601({ strict: true }, { message: 'until must be an RFC 3339 time, e.g. 2026-03-15T09:00:00Z' })
  until?: string;

  @ApiPropertyOptional({ description: 'Page size, 1 to 100', type: 'integer', default: 50, minimum: 1, maximum: 100 })
  @Optional()
  @WholeNumberText()
  @IsInt({ message: 'limit must be a whole number from 1 to 100' })
  @Min(1)
  @Max(100)
  limit?: number;

  @ApiPropertyOptional({ description: 'The nextCursor of the previous page' })
  @Optional()
  @IsString()
  cursor?: string;
}
