import { randomUUID } from 'node:crypto';
import { AppError, type ErrorBody } from './app-error.js';

export interface MappedError {
  status: number;
  body: ErrorBody;
  /** Set for failures nobody anticipated: logged with the same id the caller sees. */
  unexpected?: unknown;
  /** For 503: when a retry may succeed (REST sends it as `Retry-After`). */
  retryAfterSeconds?: number;
}

/** How long a caller should wait before retrying against a store that could not be reached. */
export const STORE_RETRY_AFTER_SECONDS = 5;

/** Maps anything thrown by a service method to the docs/contract.md §6 body, for both doors. */
export function mapError(error: unknown): MappedError {
  if (error instanceof AppError) return { status: error.status, body: error.toBody(), retryAfterSeconds: error.retryAfterSeconds };
  const errorId = randomUUID();
  const store = storeUnreachable(error);
  if (store) {
    const message = `the store is unavailable (${store}): retry in a few seconds; the service log has the details under errorId ${errorId}`;
    return {
      status: 503,
      body: { error: { code: 'unavailable', message, details: [], errorId } },
      unexpected: error,
      retryAfterSeconds: STORE_RETRY_AFTER_SECONDS,
    };
  }
  return {
    status: 500,
    body: {
      error: {
        code: 'internal',
        message: `unexpected failure ${errorId}; the service log has the details under this errorId`,
        details: [],
        errorId,
      },
    },
    unexpected: error,
  };
}

/**
 * Prisma's codes for a database it cannot reach or lost (P1001 not reachable, P1008 timed out,
 * e.g. SQLite busy, P1017 connection closed, P2024 no pooled connection in time, P2037 too many
 * connections), or too busy to take a transaction (P2028: one could not start within its wait,
 * e.g. behind SQLite's single connection, or ran out of its time).
 */
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028', 'P2037']);
/** Node's socket errors (the pg driver's, through the adapter or on its own). */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH']);
/** PostgreSQL SQLSTATE: class 08 (connection exception), 57P01-03 (shut down, crashed, not accepting yet), 53300 too many connections. */
const POSTGRES_CODE = /^(08\d{3}|08P01|57P0[1-3]|53300)$/;
/** SQLite: the file cannot be opened, read or written, was moved/removed, or is not a database any more. */
const SQLITE_CODE = /^SQLITE_(CANTOPEN|IOERR|READONLY|NOTADB|CORRUPT|FULL|BUSY)/;
const MESSAGES = [
  /unable to open database file/i,
  /Cannot open database/i,
  /disk I\/O error/i,
  /database (disk image )?is (locked|malformed)/i,
  /attempt to write a readonly database/i,
  /The database connection is not open/i,
  /Can't reach database server/i,
  /Connection terminated/i,
  /terminating connection due to administrator command/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
  /Connection (closed|refused)/i,
];

/** Why the store could not be reached, when `error` (or something in its cause chain) says so; else null. */
export function storeUnreachable(error: unknown): string | null {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const e = queue.shift();
    if (typeof e !== 'object' || e === null || seen.has(e)) continue;
    seen.add(e);
    const { code, originalCode, message, cause, meta, errors } = e as {
      code?: unknown;
      originalCode?: unknown;
      message?: unknown;
      cause?: unknown;
      meta?: { driverAdapterError?: unknown };
      errors?: unknown;
    };
    for (const c of [code, originalCode]) {
      if (typeof c !== 'string') continue;
      if (PRISMA_CODES.has(c) || SOCKET_CODES.has(c) || POSTGRES_CODE.test(c) || SQLITE_CODE.test(c)) return describe(c, message);
    }
    if (typeof message === 'string' && MESSAGES.some((m) => m.test(message))) return firstLine(message);
    queue.push(cause, meta?.driverAdapterError, ...(Array.isArray(errors) ? errors : []));
  }
  return null;
}

function describe(code: string, message: unknown): string {
  return typeof message === 'string' && message ? `${code}: ${firstLine(message)}` : code;
}

function firstLine(message: string): string {
  const line = message.trim().split('\n').find((l) => l.trim()) ?? message;
  return line.length > 200 ? `${line.slice(0, 200)}…` : line.trim();
}
