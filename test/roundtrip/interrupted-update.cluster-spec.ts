// npm test: also with helm 3 — the pending-upgrade state each major leaves, and its recovery
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { TestCluster } from '../support/cluster.js';
import { call, startTestApp, statusOnceSeen, type TestApp } from '../support/test-app.js';

/**
 * An update interrupted after helm recorded its new revision (pending-upgrade) but before it
 * applied the Agent. The pending revision is written the way helm writes it at the start of an
 * upgrade: a copy of the deployed release Secret with the new values and manifest (helm 3 and 4
 * store releases alike, `sh.helm.release.v1.<name>.v<revision>`, base64 of gzipped JSON).
 */
jest.setTimeout(120_000);

type Release = { version: number; info: { status: string; description: string }; config: Record<string, unknown>; manifest: string };

describe('status of an agent whose update was interrupted', () => {
  let t: TestApp;
  let cluster: TestCluster;
  let ns: string;
  const name = 'interrupted';

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    // The pending revision is written by hand, with no writer holding the agent: the automatic
    // reconciler would take it for an abandoned one and roll it back under the assertions.
    t = await startTestApp({ KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '60', RECONCILE_AUTOMATIC: 'false' });
    ns = await cluster.freshNamespace('int');
  });

  afterAll(async () => {
    await t?.close();
  });

  async function writePendingRevision(from: number, edit: (release: Release) => void): Promise<void> {
    const secret = await cluster.core.readNamespacedSecret({ namespace: ns, name: `sh.helm.release.v1.${name}.v${from}` });
    const release = JSON.parse(gunzipSync(Buffer.from(Buffer.from(secret.data!.release, 'base64').toString(), 'base64')).toString()) as Release;
    release.version = from + 1;
    release.info.status = 'pending-upgrade';
    release.info.description = 'Preparing upgrade';
    edit(release);
    await cluster.core.createNamespacedSecret({
      namespace: ns,
      body: {
        metadata: { name: `sh.helm.release.v1.${name}.v${from + 1}`, labels: { ...secret.metadata!.labels, status: 'pending-upgrade', version: String(from + 1) } },
        type: secret.type,
        data: { release: Buffer.from(gzipSync(JSON.stringify(release)).toString('base64')).toString('base64') },
      },
    });
  }

  it('answers progressing with the pending state and the deployed revision, not "changed outside agent-manager"', async () => {
    const created = await call(t.url, 'POST', '/api/v1/agents', { name, namespace: ns, modelConfig: 'default-model-config', toolset: ['preset:read-only'], systemMessage: 'Before.' });
    expect(created.status).toBe(201);
    await writePendingRevision(1, (release) => {
      release.config.systemMessage = 'After.';
      release.manifest = release.manifest.replace('"Before."', '"After."');
    });

    const status = await statusOnceSeen(t.url, `/api/v1/agents/${ns}/${name}`, (body) => body.releaseStatus !== 'deployed');
    expect(status.body).toMatchObject({ verdict: 'progressing', releaseStatus: 'pending-upgrade', releaseRevision: 2, drift: [] });
    expect(status.body.message).toMatch(/pending-upgrade at revision 2 \(Preparing upgrade\): a write that has not finished or was interrupted; the cluster still holds revision 1, the last deployed/);
  });

  it('still reports an edit made outside agent-manager meanwhile', async () => {
    await cluster.editAgent(ns, name, (agent) => {
      agent.spec.declarative.systemMessage = 'edited with kubectl';
    });
    const status = await statusOnceSeen(t.url, `/api/v1/agents/${ns}/${name}`, (body) => body.drift.length > 0);
    expect(status.body.verdict).toBe('failed');
    expect(status.body.drift).toEqual(['the live Agent was changed outside agent-manager at spec.declarative.systemMessage']);
  });
});
