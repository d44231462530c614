import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import Database from 'better-sqlite3';
import pg from 'pg';
import { freshPostgresDatabase, testPostgresUrl } from '../../../test/pg/fresh-database.js';
import { loadMigrations, migrate, type StoreProvider } from './migrator.js';
import { Store } from './store.js';

const TABLE = '_agent_manager_migrations';

// Store.open logs the migrations it applied; keep the test output quiet.
Logger.overrideLogger(false);

/** One store of one provider: how to make a fresh one, and how to edit its rows behind the migrator's back. */
interface Target {
  provider: StoreProvider;
  fresh(): Promise<{ url: string; drop(): Promise<void> }>;
  exec(url: string, sql: string, params: unknown[]): Promise<void>;
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
