import type { Condition, LiveAgent } from '@app/kube';
import { compareDrift, type AppliedRevision } from './drift.js';

export type Verdict = 'ready' | 'progressing' | 'failed' | 'unknown';

export interface StatusFacts {
  namespace: string;
  name: string;
  storeRevision: number;
  storeValues: Record<string, unknown>;
  /** The release's current revision; `description` is helm's reason (e.g. why an upgrade failed). */
  release: { status: string; revision: number; description?: string } | null;
  releaseValues: Record<string, unknown> | null;
  /** The Agent in the manifest of the release's current revision. */
  appliedAgent: LiveAgent | null;
  liveAgent: LiveAgent | null;
  /**
   * When the current revision is pending-* or failed: the last deployed revision, which the
   * cluster still holds unless the unfinished one got as far as applying its manifest.
   */
  deployed?: RevisionFacts | null;
}

export interface RevisionFacts extends AppliedRevision {
  /** helm's revision number. */
  revision: number;
  /** The agent's revision that helm revision applied (what rollback_agent takes); null when none did (an adopted or reinstalled release). */
  agentRevision?: number | null;
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
  const release = facts.release;
  const current: RevisionFacts = { revision: release.revision, values: facts.releaseValues ?? {}, agent: facts.appliedAgent };
  const deployed = isUnsettled(release.status) ? (facts.deployed ?? null) : null;
  // An unfinished write may or may not have recorded its values and applied its manifest: the store
  // and the cluster each holding either revision is no drift.
  const baselines = deployed ? [deployed, current] : [current];
  const compared = compareDrift(facts.storeValues, baselines, facts.liveAgent);
  const holds = baselines[Math.max(compared.holds, 0)];
  const drift = compared.drift;
  if (drift.length > 0) {
    return {
      verdict: 'failed',
      message: `Agent ${agent} has drifted from what agent-manager applied (${drift.join('; ')}); update or roll back the agent to re-apply it.`,
      drift,
      conditions,
    };
  }
  if (isUnsettled(release.status)) return { verdict: release.status === 'failed' ? 'failed' : 'progressing', message: unsettledMessage(release, deployed, holds), drift, conditions };
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

function isUnsettled(status: string): boolean {
  return status === 'failed' || status.startsWith('pending');
}

/** A pending or failed revision: what helm is doing (or why it failed) and which revision the cluster holds. */
function unsettledMessage(release: { status: string; revision: number; description?: string }, deployed: RevisionFacts | null, holds: RevisionFacts): string {
  const reason = release.description ? ` (${release.description.replace(/\.$/, '')})` : '';
  const state = `The helm release is ${release.status} at revision ${release.revision}${reason}`;
  if (!deployed) return release.status === 'failed' ? `${state}; update or delete the agent.` : `${state}.`;
  const cluster = holds === deployed ? `the cluster still holds revision ${deployed.revision}, the last deployed` : `the cluster already holds revision ${release.revision}'s Agent`;
  if (release.status === 'failed') return `${state}; ${cluster}: update or roll back the agent.`;
  const free =
    deployed.agentRevision != null
      ? `roll the agent back to revision ${deployed.agentRevision} (what helm revision ${deployed.revision} applied) with freeStuckRelease to free the release`
      : `free the release with a rollback with freeStuckRelease to the agent revision whose helmRevision is ${deployed.revision} (list_agent_revisions), or helm rollback`;
  return `${state}: a write that has not finished or was interrupted; ${cluster}. If no write is running, ${free}.`;
}
