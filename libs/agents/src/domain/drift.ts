import type { LiveAgent } from '@app/kube';

/** What agent-manager applied at one helm revision: the release's values and the Agent in its manifest. */
export interface AppliedRevision {
  values: Record<string, unknown>;
  /** The Agent in that revision's manifest (null when it has none, or it was not read). */
  agent: LiveAgent | null;
}

export interface Drift {
  /** What differs, one sentence per kind of difference; empty when store, release and live Agent agree. */
  drift: string[];
  /** The baseline the live Agent matches (its index), or -1 when it matches none. */
  holds: number;
  /** The live Agent is gone from the cluster. */
  missing: boolean;
}

/**
 * The one drift comparison, used by status and by the reconciler alike: the store's values against
 * the release's, and the live Agent against the Agent the release applied, at every field the chart
 * sets (spec, labels, annotations; fields the API server or kagent add are not drift). With several
 * baselines (an unfinished write: the last deployed revision, then the current one), a side is
 * drift only when it matches none of them; its drift is then named against the first.
 */
export function compareDrift(storeValues: Record<string, unknown>, baselines: AppliedRevision[], live: LiveAgent | null): Drift {
  const values = closest(baselines.map((b) => valueDrift(storeValues, b.values)));
  const object = closest(baselines.map((b) => (live ? objectDrift(b.agent, live) : [MISSING])));
  return { drift: [...values.drift, ...object.drift], holds: object.index, missing: live === null };
}

const MISSING = 'Agent: missing from the cluster';

/** The first baseline with no drift, or the first one's drift when none matches. */
function closest(drifts: string[][]): { index: number; drift: string[] } {
  const index = drifts.findIndex((d) => d.length === 0);
  return index < 0 ? { index, drift: drifts[0] ?? [] } : { index, drift: [] };
}

/** Which chart values differ between the store and the release. */
function valueDrift(store: Record<string, unknown>, release: Record<string, unknown>): string[] {
  const keys = [...new Set([...Object.keys(store), ...Object.keys(release)])].sort();
  const differing = keys.filter((k) => !sameData(store[k], release[k]));
  return differing.length > 0 ? [`release values differ from the store in ${differing.join(', ')}`] : [];
}

/** What the live object changed of the applied manifest: spec fields, labels and annotations set by the chart. */
function objectDrift(applied: LiveAgent | null, live: LiveAgent): string[] {
  if (!applied) return [];
  const paths: string[] = [];
  collect('spec', applied.spec, live.spec, paths);
  collect('metadata.labels', applied.metadata?.labels ?? {}, live.metadata?.labels ?? {}, paths);
  collect('metadata.annotations', applied.metadata?.annotations ?? {}, live.metadata?.annotations ?? {}, paths);
  return paths.length > 0 ? [`the live Agent was changed outside agent-manager at ${paths.join(', ')}`] : [];
}

/** Paths where `live` differs from `applied`, for every field `applied` sets (server defaults are ignored). */
function collect(path: string, applied: unknown, live: unknown, out: string[]): void {
  if (isPlainObject(applied) && isPlainObject(live)) {
    for (const key of Object.keys(applied).sort()) collect(`${path}.${key}`, applied[key], live[key], out);
    return;
  }
  if (!sameData(applied, live)) out.push(path);
}

/**
 * Deep equality of JSON data, blind to prototypes: the applied Agent comes from the manifest
 * reader's worker thread, whose objects are not of the same realm as the API client's.
 */
export function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => sameData(item, b[i]));
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameData(a[k], b[k]));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
