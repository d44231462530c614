import type { ReleaseRef } from '@app/helm';
import type { LiveAgent } from '@app/kube';

/** One release of the agent chart as the watches hold it: its current revision, and its last deployed one. */
export interface WatchedRelease {
  namespace: string;
  name: string;
  revision: number;
  status: string;
  /** "<chart name>-<chart version>" */
  chart: string;
  values: Record<string, unknown>;
  manifest: string;
  lastDeployed: number | null;
}

export interface FleetChange {
  kind: 'release' | 'agent';
  namespace: string;
  name: string;
}

/** What the reconciler and status reads need of the watched releases and live Agents (cluster/fleet-view.ts). */
export interface WatchedFleet {
  start(): void;
  stop(): Promise<void>;
  readonly synced: boolean;
  /** Resolves true once synced, false when `timeoutMs` passed first. */
  whenSynced(timeoutMs: number): Promise<boolean>;
  release(ref: ReleaseRef): WatchedRelease | null;
  agent(ref: ReleaseRef): LiveAgent | null;
  keys(): ReleaseRef[];
  onChange(listener: (change: FleetChange) => void): () => void;
}

export const WATCHED_FLEET = Symbol('WatchedFleet');
