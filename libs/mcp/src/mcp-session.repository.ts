import { Injectable } from '@nestjs/common';
import type { AuthMethod, Principal } from '@app/auth';
import { Store } from '@app/store';

/** An MCP session as every replica reads it from the store. */
export interface McpSessionRecord {
  id: string;
  subject: string;
  authMethod: AuthMethod;
  query: string;
  clientName: string | null;
  clientVersion: string | null;
  logLevel: string | null;
  createdAt: Date;
  lastSeenAt: Date;
}

export interface NewMcpSession {
  id: string;
  principal: Principal;
  query: string;
  clientName?: string;
  clientVersion?: string;
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

  async create(session: NewMcpSession): Promise<void> {
    const { id, principal, query, clientName, clientVersion, replica } = session;
    const now = await this.store.now();
    await this.db.mcpSession.create({
      data: { id, subject: principal.subject, authMethod: principal.method, query, clientName, clientVersion, replica, createdAt: now, lastSeenAt: now },
    });
  }

  /** Read on every request of a session: one statement by primary key, in SQL (a fourth of the typed query's CPU). */
  async find(id: string): Promise<McpSessionRecord | null> {
    const rows = await this.db.$queryRaw<(Omit<McpSessionRecord, 'authMethod'> & { authMethod: string })[]>`
      SELECT "id", "subject", "authMethod", "query", "clientName", "clientVersion", "logLevel", "createdAt", "lastSeenAt" FROM "McpSession" WHERE "id" = ${id}`;
    return rows.length > 0 ? { ...rows[0], authMethod: rows[0].authMethod as AuthMethod } : null;
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
    await this.db.mcpSession.deleteMany({ where: { id: { in: idle.map((s) => s.id) }, lastSeenAt: { lt: idleSince } } });
    return idle.map((s) => s.id);
  }

  /** Which of `ids` still exist. */
  async existing(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.mcpSession.findMany({ where: { id: { in: ids } }, select: { id: true } });
    return new Set(rows.map((r) => r.id));
  }
}
