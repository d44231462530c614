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

export function decodeCursor(cursor: string): CursorKey {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { n?: unknown; a?: unknown; i?: unknown };
    if (typeof parsed.n === 'string' && typeof parsed.a === 'string' && typeof parsed.i === 'string') return { namespace: parsed.n, name: parsed.a, id: parsed.i };
  } catch {
    // fall through to the refusal
  }
  throw AppError.invalid([{ path: 'cursor', message: 'cursor is not one this service issued: pass nextCursor from the previous page, or omit it' }]);
}
