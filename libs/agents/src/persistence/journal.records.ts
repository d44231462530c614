import { AppError } from '@app/common';
import { auditColumns, auditOf, type AuditEntry, type JournalReader } from '@app/doors';

export { auditColumns, auditOf, type AuditEntry, type JournalReader };
import type { OperationRow, Prisma } from '@app/store';
import type { AuditedOperationDto } from '../api/responses.dto.js';
import { isCursorText } from '../api/cursors.js';

/** The write operations and the journal's older `kind` of each (rows written before the audit columns). */
const WRITE_KINDS: Record<string, string> = { create_agent: 'create', update_agent: 'update', delete_agent: 'delete', rollback_agent: 'rollback' };

export const OUTCOMES = ['pending', 'succeeded', 'failed', 'refused', 'proposed'] as const;

export interface OperationCursor {
  startedAt: Date;
  id: string;
}

export interface OperationFilter {
  subject?: string;
  namespace?: string;
  name?: string;
  operation?: string;
  outcome?: (typeof OUTCOMES)[number];
  since?: Date;
  until?: Date;
  /** The namespaces the reader may see, as policy patterns (`payments-*`); all when absent. */
  namespacePatterns?: string[];
  after?: OperationCursor;
  limit: number;
}

/** One journal row as the audit trail shows it. */
export interface AuditedOperation {
  id: string;
  operation: string;
  namespace: string;
  name: string;
  outcome: string;
  actor: string;
  subject: string | null;
  authMethod: string | null;
  door: string | null;
  client: string | null;
  requestId: string | null;
  actorNote: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  /** How many refusals the entry stands for (1 for a write). */
  count: number;
  startedAt: Date;
  finishedAt: Date | null;
}


/** An entry as `reader` may see it: someone else's refusal names the operation, where and whom, not the groups and grants. */
export function shownTo(op: AuditedOperation, reader: JournalReader): AuditedOperation {
  if (reader.admin || op.outcome !== 'refused' || (op.subject === reader.subject && op.authMethod === reader.method)) return op;
  const where = op.namespace === '*' ? 'in any namespace' : `in namespace "${op.namespace}"`;
  return { ...op, errorMessage: `${op.operation} ${where} is not granted to ${op.subject ?? op.actor} (its groups and grants are shown to it and to admins only)` };
}

/** `namespaces`: only entries in these (the caller's patterns resolved, see AgentsRepository.operationsPage); all when undefined. */
export function operationWhere(filter: OperationFilter, namespaces?: string[]): Prisma.OperationWhereInput {
  const and: Prisma.OperationWhereInput[] = [];
  if (filter.subject !== undefined) and.push({ subject: filter.subject });
  if (filter.namespace !== undefined) and.push({ namespace: filter.namespace });
  if (filter.name !== undefined) and.push({ name: filter.name });
  if (filter.outcome !== undefined) and.push({ state: filter.outcome });
  if (filter.operation !== undefined) {
    const kind = WRITE_KINDS[filter.operation];
    and.push(kind ? { OR: [{ operation: filter.operation }, { operation: null, kind }] } : { operation: filter.operation });
  }
  if (filter.since) and.push({ startedAt: { gte: filter.since } });
  if (filter.until) and.push({ startedAt: { lt: filter.until } });
  if (namespaces) and.push({ namespace: { in: namespaces } });
  if (filter.after) {
    const { startedAt, id } = filter.after;
    and.push({ OR: [{ startedAt: { lt: startedAt } }, { startedAt, id: { lt: id } }] });
  }
  return { AND: and };
}

export function toAuditedOperation(row: OperationRow): AuditedOperation {
  const kindOperation = Object.entries(WRITE_KINDS).find(([, kind]) => kind === row.kind)?.[0];
  return {
    id: row.id,
    operation: row.operation ?? kindOperation ?? row.kind,
    namespace: row.namespace,
    name: row.name,
    outcome: row.state,
    actor: row.actor,
    subject: row.subject,
    authMethod: row.authMethod,
    door: row.door,
    client: row.client,
    requestId: row.requestId,
    actorNote: row.actorNote,
    errorCode: row.errorCode,
    errorMessage: row.errorMessage,
    count: row.count,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
  };
}

export function encodeOperationCursor(row: OperationCursor): string {
  return Buffer.from(JSON.stringify({ t: row.startedAt.toISOString(), i: row.id }), 'utf8').toString('base64url');
}

export function decodeOperationCursor(cursor: string): OperationCursor {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { t?: unknown; i?: unknown };
    const startedAt = typeof parsed.t === 'string' ? new Date(parsed.t) : undefined;
    if (startedAt && !Number.isNaN(startedAt.getTime()) && isCursorText(parsed.i)) return { startedAt, id: parsed.i as string };
  } catch {
    // refused below
  }
  throw AppError.invalid([{ path: 'cursor', message: 'cursor is not one this service issued: pass nextCursor from the previous page, or omit it' }]);
}

/** One journal entry as the doors answer it (times as RFC 3339). */
export function operationView(op: AuditedOperation): AuditedOperationDto {
  return { ...op, startedAt: op.startedAt.toISOString(), finishedAt: op.finishedAt?.toISOString() ?? null };
}
