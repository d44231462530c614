// npm test: also with helm 3 — the release label (--labels, helm 3.13+) on install, upgrade and rollback, and helm 3's release Secret decoded in-process
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { FleetView, type FleetChange } from '@app/agents';
import { HelmClient, type ReleaseRef } from '@app/helm';
import { TestCluster } from '../support/cluster.js';
import { CHART, HELM, startedView, until } from './fleet-view-support.js';

// Sized for 2 cores shared with other builds: about ten helm runs of up to 60 s each.
jest.setTimeout(300_000);

const run = promisify(execFile);

/** helm as someone runs it by hand, without agent-manager's label. */
async function helmByHand(cluster: TestCluster, ...args: string[]): Promise<void> {
  await run(HELM, args, { env: { ...process.env, KUBECONFIG: cluster.kubeconfig } });
}

/**
 * Issue 30 item 1: the agent chart's releases and live Agents, watched instead of asked of helm.
 * Real helm writes the releases (helm 4, and helm 3 in its pass), a real API server serves the
 * watches, and the view decodes helm's own Secrets.
 */
describe(FleetView.name, () => {
  let cluster: TestCluster;
  let helm: HelmClient;
  let ns: string;
  let outside: string;
  let view: FleetView;
  const changes: FleetChange[] = [];
  const ref = (): ReleaseRef => ({ namespace: ns, name: 'watched' });

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    helm = new HelmClient({ bin: HELM, kubeconfig: cluster.kubeconfig, timeoutSeconds: 60 });
    ns = await cluster.freshNamespace('fleet');
    outside = await cluster.freshNamespace('fleet-out');
    view = await startedView(cluster, [ns]);
    view.onChange((change) => changes.push(change));
  });

  afterAll(async () => {
    await view?.stop();
    await helm?.close();
  });

  it('shows an install with its revision, status, chart, values and manifest, and the Agent it rendered', async () => {
    await helm.install(ref(), CHART, { modelConfig: 'first-model', toolset: ['preset:read-only'] });
    const release = await until('the install', () => view.release(ref()), (r) => r?.status === 'deployed');
    expect(release).toMatchObject({ namespace: ns, name: 'watched', revision: 1, chart: 'agent-0.6.0', values: { modelConfig: 'first-model', toolset: ['preset:read-only'] }, lastDeployed: 1 });
    expect(release?.manifest).toContain('kind: Agent');
    const agent = await until('the Agent', () => view.agent(ref()), (a) => a !== null);
    expect(agent?.spec).toMatchObject({ declarative: { modelConfig: 'first-model' } });
    expect(view.keys()).toEqual([ref()]);
    expect(changes).toContainEqual({ kind: 'release', namespace: ns, name: 'watched' });
  });

  it('moves with an upgrade, and the upgrade keeps the release labelled', async () => {
    await helm.upgradeInstall(ref(), CHART, { modelConfig: 'second-model' });
    const release = await until('the upgrade', () => view.release(ref()), (r) => r?.revision === 2 && r.status === 'deployed');
    expect(release).toMatchObject({ values: { modelConfig: 'second-model' }, lastDeployed: 2 });
  });

  it('moves with a rollback, which keeps the label of the revision it returns to', async () => {
    await helm.rollback(ref(), 1);
    const release = await until('the rollback', () => view.release(ref()), (r) => r?.revision === 3 && r.status === 'deployed');
    expect(release).toMatchObject({ values: { modelConfig: 'first-model', toolset: ['preset:read-only'] }, lastDeployed: 3 });
  });

  it('falls back to the revision before when the newest revision\'s Secret is deleted by hand', async () => {
    await cluster.core.deleteNamespacedSecret({ namespace: ns, name: 'sh.helm.release.v1.watched.v3' });
    const release = await until('the revision before', () => view.release(ref()), (r) => r?.revision === 2);
    // Revision 2's own values, read from its Secret, not the deleted revision's.
    expect(release).toMatchObject({ values: { modelConfig: 'second-model' }, lastDeployed: 2 });
    expect(await view.whenSynced(60_000)).toBe(true);
  });

  it('tells of a hand edit of the live Agent, and holds the edited Agent', async () => {
    changes.length = 0;
    await cluster.editAgent(ns, 'watched', (agent) => (agent.spec.declarative.modelConfig = 'edited-by-hand'));
    await until('the edit', () => changes, (seen) => seen.some((c) => c.kind === 'agent' && c.name === 'watched'));
    expect(view.agent(ref())?.spec).toMatchObject({ declarative: { modelConfig: 'edited-by-hand' } });
  });

  it('does not see a release helm wrote without the label, nor one outside its namespaces, until labelled', async () => {
    await helmByHand(cluster, 'install', 'by-hand', CHART.ref, '--namespace', ns, '--set', 'modelConfig=m');
    await helm.install({ namespace: outside, name: 'elsewhere' }, CHART, { modelConfig: 'm' });
    // A view listed after both writes holds what the cluster holds then, so what it lacks is left out, not late.
    const fresh = await startedView(cluster, [ns]);
    const everywhere = await startedView(cluster);
    try {
      expect(fresh.release({ namespace: ns, name: 'by-hand' })).toBeNull();
      expect(fresh.release({ namespace: outside, name: 'elsewhere' })).toBeNull();
      expect(fresh.release(ref())).not.toBeNull();
      expect(everywhere.release({ namespace: outside, name: 'elsewhere' })).toMatchObject({ revision: 1, status: 'deployed' });
      expect(everywhere.release({ namespace: ns, name: 'by-hand' })).toBeNull();
      expect(await view.labelRelease({ namespace: ns, name: 'by-hand' })).toBe(1);
      await until('the labelled release', () => view.release({ namespace: ns, name: 'by-hand' }), (r) => r !== null);
      expect(view.release({ namespace: ns, name: 'by-hand' })).toMatchObject({ revision: 1, status: 'deployed', values: { modelConfig: 'm' } });
      expect(await view.labelRelease({ namespace: ns, name: 'by-hand' })).toBe(0);
    } finally {
      await Promise.all([fresh.stop(), everywhere.stop()]);
    }
  });

  it('labels by itself a revision a rollback to a release written before the label left unlabelled', async () => {
    const old = { namespace: ns, name: 'older' };
    await helmByHand(cluster, 'install', 'older', CHART.ref, '--namespace', ns, '--set', 'modelConfig=unlabelled-first');
    await helm.upgradeInstall(old, CHART, { modelConfig: 'labelled-second' });
    await until('the labelled upgrade', () => view.release(old), (r) => r?.revision === 2 && r.status === 'deployed');
    // helm rollback copies the labels of revision 1, which has none: revision 3 is written unlabelled.
    await helm.rollback(old, 1);
    const release = await until('the rollback', () => view.release(old), (r) => r?.revision === 3);
    expect(release).toMatchObject({ status: 'deployed', values: { modelConfig: 'unlabelled-first' }, lastDeployed: 3 });
  });

  it('forgets an uninstalled release and its Agent, telling of both', async () => {
    changes.length = 0;
    await helm.uninstall(ref());
    await until('the uninstall', () => [view.release(ref()), view.agent(ref())], ([release, agent]) => release === null && agent === null);
    expect(view.keys()).not.toContainEqual(ref());
    expect(changes).toEqual(expect.arrayContaining([{ kind: 'release', namespace: ns, name: 'watched' }, { kind: 'agent', namespace: ns, name: 'watched' }]));
  });
});
