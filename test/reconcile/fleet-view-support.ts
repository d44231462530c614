import { join } from 'node:path';
import { expect } from '@jest/globals';
import { FleetView } from '@app/agents';
import { resolveHelmBinary } from '@app/helm';
import { ClusterState } from '@app/kube';
import type { TestCluster } from '../support/cluster.js';

/** The agent chart, as the service installs it. */
export const CHART = { ref: join(process.cwd(), 'charts', 'agent') };
/** The pass's helm (HELM_BIN: helm 3 in its pass), as the service resolves it. */
export const HELM = process.env.HELM_BIN ?? resolveHelmBinary();

/** A view of `cluster` over `namespaces` (empty: the whole cluster), started and synced. */
export async function startedView(cluster: TestCluster, namespaces: string[] = []): Promise<FleetView> {
  const view = new FleetView(new ClusterState({ KUBECONFIG: cluster.kubeconfig }), cluster.kubeconfig);
  view.start(namespaces);
  expect(await view.whenSynced(60_000)).toBe(true);
  return view;
}

/** Waits until `check` holds (a ceiling for a hang, not a timing target); answers its last value. */
export async function until<T>(what: string, read: () => T, check: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 60_000;
  let value = read();
  while (!check(value)) {
    if (Date.now() > deadline) throw new Error(`the view never showed ${what}; it holds ${JSON.stringify(value)?.slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = read();
  }
  return value;
}
