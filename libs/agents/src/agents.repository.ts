import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Prisma, Store, type StoreClient } from '@app/store';
import {
  toAgentRecord,
  toOperationRecord,
  toRevisionRecord,
  type AgentRecord,
  type AgentWithLastOperation,
  type OperationRecord,
  type RevisionRecord,
} from './agents.records.js';
import type { AgentSpec, ChartValues, OperationIntent, OperationKind } from './agents.types.js';
import { compareKeys, isAfter, matchesLabel, type CursorKey } from './agents.paging.js';

export interface AppliedChange {
  spec: AgentSpec;
  values: ChartValues;
  helmRevision: number | null;
  kind: 'create' | 'update' | 'rollback';
  actor: string;
  operationId: string;
  rolledBackTo?: number;
  /** The chart the change was applied with, when it differs from the agent's. */
  chart?: { ref: string; version?: string };
}

const json = (value: unknown) => value as Prisma.InputJsonValue;

/** Agents, their revisions and the operation journal, in the configured store. */
@Injectable()
export class AgentsRepository {
  constructor(private readonly store: Store) {}

  private get db() {
    return this.store.client;
  }

  async findActive(namespace: string, name: string): Promise<AgentWithLastOperation | null> {
    // One snapshot for both reads: a write recorded in between (agent and operation commit
    // together) must not show its operation succeeded next to the agent before it.
    return this.db.$transaction(
      async (tx) => {
        const agent = await tx.agent.findUnique({ where: { activeKey: activeKey(namespace, name) } });
        if (!agent) return null;
        const last = await lastOperationIn(tx, namespace, name, agent.id);
        return { ...toAgentRecord(agent), lastOperation: last && toOperationRecord(last) };
      },
      // the SQLite client's type knows only Serializable; the PostgreSQL client takes RepeatableRead
      { isolationLevel: (this.store.provider === 'postgresql' ? 'RepeatableRead' : 'Serializable') as Prisma.TransactionIsolationLevel },
    );
  }

  async lastOperation(namespace: string, name: string, agentId?: string): Promise<OperationRecord | null> {
    const last = await lastOperationIn(this.db, namespace, name, agentId);
    return last && toOperationRecord(last);
  }

  /** One page of agents in (namespace, name, id) order after the cursor, with their last operations. */
  async listPage(filter: { namespace?: string; state?: 'active' | 'deleted'; label?: string; after?: CursorKey; limit: number }): Promise<{ items: AgentWithLastOperation[]; more: boolean }> {
    const rows = await this.db.agent.findMany({
      where: { namespace: filter.namespace, state: filter.state },
      orderBy: [{ namespace: 'asc' }, { name: 'asc' }, { id: 'asc' }],
    });
    const matching = rows
      .map(toAgentRecord)
      .filter((row) => matchesLabel(row.spec, filter.label) && (!filter.after || isAfter(row, filter.after)))
      .sort(compareKeys);
    const page = matching.slice(0, filter.limit);
    const items = await Promise.all(page.map(async (agent) => ({ ...agent, lastOperation: await this.lastOperation(agent.namespace, agent.name, agent.id) })));
    return { items, more: matching.length > filter.limit };
  }

  async revisions(agentId: string): Promise<RevisionRecord[]> {
    const rows = await this.db.agentRevision.findMany({ where: { agentId }, orderBy: { revision: 'asc' } });
    return rows.map(toRevisionRecord);
  }

  async revision(agentId: string, revision: number): Promise<RevisionRecord | null> {
    const row = await this.db.agentRevision.findUnique({ where: { agentId_revision: { agentId, revision } } });
    return row && toRevisionRecord(row);
  }

  /** Journals a write before helm runs, with what it means to apply (for recovery after a crash). */
  async startOperation(input: {
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
  }): Promise<OperationRecord> {
    const row = await this.db.operation.create({
      data: {
        id: input.id,
        kind: input.kind,
        namespace: input.namespace,
        name: input.name,
        agentId: input.agentId ?? null,
        state: 'pending',
        request: json(input.request),
        actor: input.actor,
        owner: input.owner,
        intent: input.intent ? json(input.intent) : undefined,
        baseHelmRevision: input.baseHelmRevision ?? null,
      },
    });
    return toOperationRecord(row);
  }

  async operation(id: string): Promise<OperationRecord | null> {
    const row = await this.db.operation.findUnique({ where: { id } });
    return row && toOperationRecord(row);
  }

  async pendingOperations(of?: { namespace: string; name: string }): Promise<OperationRecord[]> {
    const rows = await this.db.operation.findMany({ where: { state: 'pending', ...of }, orderBy: { startedAt: 'asc' } });
    return rows.map(toOperationRecord);
  }

  async agentById(id: string): Promise<AgentRecord | null> {
    const row = await this.db.agent.findUnique({ where: { id } });
    return row && toAgentRecord(row);
  }

  /** Closes a pending operation as failed; false when it was no longer pending. */
  async failOperation(id: string, errorCode: string, errorMessage: string): Promise<boolean> {
    const closed = await this.db.operation.updateMany({ where: { id, state: 'pending' }, data: { state: 'failed', errorCode, errorMessage, finishedAt: new Date() } });
    return closed.count === 1;
  }

  /** Records a create: the agent, its revision 1 and the operation's success, at once. */
  async recordCreate(namespace: string, name: string, chart: { ref: string; version?: string }, change: AppliedChange): Promise<AgentRecord> {
    const id = randomUUID();
    return this.db.$transaction(async (tx) => {
      const agent = await tx.agent.create({
        data: {
          id,
          namespace,
          name,
          activeKey: activeKey(namespace, name),
          state: 'active',
          spec: json(change.spec),
          values: json(change.values),
          chartRef: chart.ref,
          chartVersion: chart.version ?? null,
          revision: 1,
          helmRevision: change.helmRevision,
          createdBy: change.actor,
          updatedBy: change.actor,
        },
      });
      await tx.agentRevision.create({ data: revisionData(id, 1, change) });
      await closeSucceeded(tx, change.operationId, { agentId: id, helmRevision: change.helmRevision });
      return toAgentRecord(agent);
    });
  }

  /** Records an update or rollback: the agent's new state, a new revision, the operation's success. */
  async recordChange(agent: AgentRecord, change: AppliedChange): Promise<AgentRecord> {
    const revision = agent.revision + 1;
    return this.db.$transaction(async (tx) => {
      const updated = await tx.agent.update({
        where: { id: agent.id },
        data: {
          spec: json(change.spec),
          values: json(change.values),
          revision,
          helmRevision: change.helmRevision,
          ...(change.chart ? { chartRef: change.chart.ref, chartVersion: change.chart.version ?? null } : {}),
          version: { increment: 1 },
          updatedBy: change.actor,
        },
      });
      await tx.agentRevision.create({ data: revisionData(agent.id, revision, change) });
      await closeSucceeded(tx, change.operationId, { helmRevision: change.helmRevision });
      return toAgentRecord(updated);
    });
  }

  /** Marks the agent deleted (its history is kept) and the operation succeeded. */
  async recordDelete(agent: AgentRecord, operationId: string, actor: string): Promise<AgentRecord> {
    return this.db.$transaction(async (tx) => {
      const deleted = await tx.agent.update({
        where: { id: agent.id },
        data: { state: 'deleted', activeKey: null, deletedAt: new Date(), updatedBy: actor, version: { increment: 1 } },
      });
      await closeSucceeded(tx, operationId, {});
      return toAgentRecord(deleted);
    });
  }
}

/**
 * Closes a pending operation as succeeded inside a record transaction; an operation someone
 * already closed aborts the transaction, so a change is never recorded twice.
 */
async function closeSucceeded(tx: Pick<StoreClient, 'operation'>, id: string, data: { agentId?: string; helmRevision?: number | null }): Promise<void> {
  const closed = await tx.operation.updateMany({ where: { id, state: 'pending' }, data: { ...data, state: 'succeeded', finishedAt: new Date() } });
  if (closed.count !== 1) throw new Error(`operation ${id} is no longer pending: it was recorded or closed elsewhere`);
}

function activeKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

function revisionData(agentId: string, revision: number, change: AppliedChange) {
  return {
    id: randomUUID(),
    agentId,
    revision,
    helmRevision: change.helmRevision,
    kind: change.kind,
    spec: json(change.spec),
    values: json(change.values),
    createdBy: change.actor,
    operationId: change.operationId,
    rolledBackTo: change.rolledBackTo ?? null,
  };
}

function lastOperationIn(db: Pick<StoreClient, 'operation'>, namespace: string, name: string, agentId?: string) {
  return db.operation.findFirst({
    where: agentId ? { OR: [{ agentId }, { namespace, name, agentId: null }] } : { namespace, name },
    orderBy: [{ startedAt: 'desc' }, { id: 'desc' }],
  });
}
