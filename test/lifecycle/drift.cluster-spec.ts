// npm test: also with helm 3 — client-side (helm 3) vs server-side apply (helm 4) of the chart's fields
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { AppConfig } from '@app/common';
import { HelmClient, resolveHelmBinary } from '@app/helm';
import { TestCluster } from '../support/cluster.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';

// Sized for 2 cores shared with other builds: up to nine helm runs (HELM_TIMEOUT_SECONDS 60 each).
jest.setTimeout(300_000);

/**
 * Issue 24 item 7, one drift verdict: after a hand edit of any field the chart sets, on the live
 * Agent (kubectl edit) or on the release (helm upgrade outside agent-manager), status says failed
 * with the drift, and a reconcile dry run reports the same drift (it said "store, helm release and
 * Agent agree" for a live edit). Real helm, real API server with the kagent CRDs.
 */
describe('status and the reconciler agree on drift', () => {
  let t: TestApp;
  let cluster: TestCluster;
  let helm: HelmClient;
  let ns: string;
  let path: string;
  let applied: any;
  const name = 'drift-helper';
  const create = {
    name,
    modelConfig: 'default-model-config',
    toolset: ['preset:read-only'],
    systemMessage: 'You help.',
    description: 'Helps.',
    displayName: 'Drift Helper',
    labels: { team: 'sre' },
    annotations: { 'example.com/note': 'n' },
  };

  /**
   * Status's drift and the reconcile dry run's item for the agent. The dry run reads helm and the
   * cluster directly; status answers from the service's watches, fresh within their lag, so it is
   * read again (for up to 30 s) until it has seen what the dry run saw.
   */
  async function verdicts(): Promise<{ verdict: string; drift: string[]; reconcile: { action: string; finding?: string; detail: string } }> {
    const reconciled = await call(t.url, 'POST', '/api/v1/reconcile', { namespace: ns, name, dryRun: true });
    expect(reconciled.status).toBe(200);
    const reconcile = reconciled.body.items[0];
    for (const deadline = Date.now() + 30_000; ; await sleep(100)) {
      const status = await call(t.url, 'GET', `${path}/status`);
      expect(status.status).toBe(200);
      const caughtUp = (status.body.drift.length > 0) === (reconcile.action === 'report');
      if (caughtUp || Date.now() > deadline) return { verdict: status.body.verdict, drift: status.body.drift, reconcile };
    }
  }

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    t = await startTestApp({ KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '60', RECONCILE_AUTOMATIC: 'false' });
    helm = new HelmClient({ bin: process.env.HELM_BIN ?? resolveHelmBinary(), kubeconfig: cluster.kubeconfig, timeoutSeconds: 60 });
    ns = await cluster.freshNamespace('drift');
    path = `/api/v1/agents/${ns}/${name}`;
    expect((await call(t.url, 'POST', '/api/v1/agents', { ...create, namespace: ns })).status).toBe(201);
    applied = await cluster.agent(ns, name);
    const clean = await verdicts();
    expect(clean.drift).toEqual([]);
    expect(clean.reconcile).toMatchObject({ action: 'none' });
  });

  afterAll(async () => {
    await t?.close();
  });

  it.each<[string, (agent: any) => void, string]>([
    ['modelConfig', (a) => (a.spec.declarative.modelConfig = 'hand-edited'), 'spec.declarative.modelConfig'],
    ['systemMessage', (a) => (a.spec.declarative.systemMessage = 'hand-edited'), 'spec.declarative.systemMessage'],
    ['description', (a) => (a.spec.description = 'hand-edited'), 'spec.description'],
    ['toolset (X-Muster-Toolset)', (a) => (a.spec.declarative.tools[0].headersFrom[0].value = 'preset:full'), 'spec.declarative.tools'],
    ['displayName (its annotation)', (a) => (a.metadata.annotations['agent-manager.giantswarm.io/display-name'] = 'X'), 'metadata.annotations.agent-manager.giantswarm.io/display-name'],
    ['a label', (a) => (a.metadata.labels.team = 'other'), 'metadata.labels.team'],
    ['an annotation', (a) => (a.metadata.annotations['example.com/note'] = 'x'), 'metadata.annotations.example.com/note'],
  ])('the live Agent: %s edited by hand is drift to both', async (_field, edit, at) => {
    await cluster.editAgent(ns, name, edit);
    const seen = await verdicts();
    expect(seen.verdict).toBe('failed');
    expect(seen.drift).toEqual([expect.stringContaining(at)]);
    expect(seen.reconcile).toMatchObject({ action: 'report', finding: 'drift', detail: expect.stringContaining(seen.drift[0]) });
    // Put back what the chart applied, as an update would.
    await cluster.editAgent(ns, name, (agent) => {
      agent.spec = applied.spec;
      agent.metadata.labels = applied.metadata.labels;
      agent.metadata.annotations = applied.metadata.annotations;
    });
    expect((await verdicts()).drift).toEqual([]);
  });

  it.each(['modelConfig', 'toolset', 'systemMessage', 'description', 'displayName', 'labels', 'annotations'])(
    'the release: %s changed with helm outside agent-manager is drift to both',
    async (key) => {
      const stored = await helm.getValues({ namespace: ns, name });
      const changed = key === 'toolset' ? ['preset:none'] : key === 'labels' || key === 'annotations' ? { other: 'x' } : 'hand-edited';
      await helm.upgradeInstall({ namespace: ns, name }, { ref: t.app.get(AppConfig).chartRef }, { ...stored, [key]: changed });
      const seen = await verdicts();
      expect(seen.verdict).toBe('failed');
      expect(seen.drift).toEqual([`release values differ from the store in ${key}`]);
      expect(seen.reconcile).toMatchObject({ action: 'report', finding: 'drift', detail: expect.stringContaining(seen.drift[0]) });
      await helm.upgradeInstall({ namespace: ns, name }, { ref: t.app.get(AppConfig).chartRef }, stored);
    },
  );
});
