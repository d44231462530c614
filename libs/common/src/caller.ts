import { OperationContexts, SERVICE_ACTOR, type Door, type OperationContext } from './operation-context.js';

/**
 * Who asks for a state change, as a value the write runner is given: the actor the journal and the
 * revisions record, the verified principal that scopes idempotency keys, and the door, client and
 * request the audit columns name. Built once where a call enters the service layer
 * (`Caller.current()`) or for the service's own work (`Caller.internal()`); nothing below that
 * reads identity from the ambient operation context, which stays for logs and traces.
 */
export interface Caller {
  /** Recorded in the journal and the revisions as who acted. */
  actor: string;
  door: Door;
  requestId: string;
  /** Who the caller was verified to be; absent for the service's own work. */
  principal?: OperationContext['principal'];
  /** The MCP client's name, when the door is MCP. */
  client?: string;
  /** The MCP session (Streamable HTTP) the call came in: a proposal's decision is told to it (docs/approvals.md). */
  mcpSession?: string;
  /** X-Actor as sent beside a verified subject: a free-text note, never who acted. */
  note?: string;
  /**
   * The approved change this write carries out (docs/approvals.md): the proposer's write, rebuilt
   * when the last approval came; it is not made a proposal again.
   */
  change?: string;
}

export const Caller = {
  /** The caller of the call running now, as its door set it (the service itself outside any door). */
  current(): Caller {
    const { actor, door, requestId, principal, client, note, mcpSession } = OperationContexts.current();
    return { actor, door, requestId, principal, client, note, ...(mcpSession !== undefined && { mcpSession }) };
  },

  /** The service's own work that no caller asked for (a sweep, a CLI command), as the journal names it. */
  internal(): Caller {
    return { ...SERVICE_ACTOR };
  },

  /** The service's own work on behalf of whoever started it (a sweep: nobody), journaled as `actor`. */
  acting(caller: Caller, actor: string): Caller {
    return { ...caller, actor };
  },

  /**
   * Whose idempotency keys a key belongs to: the verified subject, or the actor named when auth is
   * off, so the same key from two callers never collides and never replays someone else's answer.
   */
  keyScope(caller: Caller): string {
    return caller.principal && caller.principal.method !== 'anonymous' ? caller.principal.subject : caller.actor;
  },
};
