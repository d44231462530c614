import type { AgentRevisionRow, AgentRow, OperationRow } from '@app/store';
import { chartNameOf, type ChartIdentity } from '../domain/chart-identity.js';
import type { AgentOrigin, AgentSpec, ChartValues, OperationIntent, OperationKind } from '../domain/agent-spec.js';

/** An agent as the service works with it: the store's row with its JSON columns typed. */
export interface AgentRecord {
  id: string;
  namespace: string;
  name: string;
  state: 'active' | 'deleted';
  spec: AgentSpec;
  values: ChartValues;
  /** The chart by name and version (a row written before chartName: the last segment of the reference it holds). */
  chart: ChartIdentity;
  /** The reference helm last installed or upgraded it from (a path or oci://…). */
  chartRef: string;
  revision: number;
  helmRevision: number | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
  createdBy: string;
  updatedBy: string;
  /** The blueprint it was created from and the version it holds; null when created directly. */
  origin: AgentOrigin | null;
}

export interface AgentWithLastOperation extends AgentRecord {
  lastOperation: OperationSummary | null;
}

/**
 * The columns of an agent's last operation that its answer shows (operationView), and that a read
 * of the agent therefore joins: not the request and intent, which repeat the spec and values.
 */
export const OPERATION_SUMMARY_COLUMNS = ['id', 'kind', 'state', 'actor', 'startedAt', 'finishedAt', 'helmRevision', 'errorCode', 'errorMessage'] as const;

/** An operation as an agent's answer shows it; every OperationRecord is one. */
export type OperationSummary = Pick<OperationRecord, (typeof OPERATION_SUMMARY_COLUMNS)[number]>;

export type RevisionKind = 'create' | 'update' | 'rollback';

export interface RevisionRecord {
  id: string;
  agentId: string;
  revision: number;
  helmRevision: number | null;
  kind: RevisionKind;
  spec: AgentSpec;
  values: ChartValues;
  createdAt: Date;
  createdBy: string;
  operationId: string | null;
  rolledBackTo: number | null;
}

export type OperationState = 'pending' | 'succeeded' | 'failed';

export interface OperationRecord {
  id: string;
  agentId: string | null;
  namespace: string;
  name: string;
  kind: OperationKind;
  state: OperationState;
  request: unknown;
  intent: OperationIntent | null;
  baseHelmRevision: number | null;
  owner: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  helmRevision: number | null;
  actor: string;
  startedAt: Date;
  finishedAt: Date | null;
}

/*
 * The one row mapper: the store keeps spec, values and intent as JSON columns and states as
 * strings; these functions are the only place that says what they hold.
 */

export function toAgentRecord(row: AgentRow): AgentRecord {
  return {
    id: row.id,
    namespace: row.namespace,
    name: row.name,
    state: row.state as AgentRecord['state'],
    spec: row.spec as unknown as AgentSpec,
    values: row.values as unknown as ChartValues,
    chart: { name: row.chartName ?? chartNameOf(row.chartRef), version: row.chartVersion },
    chartRef: row.chartRef,
    revision: row.revision,
    helmRevision: row.helmRevision,
    version: row.version,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    deletedAt: row.deletedAt,
    createdBy: row.createdBy,
    updatedBy: row.updatedBy,
    origin: row.blueprintName !== null && row.blueprintVersion !== null ? { blueprint: row.blueprintName, version: row.blueprintVersion } : null,
  };
}

export function toRevisionRecord(row: AgentRevisionRow): RevisionRecord {
  return {
    id: row.id,
    agentId: row.agentId,
    revision: row.revision,
    helmRevision: row.helmRevision,
    kind: row.kind as RevisionKind,
    spec: row.spec as unknown as AgentSpec,
    values: row.values as unknown as ChartValues,
    createdAt: row.createdAt,
    createdBy: row.createdBy,
    operationId: row.operationId,
    rolledBackTo: row.rolledBackTo,
  };
}

export function toOperationRecord(row: OperationRow): OperationRecord {
  return {
    ...toOperationSummary(row),
    agentId: row.agentId,
    namespace: row.namespace,
    name: row.name,
    request: row.request,
    intent: (row.intent ?? null) as unknown as OperationIntent | null,
    baseHelmRevision: row.baseHelmRevision,
    owner: row.owner,
  };
}

/** The summary columns of an operation row (all a read of an agent joins), as its record has them. */
function toOperationSummary(row: Pick<OperationRow, (typeof OPERATION_SUMMARY_COLUMNS)[number]>): OperationSummary {
  return {
    id: row.id,
    kind: row.kind as OperationKind,
    state: row.state as OperationState,
    actor: row.actor,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    helmRevision: row.helmRevision,
    errorCode: row.errorCode,
    errorMessage: row.errorMessage,
  };
}

/**
 * An agent row read together with its last operation in one statement: the agent's columns as
 * they are, the operation's summary columns prefixed `op_` (all null when it has none).
 */
export type AgentWithOperationRow = AgentRow & { [K in (typeof OPERATION_SUMMARY_COLUMNS)[number] as `op_${K}`]: OperationRow[K] | null };

/** The operation columns under the prefix that AgentWithOperationRow gives them. */
export const OPERATION_COLUMN_PREFIX = 'op_';

export function toAgentWithLastOperation(row: AgentWithOperationRow): AgentWithLastOperation {
  const { op_id: id, op_kind: kind, op_state: state, op_actor: actor, op_startedAt: startedAt } = row;
  return {
    ...toAgentRecord(row),
    // the operation's NOT NULL columns are null only when the join found no operation
    lastOperation:
      id === null || kind === null || state === null || actor === null || startedAt === null
        ? null
        : toOperationSummary({
            id,
            kind,
            state,
            actor,
            startedAt,
            finishedAt: row.op_finishedAt,
            helmRevision: row.op_helmRevision,
            errorCode: row.op_errorCode,
            errorMessage: row.op_errorMessage,
          }),
  };
}

/** The values helm reports for a release (its `config`), which are the chart values agent-manager wrote. */
export function chartValuesOf(values: Record<string, unknown>): ChartValues {
  return values as unknown as ChartValues;
}
