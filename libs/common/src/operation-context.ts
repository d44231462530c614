import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { AppError } from './app-error.js';

/** Which door a request came through. `internal` is the service's own work (recovery sweeps, start-up). */
export type Door = 'rest' | 'mcp-http' | 'mcp-stdio' | 'internal';

/**
 * What a call turns out to be about, learned while it runs (the operation once it is authorized,
 * the agent it names, how it ended): one object shared by every context nested in the call, so
 * its log lines and its access line name them wherever they were learned.
 */
export interface CallFacts {
  /** The principal's subject once authentication ran (for lines written outside the door's own context). */
  subject?: string;
  operation?: string;
  /** namespace/name */
  agent?: string;
  /** `ok`, or the error code (docs/contract.md §6) the caller was answered with. */
  outcome?: string;
}

/**
 * Who asked and how, for one request or tool call: set by the door, read by the service layer
 * (the journal's actor, logs) wherever the call goes, without being passed along by hand.
 */
export interface OperationContext {
  requestId: string;
  /** The W3C trace id (32 hex digits) of the call: its span's when tracing is on, else the caller's traceparent's. */
  traceId?: string;
  door: Door;
  /** Recorded in the journal and the revisions as who acted. */
  actor: string;
  /** The MCP client's name from initialize, when the door is MCP. */
  client?: string;
  /** The Streamable HTTP session the tool call came in (mcp-session-id): where the service tells the caller later what became of its proposal. */
  mcpSession?: string;
  /** Who the caller was verified to be (libs/auth's Principal): set by the doors once authentication ran. */
  principal?: { subject: string; groups: readonly string[]; method: 'oidc' | 'token' | 'local' | 'anonymous' };
  /** X-Actor as sent when authentication is on: a free-text note beside the verified subject, never who acted. */
  note?: string;
  /** Set by OperationContexts.asService: cluster calls made now use the service's own credentials (recovery, reconcile). */
  asService?: boolean;
  facts: CallFacts;
  /** Where a long call's steps are told to the caller as they happen (an MCP tool call's log notifications). */
  progress?: (step: string) => Promise<void>;
  /**
   * Asks the person at the caller's client to agree to what the call is about to do (an MCP client
   * that declared elicitation, for a destructive tool); resolves on their accept, throws otherwise.
   */
  confirm?: (summary: string) => Promise<void>;
  /** Told the journal entry's id once the call's write journaled its intent (an MCP task's id is that entry's). */
  journaled?: (operationId: string) => void;
}

/** Whom a helm call or Kubernetes read impersonates (helm --kube-as-user/--kube-as-group; Impersonate-User/-Group). */
export interface KubeIdentity {
  user: string;
  groups: string[];
}

const storage = new AsyncLocalStorage<OperationContext>();

export type NewOperationContext = Omit<OperationContext, 'requestId' | 'facts'> & { requestId?: string; facts?: CallFacts };

export const OperationContexts = {
  /**
   * Runs `fn` (and everything it awaits) with `context` as the current operation context. Inside
   * another context (a tool call within an HTTP request) it keeps that one's request id, trace id
   * and facts unless `context` names its own.
   */
  run<T>(context: NewOperationContext, fn: () => T): T {
    const outer = storage.getStore();
    const requestId = context.requestId ?? outer?.requestId ?? randomUUID();
    const facts = context.facts && !Object.isFrozen(context.facts) ? context.facts : (outer?.facts ?? {});
    return storage.run({ ...context, requestId, traceId: context.traceId ?? outer?.traceId, facts }, fn);
  },

  /** The current context; work started outside any door is the service's own (`internal`). */
  current(): OperationContext {
    return storage.getStore() ?? INTERNAL;
  },

  /** The current context when a door set one; undefined for the service's own work. */
  active(): OperationContext | undefined {
    return storage.getStore();
  },

  /** Records what the current call is about; the first operation and agent named stay (a validate authorizes its write too). */
  learn(facts: CallFacts): void {
    const known = storage.getStore()?.facts;
    if (!known || Object.isFrozen(known)) return;
    known.subject ??= facts.subject;
    known.operation ??= facts.operation;
    known.agent ??= facts.agent;
    if (facts.outcome !== undefined) known.outcome = facts.outcome;
  },

  /** Runs `fn` with the current context, its steps told to `report` (OperationContexts.step). */
  withProgress<T>(report: (step: string) => Promise<void>, fn: () => T): T {
    return storage.run({ ...OperationContexts.current(), progress: report }, fn);
  },

  /** Runs `fn` with the current context, a destructive step in it first asked of the caller's person through `ask` (OperationContexts.confirm). */
  withConfirmation<T>(ask: (summary: string) => Promise<void>, fn: () => T): T {
    return storage.run({ ...OperationContexts.current(), confirm: ask }, fn);
  },

  /** Runs `fn` with the current context, the id of the first journal entry a write in it starts told to `report` (OperationContexts.journaled). */
  withJournaled<T>(report: (operationId: string) => void, fn: () => T): T {
    return storage.run({ ...OperationContexts.current(), journaled: report }, fn);
  },

  /** Tells the caller, if it listens, the journal entry its write started (before helm runs). */
  journaled(operationId: string): void {
    storage.getStore()?.journaled?.(operationId);
  },

  /** Whether the call can ask its person to confirm (only then is a summary worth building). */
  asks(): boolean {
    return storage.getStore()?.confirm !== undefined;
  },

  /** Asks the caller's person to agree to `summary` when the call can ask; throws the refusal when they do not agree. */
  async confirm(summary: string): Promise<void> {
    await storage.getStore()?.confirm?.(summary);
  },

  /** Tells the caller, if it listens, the step the call takes now; never fails the call. */
  async step(step: string): Promise<void> {
    await storage.getStore()?.progress?.(step).catch(() => undefined);
  },

  /**
   * Runs `fn` with the current context, but cluster calls made in it act as the service itself, not
   * as the caller: the recovery of interrupted writes and the reconciler finish work nobody asked for now.
   */
  asService<T>(fn: () => T): T {
    return storage.run({ ...OperationContexts.current(), asService: true }, fn);
  },

  /**
   * Whom cluster calls made now impersonate (with KUBE_IMPERSONATE): the verified caller, or nobody
   * (undefined: the service's own credentials) for the service's own work and when auth is off.
   * Names the cluster reserves (`system:`) are never impersonated: such a subject is refused, such groups are dropped.
   */
  kubeIdentity(): KubeIdentity | undefined {
    const context = OperationContexts.current();
    const principal = context.principal;
    if (context.asService || !principal || principal.method === 'anonymous') return undefined;
    if (principal.subject.startsWith(SYSTEM_PREFIX)) {
      throw new AppError('forbidden', `agent-manager does not act on the cluster as "${principal.subject}": names starting with "${SYSTEM_PREFIX}" are the cluster's own; call with another identity`);
    }
    return { user: principal.subject, groups: principal.groups.filter((group) => !group.startsWith(SYSTEM_PREFIX)) };
  },
};

const SYSTEM_PREFIX = 'system:';

/**
 * Who acts in the service's own work that no caller asked for (a sweep, a CLI command, an expiry):
 * written here only; Caller.internal() and the context outside any door are built from it.
 */
export const SERVICE_ACTOR: Readonly<{ actor: string; door: Door; requestId: string }> = Object.freeze({ actor: 'agent-manager', door: 'internal', requestId: 'internal' });

const INTERNAL: OperationContext = Object.freeze({ ...SERVICE_ACTOR, facts: Object.freeze({}) });
