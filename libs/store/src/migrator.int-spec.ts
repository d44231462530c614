// npm test: also on PostgreSQL — the migrations of each provider, applied and checked
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import Database from 'better-sqlite3';
import pg from 'pg';
import { freshPostgresDatabase, testPostgresUrl } from '../../../test/pg/fresh-database.js';
import { loadMigrations, migrate, migrationsRoot, sqlitePath, type StoreProvider } from './migrator.js';
import { Store } from './store.js';

const TABLE = '_agent_manager_migrations';

// Store.open logs the migrations it applied; keep the test output quiet.
Logger.overrideLogger(false);

/** One store of one provider: how to make a fresh one, and how to edit its rows behind the migrator's back. */
interface Target {
  provider: StoreProvider;
  fresh(): Promise<{ url: string; drop(): Promise<void> }>;
  exec(url: string, sql: string, params: unknown[]): Promise<void>;
  query<T>(url: string, sql: string): Promise<T[]>;
}

const sqlite: Target = {
  provider: 'sqlite',
  fresh: async () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-'));
    // a folder that does not exist yet: the migrator creates it
    return { url: `file:${join(dir, 'nested', 'store.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  },
  exec: async (url, sql, params) => {
    const db = new Database(url.slice('file:'.length));
    try {
      db.prepare(sql.replace(/\$\d+/g, '?')).run(...params);
    } finally {
      db.close();
    }
  },
  query: async <T>(url: string, sql: string) => {
    const db = new Database(url.slice('file:'.length));
    try {
      return db.prepare(sql).all() as T[];
    } finally {
      db.close();
    }
  },
};

const postgresServer = testPostgresUrl();
const postgresql: Target = {
  provider: 'postgresql',
  fresh: () => freshPostgresDatabase(postgresServer!),
  exec: async (url, sql, params) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(sql, params);
    } finally {
      await client.end();
    }
  },
  query: async <T>(url: string, sql: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(sql)).rows as T[];
    } finally {
      await client.end();
    }
  },
};

/** SQLite always; PostgreSQL as well when TEST_DATABASE_URL names a server (npm run test:pg). */
const targets = postgresServer ? [sqlite, postgresql] : [sqlite];

describe.each(targets.map((t) => [t.provider, t] as const))('store migrations (%s)', (provider, target) => {
  let db: { url: string; drop(): Promise<void> };

  beforeAll(async () => {
    db = await target.fresh();
  });
  afterAll(() => db?.drop());

  it('applies every migration once, and nothing on a second run', async () => {
    const names = loadMigrations(provider).map((m) => m.name);
    expect(names.length).toBeGreaterThan(0);
    expect(await migrate(provider, db.url)).toEqual(names);
    expect(await migrate(provider, db.url)).toEqual([]);
  });

  it('opens a client that reads and writes the migrated tables, Json included', async () => {
    const store = await Store.open(db.url);
    try {
      expect(store.provider).toBe(provider);
      const request = { toolset: ['preset:none'], nested: { n: 1, ok: true, none: null }, text: 'ünï "q"' };
      await store.client.operation.create({
        data: { id: 'op-1', kind: 'create', namespace: 'n', name: 'a', state: 'pending', request, actor: 'test' },
      });
      const op = await store.client.operation.findUniqueOrThrow({ where: { id: 'op-1' } });
      expect(op.request).toEqual(request);
      // timestamps round-trip as instants, whatever the server's time zone (startedAt is defaulted)
      expect(Math.abs(op.startedAt.getTime() - Date.now())).toBeLessThan(60_000);
      const finishedAt = new Date('2026-01-02T03:04:05.678Z');
      await store.client.operation.update({ where: { id: 'op-1' }, data: { finishedAt } });
      expect((await store.client.operation.findUniqueOrThrow({ where: { id: 'op-1' } })).finishedAt).toEqual(finishedAt);
      // the unique violation the lease and idempotency repositories catch is P2002 on both providers
      await expect(
        store.client.operation.create({ data: { id: 'op-1', kind: 'create', namespace: 'n', name: 'a', state: 'pending', request: {}, actor: 'test' } }),
      ).rejects.toMatchObject({ code: 'P2002' });
      await store.client.operation.update({ where: { id: 'op-1' }, data: { state: 'succeeded', finishedAt: new Date() } });
      expect(await store.client.operation.count({ where: { state: 'succeeded' } })).toBe(1);
    } finally {
      await store.client.$disconnect();
    }
  });

  it('refuses to start when an applied migration was edited', async () => {
    await target.exec(db.url, `UPDATE "${TABLE}" SET checksum = $1 WHERE name = $2`, ['edited', loadMigrations(provider)[0].name]);
    await expect(migrate(provider, db.url)).rejects.toThrow(/was changed after it was applied/);
    await expect(Store.open(db.url)).rejects.toThrow(/was changed after it was applied/);
  });
});

(postgresServer ? describe : describe.skip)('store migrations (postgresql, several replicas starting at once)', () => {
  it('lets concurrent migrators on one fresh database all succeed, applying each migration once', async () => {
    const db = await postgresql.fresh();
    try {
      const names = loadMigrations('postgresql').map((m) => m.name);
      const results = await Promise.all([migrate('postgresql', db.url), migrate('postgresql', db.url), migrate('postgresql', db.url)]);
      // the advisory lock serializes them: one applies everything, the others find nothing to do
      expect(results.map((r) => r.length).sort()).toEqual([0, 0, names.length]);
      expect(results.find((r) => r.length > 0)).toEqual(names);
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        const { rows } = await client.query(`SELECT name FROM "${TABLE}" ORDER BY name`);
        expect(rows.map((r) => r.name)).toEqual(names);
      } finally {
        await client.end();
      }
    } finally {
      await db.drop();
    }
  });

  it('lets concurrent Store.open calls on one fresh database all connect', async () => {
    const db = await postgresql.fresh();
    try {
      const stores = await Promise.all([Store.open(db.url), Store.open(db.url)]);
      try {
        await stores[0].client.operation.create({ data: { id: 'op-a', kind: 'create', namespace: 'n', name: 'a', state: 'pending', request: {}, actor: 't' } });
        expect(await stores[1].client.operation.findUnique({ where: { id: 'op-a' } })).not.toBeNull();
      } finally {
        await Promise.all(stores.map((s) => s.client.$disconnect()));
      }
    } finally {
      await db.drop();
    }
  });
});

/** A store as migration 0002 left it, written row by row: two agents of one name (one deleted), revisions, a journal. */
async function seedAt0002(target: Target, url: string): Promise<void> {
  const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString().replace('Z', '+00:00');
  const agent = (id: string, name: string, state: string, labels: Record<string, string> | undefined, deletedAt: string | null) =>
    target.exec(
      url,
      `INSERT INTO "Agent" ("id", "namespace", "name", "activeKey", "state", "spec", "values", "chartRef", "revision", "version", "createdAt", "updatedAt", "deletedAt", "createdBy", "updatedBy")
       VALUES ($1, 'n', $2, $3, $4, $5, '{}', 'chart', 1, 1, $6, $7, $8, 't', 't')`,
      [id, name, state === 'active' ? `n/${name}` : null, state, JSON.stringify({ modelConfig: 'm', toolset: ['preset:none'], labels }), at(0), at(0), deletedAt],
    );
  const revision = (id: string, agentId: string, revision: number) =>
    target.exec(
      url,
      `INSERT INTO "AgentRevision" ("id", "agentId", "revision", "kind", "spec", "values", "createdAt", "createdBy") VALUES ($1, $2, $3, 'update', '{}', '{}', $4, 't')`,
      [id, agentId, revision, at(revision)],
    );
  const operation = (id: string, agentId: string | null, name: string, kind: string, state: string, second: number) =>
    target.exec(
      url,
      `INSERT INTO "Operation" ("id", "agentId", "namespace", "name", "kind", "state", "request", "actor", "startedAt") VALUES ($1, $2, 'n', $3, $4, $5, '{}', 't', $6)`,
      [id, agentId, name, kind, state, at(second)],
    );
  await agent('a1', 'a', 'active', { team: 'sre', tier: 'gold' }, null);
  await agent('d1', 'b', 'deleted', { team: 'ops' }, at(4));
  await agent('a2', 'b', 'active', undefined, null);
  await revision('r1', 'a1', 1);
  await revision('r2', 'a1', 2);
  await revision('r3', 'd1', 1);
  await revision('r4', 'a2', 1);
  await operation('op0', null, 'b', 'create', 'failed', 0);
  await operation('op1', 'a1', 'a', 'create', 'succeeded', 1);
  await operation('op2', 'a1', 'a', 'update', 'succeeded', 2);
  await operation('op3', null, 'a', 'create', 'failed', 3);
  await operation('op4', 'd1', 'b', 'create', 'succeeded', 1);
  await operation('op5', 'd1', 'b', 'delete', 'succeeded', 3);
  await operation('op6', 'a2', 'b', 'create', 'succeeded', 5);
}

/** A migrations folder holding the project's migrations up to 0002 and, optionally, others. */
function migrationsUpTo0002(provider: StoreProvider, extra: Record<string, string> = {}): { root: string; remove(): void } {
  const root = mkdtempSync(join(tmpdir(), 'migrations-'));
  for (const m of loadMigrations(provider).filter((m) => m.name <= '0002_z')) {
    cpSync(join(migrationsRoot(), provider, m.name), join(root, provider, m.name), { recursive: true });
  }
  for (const [name, from] of Object.entries(extra)) cpSync(from, join(root, provider, name), { recursive: true });
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}

const rebuildAgent = (provider: StoreProvider) => join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'rebuild-agent', provider);

describe.each(targets.map((t) => [t.provider, t] as const))('a migration over a populated store (%s)', (provider, target) => {
  let db: { url: string; drop(): Promise<void> };
  afterEach(() => db?.drop());

  const count = async (sql: string) => Number((await target.query<{ n: number | string }>(db.url, sql))[0].n);

  it('keeps every revision and operation through a migration that rebuilds the Agent table', async () => {
    db = await target.fresh();
    const before = migrationsUpTo0002(provider);
    const migrations = migrationsUpTo0002(provider, { '0002_9_rebuild_agent': rebuildAgent(provider) });
    try {
      await migrate(provider, db.url, before.root);
      await seedAt0002(target, db.url);
      expect(await migrate(provider, db.url, migrations.root)).toEqual(['0002_9_rebuild_agent']);
    } finally {
      before.remove();
      migrations.remove();
    }
    expect(await count(`SELECT count(*) AS n FROM "Agent"`)).toBe(3);
    expect(await count(`SELECT count(*) AS n FROM "AgentRevision"`)).toBe(4);
    expect(await count(`SELECT count(*) AS n FROM "Operation" WHERE "agentId" IS NOT NULL`)).toBe(5);
  });

  it('fills the label table and each agent last operation from the rows already stored (0003)', async () => {
    db = await target.fresh();
    const migrations = migrationsUpTo0002(provider);
    try {
      await migrate(provider, db.url, migrations.root);
    } finally {
      migrations.remove();
    }
    await seedAt0002(target, db.url);
    expect(await migrate(provider, db.url)).toContain('0003_lists_in_sql');
    const labels = await target.query<{ agentId: string; key: string; value: string; state: string }>(
      db.url,
      `SELECT "agentId", "key", "value", "state" FROM "AgentLabel" ORDER BY "agentId", "key"`,
    );
    expect(labels).toEqual([
      { agentId: 'a1', key: 'team', value: 'sre', state: 'active' },
      { agentId: 'a1', key: 'tier', value: 'gold', state: 'active' },
      { agentId: 'd1', key: 'team', value: 'ops', state: 'deleted' },
    ]);
    const last = await target.query<{ id: string; lastOperationId: string }>(db.url, `SELECT "id", "lastOperationId" FROM "Agent" ORDER BY "id"`);
    // a1: the failed create of its name after it was created; d1: its delete; a2: its create
    expect(last).toEqual([
      { id: 'a1', lastOperationId: 'op3' },
      { id: 'a2', lastOperationId: 'op6' },
      { id: 'd1', lastOperationId: 'op5' },
    ]);
    expect(await count(`SELECT count(*) AS n FROM "AgentRevision"`)).toBe(4);
  });
});

describe('the same rebuild without the migrator (sqlite)', () => {
  it('loses the revisions when run in a transaction with foreign keys on, as the migrator once did', async () => {
    const db = await sqlite.fresh();
    const migrations = migrationsUpTo0002('sqlite');
    try {
      await migrate('sqlite', db.url, migrations.root);
      await seedAt0002(sqlite, db.url);
      const raw = new Database(sqlitePath(db.url));
      try {
        expect(raw.pragma('foreign_keys', { simple: true })).toBe(1);
        raw.transaction(() => raw.exec(readFileSync(join(rebuildAgent('sqlite'), 'migration.sql'), 'utf8')))();
        expect(raw.prepare('SELECT count(*) AS n FROM "AgentRevision"').get()).toEqual({ n: 0 });
      } finally {
        raw.close();
      }
    } finally {
      migrations.remove();
      await db.drop();
    }
  });

  it('fails a migration that leaves dangling foreign keys, naming them, and applies none of it', async () => {
    const db = await sqlite.fresh();
    const dangling = mkdtempSync(join(tmpdir(), 'dangling-'));
    writeFileSync(join(dangling, 'migration.sql'), `DELETE FROM "Agent" WHERE "id" = 'a1';`);
    const before = migrationsUpTo0002('sqlite');
    const migrations = migrationsUpTo0002('sqlite', { '0002_9_dangling': dangling });
    try {
      await migrate('sqlite', db.url, before.root);
      await seedAt0002(sqlite, db.url);
      await expect(migrate('sqlite', db.url, migrations.root)).rejects.toThrow(/0002_9_dangling failed: .*AgentRevision row \d+ -> Agent/);
      expect(await sqlite.query(db.url, `SELECT "id" FROM "Agent" WHERE "id" = 'a1'`)).toEqual([{ id: 'a1' }]);
    } finally {
      before.remove();
      migrations.remove();
      rmSync(dangling, { recursive: true, force: true });
      await db.drop();
    }
  });
});
