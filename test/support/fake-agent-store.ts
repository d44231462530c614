import { randomUUID } from 'node:crypto';
import type { AgentRecord, AgentWithLastOperation, OperationRecord, RevisionRecord } from '../../libs/agents/src/persistence/records.js';
import type { AppliedChange } from '../../libs/agents/src/persistence/agents.repository.js';
import type { AgentOrigin } from '../../libs/agents/src/domain/agent-spec.js';
import type { AuditEntry } from '../../libs/agents/src/persistence/journal.records.js';
import { chartIdentity } from '../../libs/agents/src/domain/chart-identity.js';
import type { AgentWriteStore, OperationStart } from '../../libs/agents/src/runner/ports.js';

/** A journal entry as the fake keeps it: the operation with the audit columns and key its start was given. */
export interface JournaledOperation extends OperationRecord {
  audit: AuditEntry | null;
  idempotencyKey: string | null;
}

/**
 * A FAKE store for the write side (AgentWriteStore), in memory: agents, revisions and the operation
 * journal kept as AgentsRepository keeps them (versions past every earlier agent of a name, a revision
 * per change, operations pending → succeeded or failed, a record closing an operation that is not
 * pending throws and changes nothing), so unit suites check the write runner's decisions in
 * milliseconds. The store's own behaviour (SQL, transactions, both providers) is the
 * repository's int-specs' job. It holds no idempotency keys: relinkKeys only notes the call.
 */
export class FakeAgentStore implements AgentWriteStore {
  readonly agents = new Map<string, AgentRecord & { lastOperationId: string | null }>();
  readonly revisions: RevisionRecord[] = [];
  readonly operations = new Map<string, JournaledOperation>();
  /** relinkKeys calls, in order. */
  readonly relinked: { from: string; to: string }[] = [];
  /** Blueprint names by id, for origins that carry a blueprintId (absent: the blueprint was deleted). */
  readonly blueprints = new Map<string, string>();
  /** The next record* call fails with this error, once, before changing anything (a transaction that rolled back). */
  failNextRecord?: Error;
  /** The store's clock; a test may move it. */
  now = new Date('2025-01-01T00:00:00Z');

  /** The journal of one agent name (or all), oldest first, with each entry's audit columns. */
  journal(of?: { namespace: string; name: string }): JournaledOperation[] {
    return [...this.operations.values()].filter((op) => !of || (op.namespace === of.namespace && op.name === of.name)).map(copyOperation);
  }

  async findActive(namespace: string, name: string): Promise<AgentWithLastOperation | null> {
    const agent = this.active(namespace, name);
    return agent ? this.withLast(agent) : null;
  }

  async agentById(id: string): Promise<AgentRecord | null> {
    const agent = this.agents.get(id);
    return agent ? record(agent) : null;
  }

  async lastOperation(namespace: string, name: string, agentId?: string): Promise<OperationRecord | null> {
    if (agentId) {
      const last = this.agents.get(agentId)?.lastOperationId;
      return last ? this.operationRecord(last) : null;
    }
    const ops = [...this.operations.values()].filter((op) => op.namespace === namespace && op.name === name);
    return ops.length > 0 ? this.operationRecord(ops[ops.length - 1].id) : null;
  }

  async revision(agentId: string, revision: number): Promise<RevisionRecord | null> {
    const found = this.revisions.find((r) => r.agentId === agentId && r.revision === revision);
    return found ? copyRevision(found) : null;
  }

  async revisionOfOperation(operationId: string): Promise<RevisionRecord | null> {
    const found = this.revisions.find((r) => r.operationId === operationId);
    return found ? copyRevision(found) : null;
  }

  async startOperation(input: OperationStart): Promise<OperationRecord> {
    if (this.operations.has(input.id)) throw new Error(`Unique constraint failed on Operation.id (${input.id})`);
    const op: JournaledOperation = {
      id: input.id, agentId: input.agentId ?? null, namespace: input.namespace, name: input.name, kind: input.kind, state: 'pending',
      request: json(input.request), intent: input.intent ? json(input.intent) : null, baseHelmRevision: input.baseHelmRevision ?? null,
      owner: input.owner, errorCode: null, errorMessage: null, helmRevision: null, actor: input.actor, startedAt: this.tick(), finishedAt: null,
      audit: input.audit ?? null, idempotencyKey: input.idempotencyKey ?? null,
    };
    this.operations.set(op.id, op);
    const agent = input.agentId ? this.agents.get(input.agentId) : this.active(input.namespace, input.name);
    if (agent) agent.lastOperationId = op.id;
    return this.operationRecord(op.id)!;
  }

  async operation(id: string): Promise<OperationRecord | null> {
    return this.operationRecord(id);
  }

  async pendingOperations(of?: { namespace: string; name: string }): Promise<OperationRecord[]> {
    return this.journal(of)
      .filter((op) => op.state === 'pending')
      .map((op) => this.operationRecord(op.id)!);
  }

  async failOperation(id: string, errorCode: string, errorMessage: string): Promise<boolean> {
    const op = this.operations.get(id);
    if (op?.state !== 'pending') return false;
    Object.assign(op, { state: 'failed', errorCode, errorMessage, finishedAt: this.tick() });
    return true;
  }

  async succeedOperation(id: string): Promise<void> {
    this.closeSucceeded(id, {});
  }

  async relinkKeys(from: string, to: string): Promise<void> {
    this.relinked.push({ from, to });
  }

  async recordCreate(namespace: string, name: string, chart: { ref: string; version?: string }, change: AppliedChange): Promise<AgentWithLastOperation> {
    return this.recordNew(namespace, name, chart, [change], change.operationId, this.originNow(change.origin));
  }

  async recordChange(agent: AgentRecord, change: AppliedChange): Promise<AgentWithLastOperation> {
    this.beforeRecord(change.operationId);
    const stored = this.stored(agent.id);
    const revision = agent.revision + 1;
    if (this.revisions.some((r) => r.agentId === agent.id && r.revision === revision)) throw new Error(`Unique constraint failed on AgentRevision (${agent.id}, ${revision})`);
    const origin = this.originNow(change.origin);
    Object.assign(stored, {
      spec: json(change.spec), values: json(change.values), revision, helmRevision: change.helmRevision,
      ...(change.chart && { chart: chartIdentity(change.chart), chartRef: (change.chart as { source?: string }).source ?? change.chart.ref }), ...(origin && { origin }),
      version: stored.version + 1, updatedBy: change.actor, updatedAt: this.tick(),
    });
    this.revisions.push(this.revisionOf(agent.id, revision, change));
    this.closeSucceeded(change.operationId, { helmRevision: change.helmRevision });
    return this.withLast(stored);
  }

  async recordDelete(agent: AgentRecord, operationId: string, actor: string): Promise<AgentWithLastOperation> {
    this.beforeRecord(operationId);
    const stored = this.stored(agent.id);
    const at = this.tick();
    Object.assign(stored, { state: 'deleted', deletedAt: at, updatedAt: at, updatedBy: actor, version: stored.version + 1 });
    this.closeSucceeded(operationId, {});
    return this.withLast(stored);
  }

  async recordOriginMove(agent: AgentRecord, origin: AgentOrigin, operationId: string): Promise<AgentWithLastOperation> {
    this.beforeRecord(operationId);
    const stored = this.stored(agent.id);
    const now = this.originNow(origin);
    if (now) stored.origin = now;
    this.closeSucceeded(operationId, {});
    return this.withLast(stored);
  }

  async recordAdoption(namespace: string, name: string, chart: { ref: string; version?: string }, history: AppliedChange[], operationId: string): Promise<AgentWithLastOperation> {
    return this.recordNew(namespace, name, chart, history, operationId, undefined);
  }

  async purgeJournal(olderThanMs: number): Promise<number> {
    const before = this.now.getTime() - olderThanMs;
    const last = new Set([...this.agents.values()].map((agent) => agent.lastOperationId));
    let removed = 0;
    for (const op of [...this.operations.values()]) {
      if (op.state === 'pending' || last.has(op.id) || op.startedAt.getTime() >= before || (op.finishedAt?.getTime() ?? before) >= before) continue;
      this.operations.delete(op.id);
      removed++;
    }
    return removed;
  }

  /** A create or adoption: a new agent whose revisions are `history` (the last one current). */
  private recordNew(namespace: string, name: string, chart: { ref: string; version?: string }, history: AppliedChange[], operationId: string, origin: AgentOrigin | undefined): AgentWithLastOperation {
    this.beforeRecord(operationId);
    if (this.active(namespace, name)) throw new Error(`Unique constraint failed on Agent.activeKey (${namespace}/${name})`);
    const current = history[history.length - 1];
    const earlier = [...this.agents.values()].filter((a) => a.namespace === namespace && a.name === name).map((a) => a.version);
    const at = this.tick();
    const agent = {
      id: randomUUID(), namespace, name, state: 'active' as const, spec: json(current.spec), values: json(current.values), chart: chartIdentity(chart), chartRef: chart.ref,
      revision: history.length, helmRevision: current.helmRevision, version: Math.max(0, ...earlier) + 1, createdAt: at, updatedAt: at, deletedAt: null,
      createdBy: history[0].actor, updatedBy: current.actor, origin: origin ?? null, lastOperationId: operationId,
    };
    this.agents.set(agent.id, agent);
    history.forEach((change, at) => this.revisions.push(this.revisionOf(agent.id, at + 1, change)));
    this.closeSucceeded(operationId, { agentId: agent.id, helmRevision: current.helmRevision });
    return this.withLast(agent);
  }

  /** What a record transaction checks before it writes: the fake failure asked for, and an operation still pending (closeSucceeded's refusal). */
  private beforeRecord(operationId: string): void {
    const failure = this.failNextRecord;
    this.failNextRecord = undefined;
    if (failure) throw failure;
    if (this.operations.get(operationId)?.state !== 'pending') throw new Error(`operation ${operationId} is no longer pending: it was recorded or closed elsewhere`);
  }

  private closeSucceeded(id: string, data: { agentId?: string; helmRevision?: number | null }): void {
    const op = this.operations.get(id);
    if (op?.state !== 'pending') throw new Error(`operation ${id} is no longer pending: it was recorded or closed elsewhere`);
    Object.assign(op, data, { state: 'succeeded', finishedAt: this.tick() });
  }

  /** The origin as the blueprint stands now: renamed, or none when it was deleted (AgentsRepository's originNow). */
  private originNow(origin: AgentOrigin | undefined): AgentOrigin | undefined {
    if (!origin) return undefined;
    if (!origin.blueprintId) return { blueprint: origin.blueprint, version: origin.version };
    const name = this.blueprints.get(origin.blueprintId);
    return name === undefined ? undefined : { blueprint: name, version: origin.version };
  }

  private revisionOf(agentId: string, revision: number, change: AppliedChange): RevisionRecord {
    return {
      id: randomUUID(), agentId, revision, helmRevision: change.helmRevision, kind: change.kind, spec: json(change.spec), values: json(change.values),
      createdAt: this.tick(), createdBy: change.actor, operationId: change.operationId, rolledBackTo: change.rolledBackTo ?? null,
    };
  }

  private active(namespace: string, name: string) {
    return [...this.agents.values()].find((a) => a.state === 'active' && a.namespace === namespace && a.name === name);
  }

  private stored(id: string) {
    const agent = this.agents.get(id);
    if (!agent) throw new Error(`Record to update not found (agent ${id})`);
    return agent;
  }

  private withLast(agent: AgentRecord & { lastOperationId: string | null }): AgentWithLastOperation {
    return { ...record(agent), lastOperation: agent.lastOperationId ? this.operationRecord(agent.lastOperationId) : null };
  }

  private operationRecord(id: string): OperationRecord | null {
    const op = this.operations.get(id);
    if (!op) return null;
    const { audit: _audit, idempotencyKey: _key, ...recorded } = copyOperation(op);
    return recorded;
  }

  /** The store's clock, one millisecond on at each write: entries keep their order. */
  private tick(): Date {
    this.now = new Date(this.now.getTime() + 1);
    return new Date(this.now);
  }
}

/** A JSON column as the store gives it back: what JSON keeps (no undefined keys, no class instances). */
function json<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** An agent as the store reads it: a copy, without the fake's bookkeeping. */
function record(agent: AgentRecord & { lastOperationId: string | null }): AgentRecord {
  const { lastOperationId: _last, ...rest } = agent;
  return {
    ...rest, spec: json(rest.spec), values: json(rest.values), chart: { ...rest.chart }, origin: rest.origin && { ...rest.origin },
    createdAt: new Date(rest.createdAt), updatedAt: new Date(rest.updatedAt), deletedAt: rest.deletedAt && new Date(rest.deletedAt),
  };
}

/*
 * Copies as the store reads them, made in this realm: not structuredClone, whose objects come from
 * Node's own realm under jest and fail isDeepStrictEqual against the code's (another prototype).
 */
function copyOperation(op: JournaledOperation): JournaledOperation {
  return {
    ...op, request: json(op.request), intent: op.intent && json(op.intent), audit: op.audit && { ...op.audit },
    startedAt: new Date(op.startedAt), finishedAt: op.finishedAt && new Date(op.finishedAt),
  };
}

function copyRevision(revision: RevisionRecord): RevisionRecord {
  return { ...revision, spec: json(revision.spec), values: json(revision.values), createdAt: new Date(revision.createdAt) };
}
