import { Injectable } from '@nestjs/common';
import type { AuthMethod, Principal } from '@app/auth';
import { Store } from '@app/store';

/** The requestId prefix of a session's task in the McpAnswer table (a client's answers are UUIDs, notices `notice:`). */
const TASK = 'task:';

/** An MCP session as every replica reads it from the store. */
export interface McpSessionRecord {
  id: string;
  subject: string;
  authMethod: AuthMethod;
  query: string;
  clientName: string | null;
  clientVersion: string | null;
  logLevel: string | null;
  /** Whether the client declared form elicitation in initialize. */
  elicits: boolean;
  createdAt: Date;
  lastSeenAt: Date;
}

export interface NewMcpSession {
  id: string;
  principal: Principal;
  query: string;
  clientName?: string;
  clientVersion?: string;
  elicits?: boolean;
  replica: string;
}

/**
 * The Streamable HTTP sessions of /mcp, in the store: any replica serves any session id, a
 * replica that dies takes no session with it, and the per-principal cap and idle reaping hold
 * across replicas. Times are the store's clock, so replicas with skewed clocks agree.
 */
@Injectable()
export class McpSessionRepository {
  constructor(private readonly store: Store) {}

  private get db() {
    return this.store.client;
  }

  /**
   * Stores a new session unless its principal holds `cap` already, on every replica: the count
   * and the insert are one step. On SQLite one INSERT … SELECT (a write statement takes the
   * database's write lock before it reads, so two replicas' opens run one after the other); on
   * PostgreSQL a transaction that first takes an advisory lock of the principal, then inserts. Answers how many
   * sessions the principal held when refused, or null when stored.
   */
  async createWithin(session: NewMcpSession, cap: number): Promise<number | null> {
    const { id, principal, query, clientName, clientVersion, elicits = false, replica } = session;
    const { subject, method } = principal;
    const now = await this.store.now();
    const insert = this.db.$executeRaw`
      INSERT INTO "McpSession" ("id", "subject", "authMethod", "query", "clientName", "clientVersion", "elicits", "replica", "createdAt", "lastSeenAt")
      SELECT ${id}, ${subject}, ${method}, ${query}, ${clientName ?? null}, ${clientVersion ?? null}, ${elicits}, ${replica}, ${now}, ${now}
      WHERE (SELECT COUNT(*) FROM "McpSession" WHERE "subject" = ${subject} AND "authMethod" = ${method}) < ${cap}`;
    // PostgreSQL: one transaction of two statements (no interactive one, which would hold a pooled
    // connection per waiting open); READ COMMITTED gives the insert a snapshot taken after the lock.
    const lock = this.db.$queryRaw`SELECT pg_advisory_xact_lock(hashtext(${`mcp-session:${method}:${subject}`}))::text AS locked`;
    const inserted = this.store.provider === 'sqlite' ? await insert : (await this.db.$transaction([lock, insert]))[1];
    return inserted === 1 ? null : this.countOpen(principal);
  }

  /** Read on every request of a session: one statement by primary key, in SQL (a fourth of the typed query's CPU). */
  async find(id: string): Promise<McpSessionRecord | null> {
    const rows = await this.db.$queryRaw<(Omit<McpSessionRecord, 'authMethod' | 'elicits'> & { authMethod: string; elicits: boolean | number })[]>`
      SELECT "id", "subject", "authMethod", "query", "clientName", "clientVersion", "logLevel", "elicits", "createdAt", "lastSeenAt" FROM "McpSession" WHERE "id" = ${id}`;
    // SQLite's raw answer holds a boolean as 0 or 1.
    return rows.length > 0 ? { ...rows[0], authMethod: rows[0].authMethod as AuthMethod, elicits: Boolean(rows[0].elicits) } : null;
  }

  /** Marks a session used now. */
  async touch(id: string): Promise<void> {
    await this.db.mcpSession.updateMany({ where: { id }, data: { lastSeenAt: await this.store.now() } });
  }

  async setLogLevel(id: string, level: string): Promise<void> {
    await this.db.mcpSession.updateMany({ where: { id }, data: { logLevel: level } });
  }

  /** The principal's open sessions, on every replica. */
  async countOpen(principal: Principal): Promise<number> {
    return this.db.mcpSession.count({ where: { subject: principal.subject, authMethod: principal.method } });
  }

  /** Ends a session; false when it was not there. */
  async remove(id: string): Promise<boolean> {
    return (await this.db.mcpSession.deleteMany({ where: { id } })).count === 1;
  }

  /** Removes the sessions nobody used for `idleMs`; answers their ids. */
  async removeIdle(idleMs: number): Promise<string[]> {
    const idleSince = new Date((await this.store.now()).getTime() - idleMs);
    const idle = await this.db.mcpSession.findMany({ where: { lastSeenAt: { lt: idleSince } }, select: { id: true } });
    if (idle.length === 0) return [];
    const ids = idle.map((s) => s.id);
    const { count } = await this.db.mcpSession.deleteMany({ where: { id: { in: ids }, lastSeenAt: { lt: idleSince } } });
    if (count === ids.length) return ids;
    // A session used between the read and the delete stayed: only the ones really gone are closed here.
    const kept = await this.existing(ids);
    return ids.filter((id) => !kept.has(id));
  }

  /** Keeps answers to questions another replica's tool call asked, for that replica to take (a repeated one is kept once). */
  async saveAnswers(sessionId: string, answers: { requestId: string; message: string }[]): Promise<void> {
    for (const { requestId, message } of answers) {
      await this.db.$executeRaw`
        INSERT INTO "McpAnswer" ("sessionId", "requestId", "message", "createdAt") VALUES (${sessionId}, ${requestId}, ${message}, ${await this.store.now()})
        ON CONFLICT ("sessionId", "requestId") DO NOTHING`;
    }
  }

  /** The answer to one question, taken out of the store; null while none came. */
  async takeAnswer(sessionId: string, requestId: string): Promise<string | null> {
    const row = await this.db.mcpAnswer.findUnique({ where: { sessionId_requestId: { sessionId, requestId } } });
    if (!row) return null;
    await this.db.mcpAnswer.deleteMany({ where: { sessionId, requestId } });
    return row.message;
  }

  /**
   * The messages kept for `sessionIds` under a requestId starting with `prefix` (notices one replica
   * left for the replica holding the session's stream), taken out of the store: each row is deleted
   * before it is answered, so of two replicas asking at once one gets it.
   */
  async takeAnswersByPrefix(sessionIds: string[], prefix: string): Promise<{ sessionId: string; requestId: string; message: string }[]> {
    const rows = await this.db.mcpAnswer.findMany({ where: { sessionId: { in: sessionIds }, requestId: { startsWith: prefix } }, orderBy: { createdAt: 'asc' } });
    const taken: { sessionId: string; requestId: string; message: string }[] = [];
    for (const { sessionId, requestId, message } of rows) {
      if ((await this.db.mcpAnswer.deleteMany({ where: { sessionId, requestId } })).count === 1) taken.push({ sessionId, requestId, message });
    }
    return taken;
  }

  /** Drops answers (and notices) older than `ageMs` that no call took (its call ended first); a session's tasks have their own age. */
  async removeAnswersOlderThan(ageMs: number): Promise<void> {
    await this.db.mcpAnswer.deleteMany({ where: { createdAt: { lt: new Date((await this.store.now()).getTime() - ageMs) }, NOT: { requestId: { startsWith: TASK } } } });
  }

  /** Drops the sessions' tasks created more than `ageMs` ago (their ttl). */
  async removeTasksOlderThan(ageMs: number): Promise<void> {
    await this.db.mcpAnswer.deleteMany({ where: { createdAt: { lt: new Date((await this.store.now()).getTime() - ageMs) }, requestId: { startsWith: TASK } } });
  }

  /**
   * A task of a session (docs/mcp.md, tasks), kept beside its answers: the row is the task's binding
   * to the session (another session's id is not found) and, once the tool call ended, its result.
   */
  async saveTask(sessionId: string, taskId: string, task: string): Promise<Date> {
    const now = await this.store.now();
    await this.db.mcpAnswer.create({ data: { sessionId, requestId: `${TASK}${taskId}`, message: task, createdAt: now } });
    return now;
  }

  async updateTask(sessionId: string, taskId: string, task: string): Promise<void> {
    await this.db.mcpAnswer.updateMany({ where: { sessionId, requestId: `${TASK}${taskId}` }, data: { message: task } });
  }

  async findTask(sessionId: string, taskId: string): Promise<string | null> {
    const row = await this.db.mcpAnswer.findUnique({ where: { sessionId_requestId: { sessionId, requestId: `${TASK}${taskId}` } } });
    return row?.message ?? null;
  }

  /** The session's tasks, newest first, at most `limit`. */
  async listTasks(sessionId: string, limit: number): Promise<string[]> {
    const rows = await this.db.mcpAnswer.findMany({ where: { sessionId, requestId: { startsWith: TASK } }, orderBy: { createdAt: 'desc' }, take: limit });
    return rows.map((row) => row.message);
  }

  /** The journal entry a task follows: its state and when it finished (the journal is the store's, whichever replica wrote it). */
  async journalEntry(id: string): Promise<{ state: string; finishedAt: Date | null; errorMessage: string | null } | null> {
    return this.db.operation.findUnique({ where: { id }, select: { state: true, finishedAt: true, errorMessage: true } });
  }

  /** The store's clock. */
  now(): Promise<Date> {
    return this.store.now();
  }

  /** Which of `ids` still exist. */
  async existing(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.mcpSession.findMany({ where: { id: { in: ids } }, select: { id: true } });
    return new Set(rows.map((r) => r.id));
  }
}
