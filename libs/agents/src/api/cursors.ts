import { AppError } from '@app/common';

/** Where a page ended: the listing's sort key, so a cursor survives the deletion of its agent. */
export interface CursorKey {
  namespace: string;
  name: string;
  id: string;
}

export function encodeCursor(row: CursorKey): string {
  return Buffer.from(JSON.stringify({ n: row.namespace, a: row.name, i: row.id })).toString('base64url');
}

/**
 * A value a cursor this service issued can hold: names, namespaces and ids are printable and short.
 * A forged NUL would reach the store (PostgreSQL refuses it in text: a 500).
 */
export function isCursorText(value: unknown): boolean {
  if (typeof value !== 'string' || value.length > 253) return false;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return false;
  }
  return true;
}

export function decodeCursor(cursor: string): CursorKey {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { n?: unknown; a?: unknown; i?: unknown };
    if ([parsed.n, parsed.a, parsed.i].every(isCursorText)) return { namespace: parsed.n as string, name: parsed.a as string, id: parsed.i as string };
  } catch {
    // fall through to the refusal
  }
  throw AppError.invalid([{ path: 'cursor', message: 'cursor is not one this service issued: pass nextCursor from the previous page, or omit it' }]);
}
