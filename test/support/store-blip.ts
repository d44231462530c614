import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import pg from 'pg';

/**
 * A real store failure while the service writes, made from outside it (no fake): on SQLite a
 * second connection holds the file's exclusive lock, so the service's writes fail with
 * SQLITE_BUSY once its busy timeout (5 s) passed, until `failed()` says the write under test
 * hit it (the lock is then freed); on PostgreSQL a second connection locks the `Agent` table,
 * and once a service statement waits on that lock (the record: nothing else touches agents while
 * the test runs), every other connection to the database is terminated
 * (the service sees "terminating connection due to administrator command").
 */
export async function storeBlip(databaseUrl: string, failed: () => Promise<boolean>): Promise<void> {
  if (databaseUrl.startsWith('file:')) {
    const db = new Database(databaseUrl.slice('file:'.length), { timeout: 10_000 });
    try {
      db.prepare('BEGIN EXCLUSIVE').run();
      for (let i = 0; !(await failed()); i++) {
        if (i > 600) throw new Error('the write did not fail within 60 s of the store lock');
        await sleep(100);
      }
      db.prepare('COMMIT').run();
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query('LOCK TABLE "Agent" IN ACCESS EXCLUSIVE MODE');
    for (let i = 0; ; i++) {
      const waiting = await client.query(
        // Any statement of the service waiting on a lock: the record's first one to touch the table
        // may be another table's (a foreign key check on "Agent" waits as well).
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`,
      );
      if (waiting.rows[0].n > 0) break;
      if (i > 600) throw new Error('the service never tried to record the agent within 60 s of the store lock');
      await sleep(100);
    }
    await client.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`);
    await client.query('COMMIT');
  } finally {
    await client.end();
  }
}
