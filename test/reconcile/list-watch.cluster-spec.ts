import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { KubeRest, ListWatch, type WatchChange } from '@app/kube';
import { TestCluster } from '../support/cluster.js';

jest.setTimeout(120_000);

/** Waits until `check` holds (a ceiling for a hang, not a timing target). */
async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`never saw ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * The list+watch primitive the fleet view is built on, against the real API server, on ConfigMaps:
 * paged lists, a label selector, a list of namespaces, the transform's small values, the changes
 * it tells of (an object leaving the selection included) and a stop that ends it.
 */
describe(ListWatch.name, () => {
  let cluster: TestCluster;
  let watched: string[];
  let other: string;
  let watch: ListWatch<string>;
  const changes: WatchChange<string>[] = [];

  async function configMap(namespace: string, name: string, value: string, labelled = true): Promise<void> {
    await cluster.core.createNamespacedConfigMap({ namespace, body: { metadata: { name, labels: labelled ? { 'fleet-test': 'yes' } : {} }, data: { v: value, padding: 'x'.repeat(2000) } } });
  }

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    watched = [await cluster.freshNamespace('lw'), await cluster.freshNamespace('lw')];
    other = await cluster.freshNamespace('lw-other');
    for (let i = 0; i < 5; i++) await configMap(watched[0], `cm-${i}`, `a${i}`);
    await configMap(watched[0], 'unlabelled', 'u', false);
    await configMap(watched[1], 'cm-0', 'b0');
    await configMap(other, 'cm-0', 'c0');
    watch = new ListWatch<string>(() => KubeRest.load(cluster.kubeconfig), {
      collection: { apiPath: '/api/v1', plural: 'configmaps' },
      namespaces: watched,
      labelSelector: 'fleet-test=yes',
      // Pages of two: five objects take three pages in the first namespace.
      pageSize: 2,
      transform: (object) => (object.data as { v: string }).v,
    });
    watch.onChange((change) => changes.push(change));
    watch.start();
    expect(await watch.whenSynced(30_000)).toBe(true);
  });

  afterAll(async () => {
    await watch?.stop();
  });

  it('lists every labelled object of its namespaces, page by page, keeping only what the transform made', () => {
    expect([...watch.values()].sort()).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'b0']);
    expect(watch.get(watched[0], 'unlabelled')).toBeUndefined();
    expect(watch.get(other, 'cm-0')).toBeUndefined();
    // Seven objects of over 2 KB each arrived; what is kept is their two-letter values.
    expect(watch.stats).toMatchObject({ objects: 6, relists: 0, bytesRead: expect.any(Number) });
    expect(watch.stats.bytesRead).toBeGreaterThan(6 * 2000);
  });

  it('tells of a change, a deletion, and an object that leaves the selection', async () => {
    changes.length = 0;
    await cluster.core.patchNamespacedConfigMap({ namespace: watched[1], name: 'cm-0', body: [{ op: 'replace', path: '/data/v', value: 'b0-changed' }] });
    await cluster.core.deleteNamespacedConfigMap({ namespace: watched[0], name: 'cm-1' });
    await cluster.core.patchNamespacedConfigMap({ namespace: watched[0], name: 'cm-2', body: [{ op: 'replace', path: '/metadata/labels/fleet-test', value: 'no' }] });
    await until('three changes', () => changes.length >= 3);
    expect(changes).toEqual(
      expect.arrayContaining([
        { type: 'upsert', namespace: watched[1], name: 'cm-0', value: 'b0-changed' },
        { type: 'delete', namespace: watched[0], name: 'cm-1', value: 'a1' },
        { type: 'delete', namespace: watched[0], name: 'cm-2', value: 'a2' },
      ]),
    );
    expect([...watch.values()].sort()).toEqual(['a0', 'a3', 'a4', 'b0-changed']);
  });

  it('ends on stop, and sees nothing after', async () => {
    await watch.stop();
    expect(watch.synced).toBe(false);
    changes.length = 0;
    await configMap(watched[0], 'after-stop', 'late');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(changes).toEqual([]);
    expect(watch.get(watched[0], 'after-stop')).toBeUndefined();
  });
});
