import { randomFillSync } from 'node:crypto';

/** A W3C traceparent header's parts (version 00), or null when it is not one. */
export function parseTraceparent(header: unknown): { traceId: string; spanId: string; sampled: boolean } | null {
  if (typeof header !== 'string') return null;
  const match = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(header.trim());
  if (!match || match[1] === 'ff' || /^0+$/.test(match[2]) || /^0+$/.test(match[3])) return null;
  return { traceId: match[2], spanId: match[3], sampled: (parseInt(match[4], 16) & 1) === 1 };
}

/** A new trace id (32 hex digits) for a call that came without one while tracing is off: its log lines still share it. */
export function newTraceId(): string {
  if (poolAt === POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const id = pool.toString('hex', poolAt, (poolAt += 16));
  return /^0+$/.test(id) ? newTraceId() : id; // all zeros is not a valid trace id
}

/** Random bytes drawn 4 KiB at a time: one system call per 256 trace ids instead of one each. */
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolAt = POOL_BYTES;
