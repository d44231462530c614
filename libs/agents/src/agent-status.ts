import { isDeepStrictEqual } from 'node:util';
import type { Condition, LiveAgent } from '@app/kube';

export type Verdict = 'ready' | 'progressing' | 'failed' | 'unknown';

export interface StatusFacts {
  namespace: string;
  name: string;
  storeRevision: number;
  storeValues: Record<string, unknown>;
  release: { status: string; revision: number } | null;
  releaseValues: Record<string, unknown> | null;
  /** The Agent in the manifest helm last applied. */
  appliedAgent: LiveAgent | null;
  liveAgent: LiveAgent | null;
}

export interface StatusVerdict {
  verdict: Verdict;
  message: string;
  drift: string[];
  conditions: Condition[];
}

/**
 * Folds the release, the live Agent's conditions and any drift into one verdict and one
 * sentence. Drift (the cluster no longer holds what agent-manager applied) is a failure:
 * the fix is to update or roll back the agent, which re-applies its values.
 */
export function foldStatus(facts: StatusFacts): StatusVerdict {
  const conditions = facts.liveAgent?.status?.conditions ?? [];
  const agent = `${facts.namespace}/${facts.name}`;
  if (!facts.release) {
    return {
      verdict: 'failed',
      message: `The helm release ${agent} is missing although the store holds revision ${facts.storeRevision}; update or roll back the agent to re-create it.`,
      drift: ['release: missing'],
      conditions,
    };
  }
  const drift = [
    ...valueDrift(facts.storeValues, facts.releaseValues ?? {}),
    ...(facts.liveAgent ? objectDrift(facts.appliedAgent, facts.liveAgent) : ['Agent: missing from the cluster']),
  ];
  if (drift.length > 0) {
    return {
      verdict: 'failed',
      message: `Agent ${agent} has drifted from what agent-manager applied (${drift.join('; ')}); update or roll back the agent to re-apply it.`,
      drift,
      conditions,
    };
  }
  const release = facts.release;
  if (release.status === 'failed') return { verdict: 'failed', message: `The helm release is failed at revision ${release.revision}.`, drift, conditions };
  if (release.status.startsWith('pending')) return { verdict: 'progressing', message: `The helm release is ${release.status} at revision ${release.revision}.`, drift, conditions };
  if (release.status !== 'deployed') return { verdict: 'unknown', message: `The helm release is ${release.status} at revision ${release.revision}.`, drift, conditions };

  const accepted = conditions.find((c) => c.type === 'Accepted');
  const ready = conditions.find((c) => c.type === 'Ready');
  const generation = facts.liveAgent?.metadata.generation;
  const why = (c: Condition) => [c.reason, c.message].filter(Boolean).join(': ');
  if (accepted?.status === 'False') return { verdict: 'failed', message: `kagent did not accept the Agent${why(accepted) ? ` (${why(accepted)})` : ''}.`, drift, conditions };
  if (ready?.status === 'True') {
    if (generation !== undefined && ready.observedGeneration !== undefined && ready.observedGeneration < generation) {
      return { verdict: 'progressing', message: `kagent has not yet reconciled generation ${generation} of the Agent.`, drift, conditions };
    }
    return { verdict: 'ready', message: `The Agent is ready at revision ${facts.storeRevision}.`, drift, conditions };
  }
  if (ready?.status === 'False') {
    const message = `The Agent is not ready${why(ready) ? ` (${why(ready)})` : ''}.`;
    return { verdict: accepted?.status === 'True' ? 'progressing' : 'failed', message, drift, conditions };
  }
  return { verdict: 'progressing', message: 'The release is deployed; kagent has not reported the Agent ready yet.', drift, conditions };
}

/** Which chart values differ between the store and the release. */
function valueDrift(store: Record<string, unknown>, release: Record<string, unknown>): string[] {
  const keys = [...new Set([...Object.keys(store), ...Object.keys(release)])].sort();
  const differing = keys.filter((k) => !isDeepStrictEqual(store[k], release[k]));
  return differing.length > 0 ? [`release values differ from the store in ${differing.join(', ')}`] : [];
}

/** What the live object changed of the applied manifest: spec fields, labels and annotations set by the chart. */
function objectDrift(applied: LiveAgent | null, live: LiveAgent): string[] {
  if (!applied) return [];
  const paths: string[] = [];
  collect('spec', applied.spec, live.spec, paths);
  collect('metadata.labels', applied.metadata.labels ?? {}, live.metadata.labels ?? {}, paths);
  collect('metadata.annotations', applied.metadata.annotations ?? {}, live.metadata.annotations ?? {}, paths);
  return paths.length > 0 ? [`the live Agent was changed outside agent-manager at ${paths.join(', ')}`] : [];
}

/** Paths where `live` differs from `applied`, for every field `applied` sets (server defaults are ignored). */
function collect(path: string, applied: unknown, live: unknown, out: string[]): void {
  if (isPlainObject(applied) && isPlainObject(live)) {
    for (const key of Object.keys(applied).sort()) collect(`${path}.${key}`, applied[key], live[key], out);
    return;
  }
  if (!isDeepStrictEqual(applied, live)) out.push(path);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
