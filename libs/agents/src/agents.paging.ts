import { AppError } from '@app/common';
import type { AgentSpec } from './agents.types.js';

/** Where a page ended: the listing's sort key, so a cursor survives the deletion of its agent. */
export interface CursorKey {
  namespace: string;
  name: string;
  id: string;
}

export function encodeCursor(row: CursorKey): string {
  return Buffer.from(JSON.stringify({ n: row.namespace, a: row.name, i: row.id })).toString('base64url');
}

export function decodeCursor(cursor: string): CursorKey {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { n?: unknown; a?: unknown; i?: unknown };
    if (typeof parsed.n === 'string' && typeof parsed.a === 'string' && typeof parsed.i === 'string') return { namespace: parsed.n, name: parsed.a, id: parsed.i };
  } catch {
    // fall through to the refusal
  }
  throw AppError.invalid([{ path: 'cursor', message: 'cursor is not one this service issued: pass nextCursor from the previous page, or omit it' }]);
}

/** The listing's order: namespace, name, id, by code point (the same whatever the database's collation). */
export function compareKeys(a: CursorKey, b: CursorKey): number {
  const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return cmp(a.namespace, b.namespace) || cmp(a.name, b.name) || cmp(a.id, b.id);
}

export function isAfter(row: CursorKey, key: CursorKey): boolean {
  return compareKeys(row, key) > 0;
}

/** `key=value` matches that label exactly; `key` matches any value. */
export function matchesLabel(spec: AgentSpec, selector?: string): boolean {
  if (!selector) return true;
  const labels = spec.labels ?? {};
  const at = selector.indexOf('=');
  if (at < 0) return Object.hasOwn(labels, selector);
  return labels[selector.slice(0, at)] === selector.slice(at + 1);
}
