import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/** Which door a request came through. `internal` is the service's own work (recovery sweeps, start-up). */
export type Door = 'rest' | 'mcp-http' | 'mcp-stdio' | 'internal';

/**
 * Who asked and how, for one request or tool call: set by the door, read by the service layer
 * (the journal's actor, logs) wherever the call goes, without being passed along by hand.
 */
export interface OperationContext {
  requestId: string;
  door: Door;
  /** Recorded in the journal and the revisions as who acted. */
  actor: string;
  /** The MCP client's name from initialize, when the door is MCP. */
  client?: string;
  /** Who the caller was verified to be (libs/auth's Principal): set by the doors once authentication ran. */
  principal?: { subject: string; groups: string[]; method: 'oidc' | 'token' | 'local' | 'anonymous' };
  /** X-Actor as sent when authentication is on: a free-text note beside the verified subject, never who acted. */
  note?: string;
}

const storage = new AsyncLocalStorage<OperationContext>();

export const OperationContexts = {
  /** Runs `fn` (and everything it awaits) with `context` as the current operation context. */
  run<T>(context: Omit<OperationContext, 'requestId'> & { requestId?: string }, fn: () => T): T {
    return storage.run({ ...context, requestId: context.requestId ?? randomUUID() }, fn);
  },

  /** The current context; work started outside any door is the service's own (`internal`). */
  current(): OperationContext {
    return storage.getStore() ?? INTERNAL;
  },
};

const INTERNAL: OperationContext = Object.freeze({ requestId: 'internal', door: 'internal', actor: 'agent-manager' });
