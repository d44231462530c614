import type { LiveAgent } from '@app/kube';
import type { AgentOrigin, OperationIntent, OperationKind } from '../domain/agent-spec.js';
import type { AgentRecord, AgentWithLastOperation, OperationRecord, RevisionRecord } from '../persistence/records.js';
import type { AppliedChange } from '../persistence/agents.repository.js';
import type { AuditEntry } from '../persistence/journal.records.js';
import type { AgentLock } from './agent-lock.js';

/** A write journaled before its change runs (AgentWriteStore.startOperation). */
export interface OperationStart {
  id: string;
  kind: OperationKind;
  namespace: string;
  name: string;
  agentId?: string;
  request: unknown;
  actor: string;
  owner: string;
  intent?: OperationIntent;
  baseHelmRevision?: number | null;
  /** Who asked and how (principal, door, client, request id), for the audit trail. */
  audit?: AuditEntry;
  /** The idempotency key (as stored) the request claimed: linked to this operation, so a retry finds it. */
  idempotencyKey?: string;
}

/**
 * What the write side needs of the store: the write runner, the plans it runs (use-cases/*.ts) and
 * the operation recovery. AgentsRepository implements it on the configured store; the unit suites
 * use an in-memory fake of it (test/support/fake-agent-store.ts). Each record* call closes its
 * operation as succeeded at once with the change, and throws when that operation is no longer
 * pending (recorded or closed elsewhere): a change is never recorded twice.
 */
export interface AgentWriteStore {
  /** The active agent of a name with its last operation. */
  findActive(namespace: string, name: string): Promise<AgentWithLastOperation | null>;
  agentById(id: string): Promise<AgentRecord | null>;
  /** The operation last started on agent `agentId`, or without it on any agent of that name. */
  lastOperation(namespace: string, name: string, agentId?: string): Promise<OperationRecord | null>;
  revision(agentId: string, revision: number): Promise<RevisionRecord | null>;
  /** The revision an operation recorded, if it recorded one. */
  revisionOfOperation(operationId: string): Promise<RevisionRecord | null>;

  /** Journals a write (pending) and makes it the last operation of its agent (by id, or the active agent of its name). */
  startOperation(input: OperationStart): Promise<OperationRecord>;
  operation(id: string): Promise<OperationRecord | null>;
  /** Pending operations, oldest first, of one agent name or all. */
  pendingOperations(of?: { namespace: string; name: string }): Promise<OperationRecord[]>;
  /** Closes a pending operation as failed; false when it was no longer pending. */
  failOperation(id: string, errorCode: string, errorMessage: string): Promise<boolean>;
  /** Closes a pending operation as succeeded that records no agent change (an uninstall of a half-release). */
  succeedOperation(id: string): Promise<void>;
  /** Passes the idempotency claims of one operation to another that carried out its intent (the reconciler's). */
  relinkKeys(from: string, to: string): Promise<void>;

  /** A new agent at revision 1, past the version of every earlier agent of its name. */
  recordCreate(namespace: string, name: string, chart: { ref: string; version?: string }, change: AppliedChange): Promise<AgentWithLastOperation>;
  /** An update or rollback: a new revision, the version one up. */
  recordChange(agent: AgentRecord, change: AppliedChange): Promise<AgentWithLastOperation>;
  /** The agent marked deleted, its history kept. */
  recordDelete(agent: AgentRecord, operationId: string, actor: string): Promise<AgentWithLastOperation>;
  /** The agent moved to another version of its blueprint whose values equal its own: no revision, the version unchanged. */
  recordOriginMove(agent: AgentRecord, origin: AgentOrigin, operationId: string): Promise<AgentWithLastOperation>;
  /** A release the store did not know, with its helm history as revisions (oldest first). */
  recordAdoption(namespace: string, name: string, chart: { ref: string; version?: string }, history: AppliedChange[], operationId: string): Promise<AgentWithLastOperation>;

  /** Removes finished journal entries older than `olderThanMs` (never a pending one, nor an agent's last); the recovery sweep calls it. */
  purgeJournal(olderThanMs: number): Promise<number>;
}

/** What the write side needs of the agent lock (AgentLock): holding an agent for one piece of work. */
export type AgentHolding = Pick<AgentLock, 'hold'>;

/**
 * What the agents domain reads of the live cluster: the `Agent` object as kagent holds it (null
 * when there is none). KubeClient implements it; suites that need no cluster give a fake.
 */
export interface LiveAgents {
  getAgent(namespace: string, name: string): Promise<LiveAgent | null>;
}
