import { randomBytes } from 'node:crypto';

/** A W3C traceparent header's parts (version 00), or null when it is not one. */
export function parseTraceparent(header: unknown): { traceId: string; spanId: string; sampled: boolean } | null {
  if (typeof header !== 'string') return null;
  const match = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(header.trim());
  if (!match || match[1] === 'ff' || /^0+$/.test(match[2]) || /^0+$/.test(match[3])) return null;
  return { traceId: match[2], spanId: match[3], sampled: (parseInt(match[4], 16) & 1) === 1 };
}

/** A new trace id (32 hex digits) for a call that came without one while tracing is off: its log lines still share it. */
export function newTraceId(): string {
  return randomBytes(16).toString('hex');
}
