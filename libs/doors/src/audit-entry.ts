import type { Caller } from '@app/common';

/** Who did what through which door: the audit columns of a journal row (Operation). */
export interface AuditEntry {
  /** The operation as the policy names it: create_agent, list_agents, … */
  operation: string;
  /** Who acted, as the journal's actor column has always said it. */
  actor: string;
  subject: string | null;
  authMethod: string | null;
  door: string;
  client: string | null;
  requestId: string;
  actorNote: string | null;
}

/** The audit entry of a call, from its caller (an operation context, which the door set, is one too). */
export function auditOf(context: Caller, operation: string): AuditEntry {
  return {
    operation,
    actor: context.actor,
    subject: context.principal?.subject ?? null,
    authMethod: context.principal?.method ?? null,
    door: context.door,
    client: context.client ?? null,
    requestId: context.requestId,
    actorNote: context.note ?? null,
  };
}

/** The Operation row's audit columns, for `data` of a create. */
export function auditColumns(entry: AuditEntry) {
  return {
    operation: entry.operation,
    subject: entry.subject,
    authMethod: entry.authMethod,
    door: entry.door,
    client: entry.client,
    requestId: entry.requestId,
    actorNote: entry.actorNote,
  };
}

/** Who reads the journal: a refusal names its principal's groups and grants to that principal and admins only. */
export interface JournalReader {
  subject: string;
  method: string;
  admin: boolean;
}
