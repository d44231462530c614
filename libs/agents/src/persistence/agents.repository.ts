import { createHash, randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { Injectable } from '@nestjs/common';
import { namespaceMatcher, namespacePatternToSqlLike } from '@app/auth';
import { Prisma, Store, type AgentRow, type StoreClient } from '@app/store';
import type { CursorKey } from '../api/cursors.js';
import { chartColumns } from '../domain/chart-identity.js';
import {
  OPERATION_COLUMN_PREFIX,
  OPERATION_SUMMARY_COLUMNS,
  toAgentRecord,
  toAgentWithLastOperation,
  toOperationRecord,
  toRevisionRecord,
  type AgentRecord,
  type AgentWithLastOperation,
  type AgentWithOperationRow,
  type OperationRecord,
  type RevisionKind,
  type RevisionRecord,
} from './records.js';
import type { AgentOrigin, AgentSpec, ChartValues, OperationIntent } from '../domain/agent-spec.js';
import type { AgentWriteStore, OperationStart } from '../runner/ports.js';
import { agentEvent, appendEvent } from '../events/outbox.js';
import { auditColumns, operationWhere, toAuditedOperation, type AuditedOperation, type AuditEntry, type OperationFilter } from './journal.records.js';

export type { AgentWithLastOperation } from './records.js';

/** A chart move a write journaled: the chart it applied, and the one the agent ran before (when the rollout kept it). */
export interface ChartMove {
  to: NonNullable<OperationIntent['chart']>;
  from: { ref: string; version: string | null } | null;
}

export interface AppliedChange {
  spec: AgentSpec;
  values: ChartValues;
  helmRevision: number | null;
  kind: RevisionKind;
  actor: string;
  operationId: string;
  rolledBackTo?: number;
  /** The chart the change was applied with, when it differs from the agent's. */
  chart?: { ref: string; version?: string };
  /** A create through a blueprint, or an upgrade to another of its versions. */
  origin?: AgentOrigin;
}

/** An active agent as the reconciler compares it with its release. */
export interface StoreSideRow {
  namespace: string;
  name: string;
  helmRevision: number | null;
  values: ChartValues;
}

export interface AgentListFilter {
  namespace?: string;
  /** Both states when absent. */
  state?: 'active' | 'deleted';
  /** `key=value` matches that label exactly; `key` matches any value. */
  label?: string;
  /** Only agents created from this blueprint. */
  blueprint?: string;
  /** Only agents whose recorded chart has this name (Agent.chartName). */
  chartName?: string;
  /** Only agents whose recorded chart has this version (Agent.chartVersion). */
  chartVersion?: string;
  /** Where the previous page ended: the page starts after this key (its agent may be gone). */
  after?: CursorKey;
  /** Only namespaces matching one of these SQL LIKE operands (namespacePatternToSqlLike); all when absent, none when empty. */
  namespaceLike?: string[];
  limit: number;
}

export interface AgentPage {
  /** In listing order: namespace, name, id by code point. */
  items: AgentWithLastOperation[];
  /** Whether agents follow the last item. */
  more: boolean;
}


const json = (value: unknown) => value as Prisma.InputJsonValue;

/** The summary columns of the last operation `o`, named as AgentWithOperationRow names them. */
const LAST_OPERATION_COLUMNS = Prisma.raw(
  OPERATION_SUMMARY_COLUMNS.map((column) => `o."${column}" AS "${OPERATION_COLUMN_PREFIX}${column}"`).join(', '),
);

/** Agents, their revisions and the operation journal, in the configured store. */
@Injectable()
export class AgentsRepository implements AgentWriteStore {
  constructor(private readonly store: Store) {}

  private get db() {
    return this.store.client;
  }

  /**
   * The active agent of a name with its last operation, in one statement through the unique
   * activeKey index and the operation's primary key. One statement is one snapshot on both
   * providers: a write recorded meanwhile (agent and operation commit together) never shows its
   * operation next to the agent as it was before; and it costs a tenth of a transaction.
   */
  async findActive(namespace: string, name: string): Promise<AgentWithLastOperation | null> {
    const rows = await this.db.$queryRaw<AgentWithOperationRow[]>`SELECT a.*, ${LAST_OPERATION_COLUMNS} FROM "Agent" a
      LEFT JOIN "Operation" o ON o."id" = a."lastOperationId" WHERE a."activeKey" = ${activeKey(namespace, name)}`;
    return rows.length > 0 ? toAgentWithLastOperation(rows[0]) : null;
  }

  /**
   * The operation last started on the agent `agentId` (a create of its name that never got an
   * agent counts while it is active), or without `agentId` on any agent of that name.
   */
  async lastOperation(namespace: string, name: string, agentId?: string): Promise<OperationRecord | null> {
    if (agentId) {
      const agent = await this.db.agent.findUnique({ where: { id: agentId }, select: { lastOperationId: true } });
      const row = agent?.lastOperationId ? await this.db.operation.findUnique({ where: { id: agent.lastOperationId } }) : null;
      return row ? toOperationRecord(row) : null;
    }
    const row = await this.db.operation.findFirst({ where: { namespace, name }, orderBy: [{ startedAt: 'desc' }, { id: 'desc' }] });
    return row ? toOperationRecord(row) : null;
  }

  /**
   * One page of agents in listing order, filtered, paged and ordered in the database through an
   * index; it loads the page's agents (and one more key) with their last operations in one
   * statement, which is one snapshot on both providers.
   */
  async listPage(filter: AgentListFilter): Promise<AgentPage> {
    const rows = await this.db.$queryRaw<AgentWithOperationRow[]>`SELECT a.*, ${LAST_OPERATION_COLUMNS}
      FROM (${pageQuery(filter)}) AS "page" JOIN "Agent" a ON a."id" = "page"."id"
      LEFT JOIN "Operation" o ON o."id" = a."lastOperationId"
      ORDER BY a."namespace", a."name", a."id"`;
    return { items: rows.slice(0, filter.limit).map(toAgentWithLastOperation), more: rows.length > filter.limit };
  }

  async revisions(agentId: string): Promise<RevisionRecord[]> {
    const rows = await this.db.agentRevision.findMany({ where: { agentId }, orderBy: { revision: 'asc' } });
    return rows.map(toRevisionRecord);
  }

  async revision(agentId: string, revision: number): Promise<RevisionRecord | null> {
    const row = await this.db.agentRevision.findUnique({ where: { agentId_revision: { agentId, revision } } });
    return row ? toRevisionRecord(row) : null;
  }

  /** The revision an operation recorded, if it recorded one. */
  async revisionOfOperation(operationId: string): Promise<RevisionRecord | null> {
    const row = await this.db.agentRevision.findFirst({ where: { operationId } });
    return row ? toRevisionRecord(row) : null;
  }

  /** Passes the idempotency claims of one operation to another that carried out its intent (the reconciler's). */
  async relinkKeys(from: string, to: string): Promise<void> {
    await this.db.idempotencyRecord.updateMany({ where: { operationId: from, state: 'pending' }, data: { operationId: to } });
  }

  /**
   * Journals a write before helm runs, with what it means to apply (for recovery after a crash),
   * and makes it the last operation of its agent (by id, or the active agent of its name).
   */
  async startOperation(input: OperationStart): Promise<OperationRecord> {
    return this.db.$transaction(async (tx) => {
      const row = await tx.operation.create({
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
          ...(input.audit && auditColumns(input.audit)),
        },
      });
      // raw, so that the agent's updatedAt (Prisma's @updatedAt) keeps meaning "last change applied"
      if (input.agentId) await tx.$executeRaw`UPDATE "Agent" SET "lastOperationId" = ${row.id} WHERE "id" = ${input.agentId}`;
      else await tx.$executeRaw`UPDATE "Agent" SET "lastOperationId" = ${row.id} WHERE "activeKey" = ${activeKey(input.namespace, input.name)}`;
      if (input.idempotencyKey) await tx.idempotencyRecord.updateMany({ where: { key: input.idempotencyKey, state: 'pending' }, data: { operationId: row.id } });
      return toOperationRecord(row);
    });
  }

  async operation(id: string): Promise<OperationRecord | null> {
    const row = await this.db.operation.findUnique({ where: { id } });
    return row ? toOperationRecord(row) : null;
  }

  async pendingOperations(of?: { namespace: string; name: string }): Promise<OperationRecord[]> {
    const rows = await this.db.operation.findMany({ where: { state: 'pending', ...of }, orderBy: { startedAt: 'asc' } });
    return rows.map(toOperationRecord);
  }

  async agentById(id: string): Promise<AgentRecord | null> {
    const row = await this.db.agent.findUnique({ where: { id } });
    return row ? toAgentRecord(row) : null;
  }

  /** Closes a pending operation as failed; false when it was no longer pending. */
  async failOperation(id: string, errorCode: string, errorMessage: string): Promise<boolean> {
    const closed = await this.db.operation.updateMany({ where: { id, state: 'pending' }, data: { state: 'failed', errorCode, errorMessage, finishedAt: this.store.clock.now() } });
    return closed.count === 1;
  }

  /**
   * Closes a pending operation as succeeded inside a record transaction; an operation someone
   * already closed aborts the transaction, so a change is never recorded twice. Its finishedAt is
   * the store's clock, the one readers compare it with (an MCP task's grace, the journal's ages).
   */
  private async closeSucceeded(tx: Pick<StoreClient, 'operation'>, id: string, data: { agentId?: string; helmRevision?: number | null }): Promise<OperationRecord> {
    try {
      return toOperationRecord(await tx.operation.update({ where: { id, state: 'pending' }, data: { ...data, state: 'succeeded', finishedAt: this.store.clock.now() } }));
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2025') {
        throw new Error(`operation ${id} is no longer pending: it was recorded or closed elsewhere`, { cause: error });
      }
      throw error;
    }
  }

  /**
   * Records a create: the agent, its labels, its revision 1 and the operation's success, at once.
   * Like recordChange and recordDelete, it returns the agent with the operation it closed as its last.
   */
  async recordCreate(namespace: string, name: string, chart: { ref: string; version?: string }, change: AppliedChange): Promise<AgentWithLastOperation> {
    const id = randomUUID();
    return this.db.$transaction(async (tx) => {
      const origin = await originNow(tx, change.origin);
      const agent = await tx.agent.create({
        data: {
          id,
          version: await firstVersion(tx, namespace, name),
          namespace,
          name,
          activeKey: activeKey(namespace, name),
          state: 'active',
          spec: json(change.spec),
          values: json(change.values),
          ...chartColumns(chart),
          revision: 1,
          helmRevision: change.helmRevision,
          createdBy: change.actor,
          updatedBy: change.actor,
          lastOperationId: change.operationId,
          blueprintName: origin?.blueprint ?? null,
          blueprintVersion: origin?.version ?? null,
        },
      });
      await tx.agentLabel.createMany({ data: labelRows(agent, change.spec) });
      await tx.agentRevision.create({ data: revisionData(id, 1, change) });
      const closed = await this.closeSucceeded(tx, change.operationId, { agentId: id, helmRevision: change.helmRevision });
      const recorded = toAgentRecord(agent);
      await appendEvent(tx, agentEvent('created', recorded, closed, { before: null, after: change.spec }));
      return { ...recorded, lastOperation: closed };
    });
  }

  /** Records an update or rollback: the agent's new state and labels, a new revision, the operation's success. */
  async recordChange(agent: AgentRecord, change: AppliedChange): Promise<AgentWithLastOperation> {
    const revision = agent.revision + 1;
    return this.db.$transaction(async (tx) => {
      const origin = await originNow(tx, change.origin);
      const updated = await tx.agent.update({
        where: { id: agent.id },
        data: {
          spec: json(change.spec),
          values: json(change.values),
          revision,
          helmRevision: change.helmRevision,
          ...(change.chart ? chartColumns(change.chart) : {}),
          ...(origin ? { blueprintName: origin.blueprint, blueprintVersion: origin.version } : {}),
          version: { increment: 1 },
          updatedBy: change.actor,
        },
      });
      // An active agent's label rows follow its spec's labels: rewritten only when those changed.
      if (!isDeepStrictEqual(agent.spec.labels ?? {}, change.spec.labels ?? {})) {
        await tx.agentLabel.deleteMany({ where: { agentId: agent.id } });
        await tx.agentLabel.createMany({ data: labelRows(updated, change.spec) });
      }
      await tx.agentRevision.create({ data: revisionData(agent.id, revision, change) });
      const closed = await this.closeSucceeded(tx, change.operationId, { helmRevision: change.helmRevision });
      const recorded = toAgentRecord(updated);
      const kind = change.kind === 'rollback' ? 'rolled_back' : 'updated';
      await appendEvent(tx, agentEvent(kind, recorded, closed, { before: agent.spec, after: change.spec }, change.rolledBackTo !== undefined ? { rolledBackTo: change.rolledBackTo } : {}));
      return { ...recorded, lastOperation: closed };
    });
  }

  /** Marks the agent deleted (its history and labels are kept) and the operation succeeded. */
  async recordDelete(agent: AgentRecord, operationId: string, actor: string): Promise<AgentWithLastOperation> {
    return this.db.$transaction(async (tx) => {
      const deleted = await tx.agent.update({
        where: { id: agent.id },
        data: { state: 'deleted', activeKey: null, deletedAt: new Date(), updatedBy: actor, version: { increment: 1 } },
      });
      await tx.agentLabel.updateMany({ where: { agentId: agent.id }, data: { state: 'deleted' } });
      const closed = await this.closeSucceeded(tx, operationId, {});
      const recorded = toAgentRecord(deleted);
      await appendEvent(tx, agentEvent('deleted', recorded, closed, { before: agent.spec, after: null }));
      return { ...recorded, lastOperation: closed };
    });
  }

  // --- blueprints (docs/contract.md §9) ---

  /** The active agents created from a blueprint: its holders. */
  async blueprintHolders(blueprint: string): Promise<AgentRecord[]> {
    const rows = await this.db.agent.findMany({ where: { blueprintName: blueprint, state: 'active' }, orderBy: [{ namespace: 'asc' }, { name: 'asc' }] });
    return rows.map(toAgentRecord);
  }

  /**
   * Moves an agent to another version of its blueprint whose values equal its own (no helm run, no
   * revision), closing the operation that journaled it, at once. Raw, so that the agent's updatedAt
   * keeps meaning "last change applied".
   */
  async recordOriginMove(agent: AgentRecord, origin: AgentOrigin, operationId: string): Promise<AgentWithLastOperation> {
    return this.db.$transaction(async (tx) => {
      const now = await originNow(tx, origin);
      if (now) await tx.$executeRaw`UPDATE "Agent" SET "blueprintName" = ${now.blueprint}, "blueprintVersion" = ${now.version} WHERE "id" = ${agent.id}`;
      const closed = await this.closeSucceeded(tx, operationId, {});
      const moved = toAgentRecord(await tx.agent.findUniqueOrThrow({ where: { id: agent.id } }));
      await appendEvent(tx, agentEvent('updated', moved, closed, { before: agent.spec, after: moved.spec }, { originMovedFrom: agent.origin }));
      return { ...moved, lastOperation: closed };
    });
  }

  // --- convergence (reconciler, adoption, history across lives) ---

  /** With no active agent of the name: the last create of it that was never recorded (pending or failed), if any. */
  async unrecordedCreate(namespace: string, name: string): Promise<OperationRecord | null> {
    const row = await this.db.operation.findFirst({ where: { namespace, name, kind: 'create' }, orderBy: [{ startedAt: 'desc' }, { id: 'desc' }] });
    if (!row || row.state === 'succeeded') return null;
    return toOperationRecord(row);
  }

  /** The names of every active agent, for a reconcile pass over all of them. */
  async activeNames(): Promise<{ namespace: string; name: string }[]> {
    return this.db.agent.findMany({ where: { state: 'active' }, select: { namespace: true, name: true }, orderBy: [{ namespace: 'asc' }, { name: 'asc' }] });
  }

  /**
   * What the reconciler compares of every active agent, a page at a time in (namespace, name)
   * order after `after`: the helm revision and values the store holds (no spec, no operation).
   */
  async reconcilePage(after: { namespace: string; name: string } | null, limit: number): Promise<StoreSideRow[]> {
    const where = after
      ? { state: 'active', OR: [{ namespace: { gt: after.namespace } }, { namespace: after.namespace, name: { gt: after.name } }] }
      : { state: 'active' };
    const rows = await this.db.agent.findMany({ where, select: { namespace: true, name: true, helmRevision: true, values: true }, orderBy: [{ namespace: 'asc' }, { name: 'asc' }], take: limit });
    return rows.map((row) => ({ namespace: row.namespace, name: row.name, helmRevision: row.helmRevision, values: row.values as unknown as ChartValues }));
  }

  /** Operations in the journal by state (for the journal_operations gauge). */
  async countOperationsByState(): Promise<Record<string, number>> {
    const groups = await this.db.operation.groupBy({ by: ['state'], _count: { _all: true } });
    return Object.fromEntries(groups.map((group) => [group.state, group._count._all]));
  }

  async countAgents(): Promise<number> {
    return this.db.agent.count();
  }

  /** Closes a pending operation as succeeded that records no agent change (an uninstall of a half-release). */
  async succeedOperation(id: string): Promise<void> {
    await this.db.$transaction(async (tx) => {
      const closed = await this.closeSucceeded(tx, id, {});
      const agent = closed.agentId ? await tx.agent.findUnique({ where: { id: closed.agentId } }) : null;
      const subject = agent ? toAgentRecord(agent) : { id: closed.agentId ?? '', namespace: closed.namespace, name: closed.name, version: 0, revision: 0, helmRevision: null };
      await appendEvent(tx, agentEvent('reconciled', subject, closed, { before: null, after: null }, { releaseRemoved: true }));
    });
  }

  /**
   * Records a release the store did not know, with its helm history as revisions (oldest first,
   * the last one current), and the adopting operation's success, at once.
   */
  async recordAdoption(namespace: string, name: string, chart: { ref: string; version?: string }, history: AppliedChange[], operationId: string): Promise<AgentWithLastOperation> {
    const id = randomUUID();
    const current = history[history.length - 1];
    return this.db.$transaction(async (tx) => {
      const agent = await tx.agent.create({
        data: {
          id, namespace, name, activeKey: activeKey(namespace, name), state: 'active', version: await firstVersion(tx, namespace, name),
          spec: json(current.spec), values: json(current.values), ...chartColumns(chart),
          revision: history.length, helmRevision: current.helmRevision, createdBy: history[0].actor, updatedBy: current.actor, lastOperationId: operationId,
        },
      });
      await tx.agentLabel.createMany({ data: labelRows(agent, current.spec) });
      for (const [at, change] of history.entries()) await tx.agentRevision.create({ data: revisionData(id, at + 1, change) });
      const closed = await this.closeSucceeded(tx, operationId, { agentId: id, helmRevision: current.helmRevision });
      const recorded = toAgentRecord(agent);
      await appendEvent(tx, agentEvent('adopted', recorded, closed, { before: null, after: current.spec }, { revisions: history.length }));
      return { ...recorded, lastOperation: closed };
    });
  }

  /** The revisions of every agent that had this name, each life oldest first, the lives in order. */
  async revisionsOfAllLives(namespace: string, name: string): Promise<{ agent: AgentRecord; revisions: RevisionRecord[] }[]> {
    const agents = await this.db.agent.findMany({ where: { namespace, name }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    const lives = [];
    for (const agent of agents) lives.push({ agent: toAgentRecord(agent), revisions: await this.revisions(agent.id) });
    return lives;
  }

  /**
   * The charts the given operations moved their agent between, by operation id: a fleet rollout's
   * move (and its rollback) journals the chart it applies in its intent, and the rollout keeps the
   * chart the agent ran before (RolloutAgent.fromChart); other writes keep the agent's chart. A
   * create's intent names the chart it installed (for recovery), which is no move. What a revision
   * diff renders each revision with.
   */
  async chartMoves(operationIds: string[]): Promise<Map<string, ChartMove>> {
    if (operationIds.length === 0) return new Map();
    const rows = await this.db.operation.findMany({ where: { id: { in: operationIds } }, select: { id: true, kind: true, intent: true, request: true, agentId: true } });
    const moves = new Map<string, ChartMove>();
    for (const row of rows) {
      const to = (row.intent as OperationIntent | null)?.chart;
      if (!to?.ref || row.kind === 'create') continue;
      const rollout = (row.request as { rollout?: unknown } | null)?.rollout;
      const entry = typeof rollout === 'string' && row.agentId ? await this.db.rolloutAgent.findFirst({ where: { rolloutId: rollout, agentId: row.agentId }, select: { fromChart: true } }) : null;
      const from = entry?.fromChart ? (JSON.parse(entry.fromChart) as { ref?: string; version?: string | null }) : null;
      moves.set(row.id, { to, from: from?.ref ? { ref: from.ref, version: from.version ?? null } : null });
    }
    return moves;
  }

  // --- audit ---

  /**
   * Journals a refusal by authorization (state "refused"): no agent is touched, no lease taken. A
   * refusal of the same principal, operation and namespace in the same minute of the store's clock
   * counts on that minute's entry (count, finishedAt: the last one) instead of adding a row: its id
   * is derived from those, so replicas refusing at once meet on one row.
   */
  async journalRefusal(entry: AuditEntry & { namespace: string; name: string; errorMessage: string }): Promise<void> {
    const now = await this.store.now();
    const id = refusalId(entry, now);
    const counted = () => this.db.operation.updateMany({ where: { id }, data: { count: { increment: 1 }, finishedAt: now } });
    if ((await counted()).count === 1) return;
    try {
      await this.db.operation.create({
        data: {
          id,
          kind: entry.operation,
          namespace: entry.namespace,
          name: entry.name,
          state: 'refused',
          request: {},
          actor: entry.actor,
          errorCode: 'forbidden',
          errorMessage: entry.errorMessage,
          startedAt: now,
          finishedAt: now,
          ...auditColumns(entry),
        },
      });
    } catch (error) {
      // another replica (or request) journaled this minute's entry first: count on it
      if (!isUniqueViolation(error)) throw error;
      await counted();
    }
  }

  /**
   * Removes up to `batches` × `batchSize` finished journal entries (succeeded, failed, refused) that
   * finished more than `olderThanMs` ago by the store's clock, oldest first; never a pending one, nor
   * an agent's last operation (its answer shows it). Returns how many it removed.
   */
  async purgeJournal(olderThanMs: number, { batchSize = 200, batches = 25 } = {}): Promise<number> {
    const before = new Date((await this.store.now()).getTime() - olderThanMs);
    let removed = 0;
    let after: { startedAt: Date; id: string } | undefined;
    for (let batch = 0; batch < batches; batch++) {
      const rows = await this.db.operation.findMany({
        where: {
          state: { in: ['succeeded', 'failed', 'refused', 'proposed'] },
          startedAt: { lt: before },
          finishedAt: { lt: before },
          ...(after && { OR: [{ startedAt: { gt: after.startedAt } }, { startedAt: after.startedAt, id: { gt: after.id } }] }),
        },
        select: { id: true, startedAt: true },
        orderBy: [{ startedAt: 'asc' }, { id: 'asc' }],
        take: batchSize,
      });
      if (rows.length === 0) break;
      after = rows[rows.length - 1];
      const ids = rows.map((row) => row.id);
      const last = await this.db.agent.findMany({ where: { lastOperationId: { in: ids } }, select: { lastOperationId: true } });
      const keep = new Set(last.map((agent) => agent.lastOperationId));
      const gone = await this.db.operation.deleteMany({ where: { id: { in: ids.filter((id) => !keep.has(id)) }, state: { not: 'pending' } } });
      removed += gone.count;
      if (rows.length < batchSize) break;
    }
    return removed;
  }

  /** The journal, newest first, filtered in SQL and cursor-paginated on (startedAt, id). */
  /** One journal entry by id, or null. */
  async operationById(id: string): Promise<AuditedOperation | null> {
    const row = await this.db.operation.findUnique({ where: { id } });
    return row ? toAuditedOperation(row) : null;
  }

  async operationsPage(filter: OperationFilter): Promise<{ items: AuditedOperation[]; more: boolean }> {
    const namespaces = filter.namespacePatterns && (await this.journalNamespaces(filter.namespacePatterns));
    const rows = await this.db.operation.findMany({
      where: operationWhere(filter, namespaces),
      orderBy: [{ startedAt: 'desc' }, { id: 'desc' }],
      take: filter.limit + 1,
    });
    return { items: rows.slice(0, filter.limit).map(toAuditedOperation), more: rows.length > filter.limit };
  }

  /**
   * The namespaces of the journal that policy patterns match, exactly as the policy matches them
   * (namespaceMatcher); undefined when a pattern is `*`. LIKE finds the candidates through the
   * namespace index; the matcher decides, as SQLite's LIKE ignores case and the journal also
   * holds refusals of requests that named no valid namespace.
   */
  private async journalNamespaces(patterns: string[]): Promise<string[] | undefined> {
    if (patterns.includes('*')) return undefined;
    const wild = patterns.filter((p) => p.includes('*'));
    const exact = patterns.filter((p) => !p.includes('*'));
    if (wild.length === 0) return exact;
    const like = Prisma.join(wild.map((p) => Prisma.sql`"namespace" LIKE ${namespacePatternToSqlLike(p)}`), ' OR ');
    const found = await this.db.$queryRaw<{ namespace: string }[]>`SELECT DISTINCT "namespace" FROM "Operation" WHERE ${like}`;
    const matchers = wild.map(namespaceMatcher);
    return [...new Set([...exact, ...found.map((r) => r.namespace).filter((ns) => matchers.some((matches) => matches(ns)))])];
  }
}

/**
 * The id of the journal entry that counts a principal's refusals of one operation in one namespace
 * during one minute: a UUID-shaped digest of those, the same on every replica.
 */
function refusalId(entry: AuditEntry & { namespace: string }, at: Date): string {
  const minute = Math.floor(at.getTime() / 60_000);
  const hex = createHash('sha256').update(JSON.stringify(['refusal', entry.subject ?? entry.actor, entry.authMethod, entry.operation, entry.namespace, minute])).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}

/**
 * The version a new agent of a name starts at: past every earlier agent of that name, so an
 * ETag (If-Match, expectedVersion) kept from a deleted one never matches its successor.
 */
async function firstVersion(tx: Pick<StoreClient, 'agent'>, namespace: string, name: string): Promise<number> {
  const earlier = await tx.agent.aggregate({ where: { namespace, name }, _max: { version: true } });
  return (earlier._max.version ?? 0) + 1;
}

/**
 * A write's blueprint origin as the blueprint stands when the write is recorded (AgentOrigin's
 * blueprintId): its current name, or undefined when it was deleted meanwhile.
 */
async function originNow(tx: Pick<StoreClient, 'blueprint'>, origin: AgentOrigin | undefined): Promise<AgentOrigin | undefined> {
  if (!origin?.blueprintId) return origin;
  const blueprint = await tx.blueprint.findUnique({ where: { id: origin.blueprintId }, select: { name: true } });
  return blueprint ? { ...origin, blueprint: blueprint.name } : undefined;
}

/**
 * The ids of a page and one more, in listing order. Each branch reads one index in that order
 * from the cursor on: Agent(state, namespace, name, id) or Agent(namespace, name, id) without a
 * label; AgentLabel(key[, value], state, namespace, name, agentId) with one. A label filter over
 * both states merges one branch per state.
 */
function pageQuery(filter: AgentListFilter): Prisma.Sql {
  const limit = filter.limit + 1;
  if (!filter.label) {
    const where = conditions([filter.state ? Prisma.sql`"state" = ${filter.state}` : null, ...pageConditions(filter, '"id"')]);
    return Prisma.sql`SELECT "id" FROM "Agent" ${where} ORDER BY "namespace", "name", "id" LIMIT ${limit}`;
  }
  const at = filter.label.indexOf('=');
  const label =
    at < 0 ? [Prisma.sql`"key" = ${filter.label}`] : [Prisma.sql`"key" = ${filter.label.slice(0, at)}`, Prisma.sql`"value" = ${filter.label.slice(at + 1)}`];
  const branch = (state: string) => {
    const where = conditions([...label, Prisma.sql`"state" = ${state}`, ...pageConditions(filter, '"agentId"')]);
    return Prisma.sql`SELECT "agentId" AS "id", "namespace", "name" FROM "AgentLabel" ${where} ORDER BY "namespace", "name", "agentId" LIMIT ${limit}`;
  };
  if (filter.state) return branch(filter.state);
  return Prisma.sql`SELECT "id" FROM (
      SELECT * FROM (${branch('active')}) AS "active" UNION ALL SELECT * FROM (${branch('deleted')}) AS "deleted"
    ) AS "page" ORDER BY "namespace", "name", "id" LIMIT ${limit}`;
}

function pageConditions(filter: AgentListFilter, idColumn: '"id"' | '"agentId"'): Prisma.Sql[] {
  const after = filter.after;
  return [
    filter.namespace !== undefined ? Prisma.sql`"namespace" = ${filter.namespace}` : null,
    filter.namespaceLike !== undefined ? namespaceLike(filter.namespaceLike) : null,
    filter.blueprint !== undefined
      ? idColumn === '"id"'
        ? Prisma.sql`"blueprintName" = ${filter.blueprint}`
        : Prisma.sql`"agentId" IN (SELECT "id" FROM "Agent" WHERE "blueprintName" = ${filter.blueprint})`
      : null,
    ...chartConditions(filter, idColumn),
    after ? Prisma.sql`("namespace", "name", ${Prisma.raw(idColumn)}) > (${after.namespace}, ${after.name}, ${after.id})` : null,
  ].filter((c): c is Prisma.Sql => c !== null);
}

/** The recorded chart's name and version (the label branch reads AgentLabel, which has no chart columns: by id). */
function chartConditions(filter: AgentListFilter, idColumn: '"id"' | '"agentId"'): Prisma.Sql[] {
  const own = [
    filter.chartName !== undefined ? Prisma.sql`"chartName" = ${filter.chartName}` : null,
    filter.chartVersion !== undefined ? Prisma.sql`"chartVersion" = ${filter.chartVersion}` : null,
  ].filter((c): c is Prisma.Sql => c !== null);
  if (own.length === 0 || idColumn === '"id"') return own;
  return [Prisma.sql`"agentId" IN (SELECT "id" FROM "Agent" WHERE ${Prisma.join(own, ' AND ')})`];
}

/** The policy's namespace patterns as LIKE operands; no pattern matches nothing. */
function namespaceLike(patterns: string[]): Prisma.Sql {
  if (patterns.length === 0) return Prisma.sql`1 = 0`;
  return Prisma.sql`(${Prisma.join(patterns.map((p) => Prisma.sql`"namespace" LIKE ${p}`), ' OR ')})`;
}

function conditions(parts: (Prisma.Sql | null)[]): Prisma.Sql {
  const present = parts.filter((c): c is Prisma.Sql => c !== null);
  return present.length > 0 ? Prisma.sql`WHERE ${Prisma.join(present, ' AND ')}` : Prisma.empty;
}

function labelRows(agent: AgentRow, spec: AgentSpec) {
  return Object.entries(spec.labels ?? {}).map(([key, value]) => ({
    agentId: agent.id,
    key,
    value,
    namespace: agent.namespace,
    name: agent.name,
    state: agent.state,
  }));
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
