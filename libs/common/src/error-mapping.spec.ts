import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import pg from 'pg';
import { AppError } from './app-error.js';
import { mapError, STORE_RETRY_AFTER_SECONDS, storeUnreachable } from './error-mapping.js';

/** The shapes Prisma 7 throws through its driver adapters (PrismaClientKnownRequestError, DriverAdapterError). */
const prismaKnown = (code: string, message: string) => Object.assign(new Error(message), { name: 'PrismaClientKnownRequestError', code, clientVersion: '7.10.0' });
const driverAdapter = (cause: object) => Object.assign(new Error('driver adapter error'), { name: 'DriverAdapterError', cause });
const sqlite = (code: string, message: string) => Object.assign(new Error(message), { name: 'SqliteError', code });

describe(mapError.name, () => {
  it.each([
    ['Prisma P1001 (database not reachable)', prismaKnown('P1001', "Can't reach database server at 127.0.0.1:5432")],
    ['Prisma P1017 (server closed the connection)', prismaKnown('P1017', 'Server has closed the connection.')],
    ['Prisma P1008 (SQLite busy, timed out)', prismaKnown('P1008', 'Operation has timed out')],
    ['Prisma P2028 (a transaction could not start in time)', prismaKnown('P2028', 'Transaction API error: Unable to start a transaction in the given time.')],
    ['PostgreSQL 57P01 through the adapter', driverAdapter({ kind: 'postgres', code: '57P01', originalCode: '57P01', message: 'terminating connection due to administrator command' })],
    ['PostgreSQL 08006 from pg', Object.assign(new Error('connection failure'), { code: '08006', severity: 'FATAL' })],
    ['pg lost its socket', new Error('Connection terminated unexpectedly')],
    ['SQLite disk I/O error', sqlite('SQLITE_IOERR_WRITE', 'disk I/O error')],
    ['SQLite cannot open the file', sqlite('SQLITE_CANTOPEN', 'unable to open database file')],
    ['SQLite file replaced by something else', sqlite('SQLITE_NOTADB', 'file is not a database')],
    ['wrapped in an unknown request error', Object.assign(new Error('Invalid `prisma.agent.findFirst()` invocation'), { cause: sqlite('SQLITE_IOERR', 'disk I/O error') })],
  ])('%s → 503 unavailable with Retry-After', (_case, error) => {
    const mapped = mapError(error);
    expect(mapped.status).toBe(503);
    expect(mapped.body.error.code).toBe('unavailable');
    expect(mapped.body.error.message).toMatch(/^the store is unavailable \(.+\): retry in a few seconds/);
    expect(mapped.retryAfterSeconds).toBe(STORE_RETRY_AFTER_SECONDS);
    expect(mapped.unexpected).toBe(error);
  });

  it.each([
    ['a unique violation', prismaKnown('P2002', 'Unique constraint failed on the fields: (`name`)')],
    ['a programming error', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a thrown string', 'boom'],
  ])('%s stays 500 internal with an errorId', (_case, error) => {
    const mapped = mapError(error);
    expect(mapped.status).toBe(500);
    expect(mapped.body.error).toMatchObject({ code: 'internal', errorId: expect.any(String) });
    expect(mapped.retryAfterSeconds).toBeUndefined();
  });

  it("passes an AppError's retry hint through", () => {
    const mapped = mapError(new AppError('unavailable', 'all helm processes are busy', [], 3));
    expect(mapped).toMatchObject({ status: 503, retryAfterSeconds: 3, body: { error: { code: 'unavailable' } } });
  });

  it('recognises what better-sqlite3 really throws for a database file it cannot open', () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-down-'));
    rmSync(dir, { recursive: true });
    let thrown: unknown;
    try {
      new Database(join(dir, 'store.db'));
    } catch (error) {
      thrown = error;
    }
    expect(storeUnreachable(thrown)).not.toBeNull();
  });

  it('recognises what pg really throws when PostgreSQL refuses the connection', async () => {
    const client = new pg.Client({ host: '127.0.0.1', port: 1, user: 'x', database: 'x', connectionTimeoutMillis: 2000 });
    const thrown = await client.connect().then(() => null, (error: unknown) => error);
    expect(storeUnreachable(thrown)).toMatch(/ECONNREFUSED/);
  });
});
