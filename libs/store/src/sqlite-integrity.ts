import { closeSync, openSync, readSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { SqlDriverAdapter, Transaction } from '@prisma/driver-adapter-utils';

/** A SQLite file that is damaged (corrupt, truncated, not a database): the start stops, a running service refuses writes. */
export class StoreCorruptError extends Error {
  override readonly name = 'StoreCorruptError';
  readonly code = 'STORE_CORRUPT';
}

/** How often, at most, a running service reads the whole file again (`PRAGMA quick_check` on a connection of its own). */
export const DEEP_CHECK_INTERVAL_MS = 5_000;

/** SQLite's primary result codes for a damaged file: SQLITE_CORRUPT (11), SQLITE_NOTADB (26). */
const CORRUPT_CODES = new Set([11, 26]);
const CORRUPT_MESSAGE = /database disk image is malformed|file is not a database|SQLITE_(CORRUPT|NOTADB)/i;

/** Whether `error` (or its cause) is SQLite saying the file is damaged, as better-sqlite3 or Prisma's adapter reports it. */
export function isCorruption(error: unknown): boolean {
  for (let e = error, depth = 0; typeof e === 'object' && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, extendedCode, message } = e as { code?: unknown; extendedCode?: unknown; message?: unknown };
    if (typeof extendedCode === 'number' && CORRUPT_CODES.has(extendedCode & 0xff)) return true;
    if (typeof code === 'string' && /^SQLITE_(CORRUPT|NOTADB)/.test(code)) return true;
    if (typeof message === 'string' && CORRUPT_MESSAGE.test(message)) return true;
  }
  return false;
}

/**
 * What is wrong with the file's header, read from disk (100 bytes): not a SQLite file, or shorter
 * than the pages its header counts (truncated). An empty file is a new database at start (`opened`
 * false), and a truncated one once the service opened (and migrated) it.
 */
export function headerProblem(path: string, opened = false): string | undefined {
  const size = statSync(path).size;
  if (size === 0) return opened ? 'it is truncated to 0 bytes' : undefined;
  const header = Buffer.alloc(100);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, header, 0, 100, 0);
  } finally {
    closeSync(fd);
  }
  if (size < 100 || header.toString('latin1', 0, 16) !== 'SQLite format 3\0') return 'its header is not a SQLite header (overwritten, or not a database)';
  const raw = header.readUInt16BE(16);
  const pageSize = raw === 1 ? 65_536 : raw;
  // The page count in the header is valid when the change counter equals "version valid for" (SQLite's file format).
  const pages = header.readUInt32BE(24) === header.readUInt32BE(92) ? header.readUInt32BE(28) : 0;
  if (pages * pageSize > size) return `it is truncated: its header counts ${pages} pages of ${pageSize} bytes, the file has ${size} bytes`;
  return undefined;
}

/** `PRAGMA quick_check` on a connection of its own (so nothing cached by the service hides the disk): undefined when "ok". */
export function quickCheck(path: string): string | undefined {
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const rows = db.pragma('quick_check(5)') as { quick_check: string }[];
    const found = rows.map((r) => r.quick_check).filter((line) => line !== 'ok');
    return found.length === 0 ? undefined : `PRAGMA quick_check found: ${found.join('; ')}`;
  } catch (error) {
    return `reading it failed: ${(error as Error).message}`;
  } finally {
    db?.close();
  }
}

/**
 * Watches one SQLite file for damage. At start the whole file is checked (header and
 * `PRAGMA quick_check`); while the service runs, every `check()` reads the header, at most every
 * DEEP_CHECK_INTERVAL_MS runs quick_check again, and every query error SQLite reports as
 * corruption is noticed. Once damage is found it stays found: the file is never trusted with a
 * write again by this process (503 for callers) until a restart on a sound file; reads are still
 * tried, so what was acknowledged can be read back where SQLite still can.
 */
export class SqliteIntegrity {
  private damage?: string;
  private lastDeepCheck = Date.now();

  constructor(
    readonly path: string,
    private readonly clock: () => number = Date.now,
  ) {}

  /** At start, before anything opens the file: throws StoreCorruptError naming what is wrong. */
  static requireSound(path: string): void {
    let problem: string | undefined;
    try {
      problem = headerProblem(path) ?? quickCheck(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    if (problem) throw new StoreCorruptError(damaged(path, problem));
  }

  /** Why the file cannot be trusted, or undefined; the header each time, the whole file at most every DEEP_CHECK_INTERVAL_MS. */
  check(): string | undefined {
    if (this.damage) return this.damage;
    let problem: string | undefined;
    try {
      problem = headerProblem(this.path, true);
    } catch {
      // Removed or replaced: Store.check() says so in its own words.
      return undefined;
    }
    if (!problem && this.clock() - this.lastDeepCheck >= DEEP_CHECK_INTERVAL_MS) {
      this.lastDeepCheck = this.clock();
      problem = quickCheck(this.path);
    }
    if (problem) this.damage = damaged(this.path, problem);
    return this.damage;
  }

  /** Every query on `connection` refused once damage was found, and every corruption error it reports noticed. */
  guard(connection: SqlDriverAdapter): void {
    connection.queryRaw = this.guarded(connection.queryRaw.bind(connection), (query) => isRead(query.sql));
    connection.executeRaw = this.guarded(connection.executeRaw.bind(connection));
    connection.executeScript = this.guarded(connection.executeScript.bind(connection));
    const start = this.guarded(connection.startTransaction.bind(connection));
    connection.startTransaction = async (...args) => {
      const transaction: Transaction = await start(...args);
      transaction.queryRaw = this.guarded(transaction.queryRaw.bind(transaction), (query) => isRead(query.sql));
      transaction.executeRaw = this.guarded(transaction.executeRaw.bind(transaction));
      return transaction;
    };
  }

  private guarded<A extends unknown[], R>(run: (...args: A) => Promise<R>, allowed: (...args: A) => boolean = () => false): (...args: A) => Promise<R> {
    return async (...args: A) => {
      // The words "database disk image is malformed" make the caller's answer 503 with Retry-After (error-mapping.ts).
      // A write looks at the file first (its header; the whole file when the last look is old): cheap, and no write goes into a damaged file.
      if (!allowed(...args)) this.check();
      if (this.damage && !allowed(...args)) throw new StoreCorruptError(`database disk image is malformed: ${this.damage}`);
      try {
        return await run(...args);
      } catch (error) {
        if (isCorruption(error)) this.damage ??= damaged(this.path, `SQLite reported it: ${(error as Error).message}`);
        throw error;
      }
    };
  }
}

/** A statement that only reads (Prisma runs writes with RETURNING through queryRaw too). */
function isRead(sql: string): boolean {
  return /^\s*SELECT\b/i.test(sql);
}

function damaged(path: string, problem: string): string {
  return `the SQLite file ${path} is damaged (${problem}): restore it from a backup, or move it aside and rebuild the store from the cluster (agent-manager store rebuild)`;
}
