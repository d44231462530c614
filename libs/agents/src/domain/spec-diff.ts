import { isDeepStrictEqual } from 'node:util';
import { createTwoFilesPatch } from 'diff';

/** One field that differs between two specs (or chart values): its path and both sides (undefined: absent). */
export interface FieldChange {
  /** The field, dotted for a map's key: `toolset`, `labels.team`. */
  path: string;
  before?: unknown;
  after?: unknown;
}

/** Fields whose values are maps of strings: a change names the key that moved, not the whole map. */
const MAP_FIELDS = new Set(['labels', 'annotations']);

/**
 * The fields that differ between two specs or two sets of chart values, in a stable order (the
 * fields sorted, then the keys of a map); lists (the toolset) compare whole. An empty string and
 * an absent field are the same here, as the chart renders them alike. `null` stands for "no agent"
 * (before a create, after a delete): every present field then changes.
 */
export function fieldChanges(before: object | null, after: object | null): FieldChange[] {
  const a = (before ?? {}) as Record<string, unknown>;
  const b = (after ?? {}) as Record<string, unknown>;
  const changes: FieldChange[] = [];
  for (const field of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    const from = present(a[field]);
    const to = present(b[field]);
    if (MAP_FIELDS.has(field) && isMap(from ?? {}) && isMap(to ?? {})) {
      const fromMap = (from ?? {}) as Record<string, unknown>;
      const toMap = (to ?? {}) as Record<string, unknown>;
      for (const key of [...new Set([...Object.keys(fromMap), ...Object.keys(toMap)])].sort()) {
        if (!isDeepStrictEqual(fromMap[key], toMap[key])) changes.push(change(`${field}.${key}`, fromMap[key], toMap[key]));
      }
    } else if (!isDeepStrictEqual(from, to)) {
      changes.push(change(field, from, to));
    }
  }
  return changes;
}

/** A unified diff of two rendered manifests with `context` lines around each change; '' when they are the same. */
export function manifestDiff(name: string, before: string, after: string, labels: { from: string; to: string }, context = 3): string {
  if (before === after) return '';
  return createTwoFilesPatch(`${name} (${labels.from})`, `${name} (${labels.to})`, before, after, undefined, undefined, { context });
}

function change(path: string, before: unknown, after: unknown): FieldChange {
  return { path, ...(before !== undefined && { before }), ...(after !== undefined && { after }) };
}

/** undefined for what the chart renders as nothing: absent, '', an empty map. */
function present(value: unknown): unknown {
  if (value === undefined || value === null || value === '') return undefined;
  if (isMap(value) && Object.keys(value).length === 0) return undefined;
  return value;
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
