import type { ErrorDetail } from '@app/common';
import type { AgentDto, OperationDto, RevisionDto } from './responses.dto.js';
import type { AgentRecord, AgentWithLastOperation, OperationSummary, RevisionRecord } from '../persistence/records.js';

/** The answer shapes of docs/contract.md §3, from store records: the one place records become DTOs. */
export function agentView(record: AgentRecord, last: OperationSummary | null): AgentDto {
  return {
    id: record.id,
    namespace: record.namespace,
    name: record.name,
    state: record.state,
    spec: record.spec,
    values: record.values,
    toolset: record.spec.toolset,
    revision: record.revision,
    helmRevision: record.helmRevision,
    version: record.version,
    chart: { name: record.chart.name, version: record.chart.version },
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
    deletedAt: record.deletedAt?.toISOString() ?? null,
    createdBy: record.createdBy,
    updatedBy: record.updatedBy,
    lastOperation: last ? operationView(last) : null,
    blueprint: record.origin ? { ...record.origin } : null,
  };
}

/** An agent read with its last operation (no second read), as answers show it. */
export function recordView(record: AgentWithLastOperation): AgentDto {
  return agentView(record, record.lastOperation);
}

export function operationView(op: OperationSummary): OperationDto {
  return {
    id: op.id,
    kind: op.kind,
    state: op.state,
    actor: op.actor,
    startedAt: op.startedAt.toISOString(),
    finishedAt: op.finishedAt?.toISOString() ?? null,
    helmRevision: op.helmRevision,
    errorCode: op.errorCode,
    errorMessage: op.errorMessage,
  };
}

/** A revision of the agent of one life (1 for the first agent of its name). */
export function revisionView(row: RevisionRecord, life: number): RevisionDto {
  return {
    revision: row.revision,
    helmRevision: row.helmRevision,
    kind: row.kind,
    rolledBackTo: row.rolledBackTo,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    spec: row.spec,
    values: row.values,
    life,
    agentId: row.agentId,
  };
}

export function problems(list: { path: string; message: string }[]): ErrorDetail[] {
  return list.map(({ path, message }) => ({ path, message }));
}
