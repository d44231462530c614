// npm test: also with helm 3 — each major's wait on an Agent whose generation nobody observes
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { HelmClient, resolveHelmBinary } from '@app/helm';
import { TestCluster } from '../support/cluster.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';

/**
 * Writes return once helm applied them; the Agent's readiness is the status read's to report
 * (README). An Agent kagent reconciled once (status.observedGeneration) and that its controller
 * no longer reconciles (kagent down, or slow) must not hold a write: on helm 4, a write with
 * --rollback-on-failure and hookOnly waited for the controller with the status watcher until
 * HELM_TIMEOUT_SECONDS, rolled back, and left the release pending-rollback.
 */
jest.setTimeout(180_000);

describe('writes while kagent does not reconcile', () => {
  let t: TestApp;
  let cluster: TestCluster;
  let helm: HelmClient;
  let ns: string;

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    // The automatic reconciler is not under test here (test/lifecycle/reconciler.cluster-spec.ts is its
    // suite), and a finding of its own would race the assertions: off, as in the other cluster suites.
    t = await startTestApp({ KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '20', RECONCILE_AUTOMATIC: 'false' });
    helm = new HelmClient({ bin: process.env.HELM_BIN ?? resolveHelmBinary(), kubeconfig: cluster.kubeconfig, timeoutSeconds: 60 });
    ns = await cluster.freshNamespace('nokagent');
  });

  afterAll(async () => {
    await t?.close();
  });

  it('updates and rolls back an Agent whose new generation nobody observes: applied, recorded, the release deployed', async () => {
    const path = `/api/v1/agents/${ns}/observed`;
    const created = await call(t.url, 'POST', '/api/v1/agents', { name: 'observed', namespace: ns, modelConfig: 'default-model-config', toolset: ['preset:read-only'] });
    expect(created.status).toBe(201);
    await cluster.markObservedReady(ns, 'observed');

    const updated = await call(t.url, 'PATCH', path, { systemMessage: 'kagent is down' });
    expect(updated.status).toBe(200);
    expect(updated.body.agent).toMatchObject({ revision: 2, lastOperation: { kind: 'update', state: 'succeeded' } });
    expect(await helm.status({ namespace: ns, name: 'observed' })).toMatchObject({ status: 'deployed', revision: 2 });
    const live = await cluster.agent(ns, 'observed');
    expect(live.spec.declarative.systemMessage).toBe('kagent is down');
    expect(live.status.observedGeneration).toBeLessThan(live.metadata.generation);

    const rolledBack = await call(t.url, 'POST', `${path}/rollback`, { revision: 1 });
    expect(rolledBack.status).toBe(200);
    expect(await helm.status({ namespace: ns, name: 'observed' })).toMatchObject({ status: 'deployed', revision: 3 });
  });
});
