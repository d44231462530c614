import { isDeepStrictEqual } from 'node:util';
import type { ChartValues, OperationKind } from './agents.types.js';

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
