import type { ReleaseRef } from '@app/helm';
import type { LiveAgent } from '@app/kube';
import type { FleetChange, WatchedRelease } from '../cluster/fleet-view.js';

export type { FleetChange, WatchedRelease };

/** What the reconciler and status reads need of the watched releases and live Agents (cluster/fleet-view.ts). */
export interface WatchedFleet {
  start(namespaces?: readonly string[]): void;
  stop(): Promise<void>;
  readonly synced: boolean;
  /** Resolves true once synced, false when `timeoutMs` passed first. */
  whenSynced(timeoutMs: number): Promise<boolean>;
  release(ref: ReleaseRef): WatchedRelease | null;
  agent(ref: ReleaseRef): LiveAgent | null;
  keys(): ReleaseRef[];
  onChange(listener: (change: FleetChange) => void): () => void;
  /** Labels an existing release's revision Secrets as agent-manager's (a release written before it labelled its own); how many it labelled. */
  labelRelease(ref: ReleaseRef): Promise<number>;
}

export const WATCHED_FLEET = Symbol('WatchedFleet');
