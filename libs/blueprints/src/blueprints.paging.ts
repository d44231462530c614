import { AppError } from '@app/common';
import { BLUEPRINT_NAME } from './blueprint.rules.js';

/** Where a page of blueprints ended: the last name, so a cursor survives that blueprint's deletion or rename. */
export function encodeCursor(name: string): string {
  return Buffer.from(JSON.stringify({ a: name })).toString('base64url');
}

export function decodeCursor(cursor: string): string {
  try {
    const { a } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { a?: unknown };
    if (typeof a === 'string' && BLUEPRINT_NAME.test(a)) return a;
  } catch {
    // fall through to the refusal
  }
  throw AppError.invalid([{ path: 'cursor', message: 'cursor is not one this service issued: pass nextCursor from the previous page, or omit it' }]);
}
