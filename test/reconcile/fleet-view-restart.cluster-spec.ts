// Not in the helm 3 pass: what this case tests is the view's watch across an API server restart
// (a relist after 410 Gone), which no helm major changes; fleet-view.cluster-spec.ts decodes each
// major's release Secrets. It needs a control plane of its own, which the helm 3 pass need not start again.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { FleetView } from '@app/agents';
import { HelmClient } from '@app/helm';
import { TestCluster } from '../support/cluster.js';
import { CHART, HELM, startedView, until } from './fleet-view-support.js';

// Sized for 2 cores shared with other builds: a control plane started and its API server restarted.
jest.setTimeout(300_000);

/** A control plane of its own: its API server is stopped and started. */
describe(`${FleetView.name} across an API server restart`, () => {
  let cluster: TestCluster;
  let helm: HelmClient;
  let view: FleetView;
  let ns: string;

  beforeAll(async () => {
    cluster = await TestCluster.ownControlPlane();
    helm = new HelmClient({ bin: HELM, kubeconfig: cluster.kubeconfig, timeoutSeconds: 60 });
    ns = await cluster.freshNamespace('fleet');
    view = await startedView(cluster, []);
  });

  afterAll(async () => {
    await view?.stop();
    await helm?.close();
    await cluster?.stop();
  });

  it('lists again when its watch is too old to resume, and sees a change made after the API server came back', async () => {
    const ref = { namespace: ns, name: 'survivor' };
    await helm.install(ref, CHART, { modelConfig: 'before' });
    await until('the install', () => view.release(ref), (r) => r?.revision === 1);
    // A write the Secret watch does not select: the API server's watch cache starts after the watch's last resourceVersion when it restarts, so resuming it answers 410 Gone.
    await cluster.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'unwatched' } } });
    await cluster.stopApiserver();
    await until('the broken watch', () => view.synced, (synced) => !synced);
    await cluster.startApiserver();
    expect(await view.whenSynced(60_000)).toBe(true);
    expect(view.stats().relists).toBeGreaterThanOrEqual(1);
    expect(view.release(ref)).toMatchObject({ revision: 1, values: { modelConfig: 'before' } });
    await helm.upgradeInstall(ref, CHART, { modelConfig: 'after' });
    const release = await until('the upgrade after the restart', () => view.release(ref), (r) => r?.revision === 2 && r.status === 'deployed');
    expect(release?.values).toEqual({ modelConfig: 'after' });
  });
});
