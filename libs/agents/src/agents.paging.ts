import { AppError } from '@app/common';
import type { AgentSpec } from './agents.types.js';

export function encodeCursor(id: string): string {
  return Buffer.from(JSON.stringify({ after: id })).toString('base64url');
}

export function decodeCursor(cursor: string): string {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { after?: unknown };
    if (typeof parsed.after === 'string') return parsed.after;
  } catch {
    // fall through to the refusal
  }
  throw AppError.invalid([{ path: 'cursor', message: 'cursor is not one this service issued: pass nextCursor from the previous page, or omit it' }]);
}

/** `key=value` matches that label exactly; `key` matches any value. */
export function matchesLabel(spec: AgentSpec, selector?: string): boolean {
  if (!selector) return true;
  const labels = spec.labels ?? {};
  const at = selector.indexOf('=');
  if (at < 0) return Object.hasOwn(labels, selector);
  return labels[selector.slice(0, at)] === selector.slice(at + 1);
}
