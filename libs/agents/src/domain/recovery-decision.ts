import { isDeepStrictEqual } from 'node:util';
import type { LiveAgent } from '@app/kube';
import type { ChartValues, OperationKind } from './agent-spec.js';
import { compareDrift } from './drift.js';

/** What helm holds for the release now (`helm status`), or null when there is no release. */
export interface ReleaseState {
  status: string;
  revision: number;
  values: Record<string, unknown>;
}

/** An interrupted write, as the journal holds it, and what the store holds around it. */
export interface InterruptedWrite {
  kind: OperationKind;
  /** The helm revision the write started from (null for a create). */
  baseHelmRevision: number | null;
  /** The values it meant to apply (null for a delete). */
  values: ChartValues | null;
  /** The agent the write was on: active, deleted meanwhile, or none (a create). */
  agent: 'active' | 'inactive' | 'none';
  /** For a create: another agent of the same name was recorded meanwhile. */
  nameTaken: boolean;
}

export type RecoveryDecision =
  | { action: 'record'; what: 'create' | 'change' | 'delete' }
  | { action: 'fail'; why: string }
  | { action: 'wait'; heldPending: string; revision: number };

/**
 * What became of an interrupted write, from the journal and what helm holds: a change helm
 * applied (a deployed revision after the one it started from, holding its values) is recorded;
 * one it did not apply is failed; while helm itself holds the release pending-*, nothing is guessed.
 */
export function decideRecovery(write: InterruptedWrite, release: ReleaseState | null): RecoveryDecision {
  if (release && release.status.startsWith('pending')) return { action: 'wait', heldPending: release.status, revision: release.revision };
  if (write.kind === 'delete') {
    if (!release && write.agent === 'active') return { action: 'record', what: 'delete' };
    if (release?.status === 'uninstalling') {
      return { action: 'fail', why: 'helm left the release uninstalling (its uninstall was cut off, the Agent may be gone already): delete the agent again to finish it' };
    }
    return { action: 'fail', why: release ? 'the release is still installed' : 'the agent was already gone' };
  }
  const landed =
    release !== null &&
    release.status === 'deployed' &&
    release.revision > (write.baseHelmRevision ?? 0) &&
    write.values !== null &&
    isDeepStrictEqual(release.values, write.values);
  if (!landed) return { action: 'fail', why: release ? `the release holds revision ${release.revision} (${release.status}) with other values` : 'there is no release' };
  if (write.kind === 'create') return write.nameTaken ? { action: 'fail', why: 'another agent of this name was recorded meanwhile' } : { action: 'record', what: 'create' };
  if (write.agent !== 'active') return { action: 'fail', why: 'the agent is no longer active' };
  return { action: 'record', what: 'change' };
}

/** What the store holds for one agent name, as the reconciler sees it. */
export interface StoreSide {
  /** The active agent's record: what agent-manager last applied. */
  agent: { helmRevision: number | null; values: ChartValues } | null;
  /** With no active agent: the values of the last create of this name that was never recorded (pending or failed). */
  createIntent: ChartValues | null;
}

/** The release helm holds now, the Agent its manifest applied, and its last deployed revision (from `helm history`). */
export interface ReleaseSide extends ReleaseState {
  lastDeployed: number | null;
  /** The Agent in the current revision's manifest (null when it has none). */
  agent: LiveAgent | null;
}

export type Finding = 'missing' | 'drift' | 'unmanaged' | 'failed' | 'no-live-object';

export type ReconcileAction =
  | { action: 'none' }
  /** A create helm deployed that the store recorded failed or left pending: record it. */
  | { action: 'record-create' }
  /** A half-release nothing can finish: uninstall it and close the create failed. */
  | { action: 'uninstall'; why: string }
  /** A half-release with a store intent: uninstall it and install the intent again. */
  | { action: 'reinstall'; from: 'record' | 'intent' }
  /** An upgrade or rollback helm left pending: back to the last deployed revision. */
  | { action: 'rollback'; to: number }
  /** Reported, never overwritten: the store and the cluster disagree for a reason a person must judge. */
  | { action: 'report'; finding: Finding; why: string };

const PENDING_CHANGE = new Set(['pending-upgrade', 'pending-rollback']);

/**
 * The reconciler's decision table: store ↔ helm release ↔ live Agent (null when it is gone) → one
 * action. It runs after the recovery sweep resolved pending operations, and only on agents no write
 * holds. Drift is status's comparison (compareDrift), so both give one verdict.
 */
export function decideReconcile(store: StoreSide, release: ReleaseSide | null, live: LiveAgent | null): ReconcileAction {
  if (release?.status === 'pending-install') return pendingInstall(store, live !== null);
  if (release && PENDING_CHANGE.has(release.status)) {
    if (release.lastDeployed === null) return { action: 'report', finding: 'failed', why: `helm holds the release ${release.status} with no deployed revision to return to` };
    return { action: 'rollback', to: release.lastDeployed };
  }
  if (!store.agent) return unrecorded(store, release);
  if (!release) return { action: 'report', finding: 'missing', why: 'the helm release was removed outside agent-manager: delete the agent, or roll it back to re-install it' };
  if (release.status !== 'deployed') return { action: 'report', finding: 'failed', why: `helm reports the release ${release.status} (revision ${release.revision})` };
  const { drift, missing } = compareDrift({ ...store.agent.values }, [{ values: release.values, agent: release.agent }], live);
  if (drift.length === 0) return { action: 'none' };
  if (missing && drift.length === 1) return { action: 'report', finding: 'no-live-object', why: 'the Agent was deleted outside agent-manager: an update or rollback applies it again' };
  return { action: 'report', finding: 'drift', why: `drifted from what agent-manager applied at revision ${release.revision} (${drift.join('; ')}): update or roll back the agent to re-apply it` };
}

function pendingInstall(store: StoreSide, live: boolean): ReconcileAction {
  if (store.agent) return { action: 'reinstall', from: 'record' };
  if (live && store.createIntent) return { action: 'reinstall', from: 'intent' };
  return { action: 'uninstall', why: live ? 'helm left the install pending and the store holds no create of it' : 'helm left the install pending and it created nothing' };
}

function unrecorded(store: StoreSide, release: ReleaseSide | null): ReconcileAction {
  if (!release) return { action: 'none' };
  if (release.status !== 'deployed') return { action: 'report', finding: 'failed', why: `a release of the agent chart the store does not know is ${release.status}` };
  if (store.createIntent && isDeepStrictEqual(release.values, store.createIntent)) return { action: 'record-create' };
  return { action: 'report', finding: 'unmanaged', why: 'a release of the agent chart the store does not know: adopt it (POST /api/v1/agents/adopt, adopt_agent)' };
}
