import { randomBytes, randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { namespaceMatcher, namespacePatternToSqlLike } from '@app/auth';
import { Prisma, Store } from '@app/store';
import { auditColumns, type AuditEntry } from '@app/doors';
import { isUniqueViolation } from '../persistence/lease.repository.js';
import type { ChangeState } from './changes.dto.js';
import { appendEvent, type NewChangeEvent } from '../events/outbox.js';

export interface Approval {
  subject: string;
  actor: string;
  at: string;
  comment: string | null;
}

/** What a proposal stores (docs/approvals.md). */
export interface ChangeRecord {
  id: string;
  state: ChangeState;
  operation: string;
  namespace: string;
  name: string;
  /** The write as asked: the service method's input, and a blueprint origin when a blueprint's tool asked. */
  request: { input: Record<string, unknown>; origin?: Record<string, unknown> };
  /** The proposer as the write runner is given it (a Caller). */
  caller: Record<string, unknown>;
  proposer: string;
  /** The MCP session (Streamable HTTP) the proposal came in, told when the change is decided; null over REST and stdio. */
  proposerSession: string | null;
  proposalKey: string | null;
  plannedVersion: number | null;
  /** The dry run's values, warnings and whole answer (what a retry with the same key is answered). */
  preview: { values: { before: unknown; after: unknown }; warnings: unknown[]; answer?: object };
  diff: string;
  rule: string;
  approvers: string;
  required: number;
  approvals: Approval[];
  version: number;
  decidedBy: string | null;
  comment: string | null;
  message: string | null;
  operationId: string | null;
  expiresAt: Date;
  createdAt: Date;
  updatedAt: Date;
}

export type NewChange = Pick<ChangeRecord, 'operation' | 'namespace' | 'name' | 'request' | 'caller' | 'proposer' | 'proposerSession' | 'plannedVersion' | 'preview' | 'diff' | 'rule' | 'approvers' | 'required' | 'expiresAt'>;

export interface ChangeFilter {
  state?: string;
  namespace?: string;
  proposer?: string;
  operation?: string;
}

const json = (value: unknown) => value as Prisma.InputJsonValue;
type ChangeRow = Awaited<ReturnType<Store['client']['change']['findUniqueOrThrow']>>;

function toRecord(row: ChangeRow): ChangeRecord {
  return { ...row, state: row.state as ChangeState } as unknown as ChangeRecord;
}

/** Changes in the store, and their journal entries; the only change code that touches Prisma. */
@Injectable()
export class ChangesRepository {
  constructor(private readonly store: Store) {}

  private get db() {
    return this.store.client;
  }

  /** The store's clock: expiry and a stalled apply are measured by it (a test moves it), so every time a change holds is its too. */
  now(): Promise<Date> {
    return this.store.now();
  }

  /**
   * Stores a proposal; with an idempotency key another request already stored under it (a retry at
   * the same moment) is answered instead, `created: false`.
   */
  async create(proposer: string, key: string | undefined, change: Omit<NewChange, 'proposer'>): Promise<ChangeRecord & { created: boolean }> {
    const now = await this.now();
    try {
      const row = await this.db.$transaction(async (tx) => {
        const created = await tx.change.create({
          data: {
            ...change, proposer, proposalKey: key ?? null, createdAt: now, updatedAt: now, id: `ch-${randomBytes(6).toString('hex')}`, state: 'pending',
            request: json(change.request), caller: json(change.caller), preview: json(change.preview), approvals: json([]),
          },
        });
        await appendEvent(tx, changeEvent('proposed', created, proposer, { plannedVersion: created.plannedVersion, required: created.required, expiresAt: created.expiresAt.toISOString() }));
        return created;
      });
      return { ...toRecord(row), created: true };
    } catch (error) {
      const earlier = key !== undefined && isUniqueViolation(error) ? await this.findByKey(proposer, key) : null;
      if (!earlier) throw error;
      return { ...earlier, created: false };
    }
  }

  async find(id: string): Promise<ChangeRecord | null> {
    const row = await this.db.change.findUnique({ where: { id } });
    return row ? toRecord(row) : null;
  }

  /** The change `proposer` made with the idempotency key `key`. */
  async findByKey(proposer: string, key: string): Promise<ChangeRecord | null> {
    const row = await this.db.change.findUnique({ where: { proposer_proposalKey: { proposer, proposalKey: key } } });
    return row ? toRecord(row) : null;
  }

  /**
   * What the changes sweep finishes (oldest first, at most `limit`): `applying` changes untouched
   * since `stalledBefore` (their replica died mid-write, or the write's outcome was not known), and
   * `pending` ones whose expiry is past `now`.
   */
  async unsettled(stalledBefore: Date, now: Date, limit: number): Promise<ChangeRecord[]> {
    const rows = await this.db.change.findMany({
      where: { OR: [{ state: 'applying', updatedAt: { lt: stalledBefore } }, { state: 'pending', expiresAt: { lte: now } }] },
      orderBy: [{ updatedAt: 'asc' }, { id: 'asc' }],
      take: limit,
    });
    return rows.map(toRecord);
  }

  /** Newest first, at most `limit`; `patterns`: only in namespaces these policy patterns match (all when undefined). */
  async list(filter: ChangeFilter, limit: number, patterns?: string[]): Promise<ChangeRecord[]> {
    const namespaces = patterns && (await this.namespacesMatching(patterns));
    const where = { ...filter, ...(namespaces && { AND: [{ namespace: { in: namespaces } }] }) };
    const rows = await this.db.change.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: limit });
    return rows.map(toRecord);
  }

  /** The namespaces changes are in that policy patterns match, as the policy matches them; undefined for `*`. */
  private async namespacesMatching(patterns: string[]): Promise<string[] | undefined> {
    if (patterns.includes('*')) return undefined;
    const wild = patterns.filter((p) => p.includes('*'));
    const exact = patterns.filter((p) => !p.includes('*'));
    if (wild.length === 0) return exact;
    const like = Prisma.join(wild.map((p) => Prisma.sql`"namespace" LIKE ${namespacePatternToSqlLike(p)}`), ' OR ');
    const found = await this.db.$queryRaw<{ namespace: string }[]>`SELECT DISTINCT "namespace" FROM "Change" WHERE ${like}`;
    const matchers = wild.map(namespaceMatcher);
    return [...new Set([...exact, ...found.map((r) => r.namespace).filter((ns) => matchers.some((matches) => matches(ns)))])];
  }

  /**
   * Adds an approval on the version it was read at (and, with the last one needed, moves the change
   * to `applying` in the same UPDATE): of two approvers at the same moment one writes, the other
   * reads again. False when the change moved since.
   */
  async approve(change: ChangeRecord, approvals: Approval[], applying: boolean): Promise<boolean> {
    const now = await this.now();
    return this.db.$transaction(async (tx) => {
      const { count } = await tx.change.updateMany({
        where: { id: change.id, version: change.version, state: 'pending' },
        data: { approvals: json(approvals), version: { increment: 1 }, updatedAt: now, ...(applying && { state: 'applying' }) },
      });
      if (count !== 1) return false;
      const by = approvals[approvals.length - 1]?.actor ?? 'unknown';
      await appendEvent(tx, changeEvent(applying ? 'approved' : 'approval_added', change, by, { approvals: approvals.length, required: change.required }));
      return true;
    });
  }

  /** Moves the change from `from` to the state in `data`, in one conditional UPDATE: true for the one caller that moved it. */
  async transition(id: string, from: ChangeState, data: Partial<Pick<ChangeRecord, 'state' | 'decidedBy' | 'comment' | 'message' | 'operationId'>> & { result?: unknown }): Promise<boolean> {
    const { result, ...rest } = data;
    const now = await this.now();
    return this.db.$transaction(async (tx) => {
      const { count } = await tx.change.updateMany({ where: { id, state: from }, data: { ...rest, ...(result !== undefined && { result: json(result) }), version: { increment: 1 }, updatedAt: now } });
      if (count !== 1) return false;
      // a change that stays `applying` (its write's outcome not known yet) has no news to tell
      if (data.state && data.state !== from) {
        const change = await tx.change.findUniqueOrThrow({ where: { id } });
        await appendEvent(tx, changeEvent(data.state, change, data.decidedBy ?? change.proposer, { from, operationId: change.operationId, message: change.message }));
      }
      return true;
    });
  }

  /** Takes an `applying` change over to resume it, on the version it was read at: true for the one reader that did. */
  async claim(change: ChangeRecord): Promise<boolean> {
    const { count } = await this.db.change.updateMany({ where: { id: change.id, state: 'applying', version: change.version }, data: { version: { increment: 1 }, updatedAt: await this.now() } });
    return count === 1;
  }

  /** A journal entry of a change's step (proposed, approved, rejected, withdrawn, expired): what list_operations shows. */
  async journal(entry: AuditEntry & { namespace: string; name: string; state: 'proposed' | 'succeeded'; note: string; request: Record<string, unknown> }): Promise<void> {
    const now = await this.store.now();
    await this.db.operation.create({
      data: {
        id: randomUUID(),
        kind: entry.operation,
        namespace: entry.namespace,
        name: entry.name,
        state: entry.state,
        request: json(entry.request),
        actor: entry.actor,
        startedAt: now,
        finishedAt: now,
        ...auditColumns(entry),
        actorNote: entry.actorNote ? `${entry.note} (${entry.actorNote})` : entry.note,
      },
    });
  }
}

/**
 * A change's event (docs/contract.md §14): `io.agent-manager.change.<what happened>`, its subject the
 * agent it changes, so it is ordered with that agent's own events.
 */
function changeEvent(
  what: string,
  change: { id: string; operation: string; namespace: string; name: string; proposer: string },
  actor: string,
  data: Record<string, unknown>,
): NewChangeEvent {
  return {
    type: `change.${what}`,
    subject: `${change.namespace}/${change.name}`,
    namespace: change.namespace,
    data: { changeId: change.id, operation: change.operation, proposer: change.proposer, actor, ...data },
  };
}
