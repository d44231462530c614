import type { AuditEntry } from './audit-entry.js';

/** A refusal by the policy as the journal keeps it: who, which operation, where, and the 403's words. */
export type Refusal = AuditEntry & { namespace: string; name: string; errorMessage: string };

/**
 * Where the policy journals its refusals (the audit trail). An abstract class, so it is also the
 * Nest token: the module that owns the journal provides it (AgentsModule: the agents repository).
 */
export abstract class RefusalJournal {
  abstract journalRefusal(refusal: Refusal): Promise<void>;
}
