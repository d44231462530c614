import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/**
 * Fresh stores for the suites. Without TEST_DATABASE_URL they run on SQLite (a temp file);
 * with it (a postgresql:// URL of a server they may create databases on, as `npm run test:pg`
 * sets) each store is a new database on that server. Kept free of Nest so that library
 * integration specs can use it too.
 */

export type StoreProvider = 'sqlite' | 'postgresql';

export interface FreshDatabase {
  /** A DATABASE_URL nothing else uses; several services may share it. */
  url: string;
  provider: StoreProvider;
  /** Removes the database (PostgreSQL: drops it, ending its connections; SQLite: deletes the file). */
  drop(): Promise<void>;
}

/** The PostgreSQL server the suites run against (`test/pg/up.sh`, `npm run test:pg`), if any. */
export function testPostgresUrl(): string | undefined {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return undefined;
  if (!/^postgres(ql)?:\/\//.test(url)) throw new Error(`TEST_DATABASE_URL must be a postgresql:// URL, not ${url}`);
  return url;
}

/** The store provider the suites run against: `postgresql` when TEST_DATABASE_URL is set. */
export function testStoreProvider(): StoreProvider {
  return testPostgresUrl() ? 'postgresql' : 'sqlite';
}

/** A new, empty PostgreSQL database `am_<random>` on the server of `serverUrl`. */
export async function freshPostgresDatabase(serverUrl: string): Promise<FreshDatabase> {
  const name = `am_${randomBytes(8).toString('hex')}`;
  const admin = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };
  await admin((c) => c.query(`CREATE DATABASE "${name}"`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    url: url.toString(),
    provider: 'postgresql',
    drop: async () => {
      if (dropped) return;
      dropped = true;
      await admin(async (c) => {
        // Connections a test left open (a crashed service, a pool not yet drained) would block DROP.
        await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      });
    },
  };
}

/**
 * A store nothing else uses, for the provider the suites run against: a fresh PostgreSQL
 * database on TEST_DATABASE_URL's server, else a SQLite file in a new temp folder. Pass its
 * `url` as DATABASE_URL to one or more services (two replicas on one database), and `drop()` it.
 */
export async function freshDatabaseUrl(): Promise<FreshDatabase> {
  const server = testPostgresUrl();
  if (server) return freshPostgresDatabase(server);
  const dir = mkdtempSync(join(tmpdir(), 'agent-manager-db-'));
  return {
    url: `file:${join(dir, 'store.db')}`,
    provider: 'sqlite',
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}
