// npm test: also with helm 3 — install, upgrade, rollback and uninstall: each major's flags and the JSON it prints
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { HelmClient, resolveHelmBinary } from '@app/helm';
import { ApiServerDoor } from '../support/apiserver-door.js';
import { TestCluster } from '../support/cluster.js';
import { call, startTestApp, statusOnceSeen, type TestApp } from '../support/test-app.js';

/**
 * The whole lifecycle through REST, the real helm (HELM_BIN picks 3 or 4) and a real
 * kube-apiserver with the kagent CRDs. Steps build on each other, in order.
 */
// Sized for 2 cores shared with other builds: one step runs helm up to a few times (HELM_TIMEOUT_SECONDS 60 each).
jest.setTimeout(240_000);

describe('agent lifecycle against a real API server', () => {
  let t: TestApp;
  let cluster: TestCluster;
  let door: ApiServerDoor;
  let helm: HelmClient;
  let ns: string;
  const name = 'incident-helper';
  let path: string;
  const create = {
    name,
    modelConfig: 'default-model-config',
    toolset: ['preset:read-only', 'workflow:incident-triage', 'tool:überwachung'],
    systemMessage: 'You triage incidents.',
    labels: { team: 'sre' },
  };

  beforeAll(async () => {
    // One case takes the API server out of the service's reach: the service (and its helm) reach the
    // run's shared one through a door that case shuts, so no control plane of its own is started.
    cluster = TestCluster.fromEnv();
    door = await ApiServerDoor.before(cluster.kubeconfig);
    // The automatic reconciler is not under test here (test/lifecycle/reconciler.cluster-spec.ts is its
    // suite), and a finding of its own would race the assertions: off, as in the other cluster suites.
    t = await startTestApp({ KUBECONFIG: door.kubeconfig, HELM_TIMEOUT_SECONDS: '60', RECONCILE_AUTOMATIC: 'false' });
    helm = new HelmClient({ bin: process.env.HELM_BIN ?? resolveHelmBinary(), kubeconfig: cluster.kubeconfig, timeoutSeconds: 60 });
    ns = await cluster.freshNamespace('life');
    path = `/api/v1/agents/${ns}/${name}`;
  });

  afterAll(async () => {
    await t?.close();
    await door?.shut();
  });

  it('creates: a release, the Agent with X-Muster-Toolset exactly as declared, and revision 1 with the values helm reports', async () => {
    const res = await call(t.url, 'POST', '/api/v1/agents', { ...create, namespace: ns }, { 'x-actor': 'alice' });
    expect(res.status).toBe(201);
    expect(res.body.agent).toMatchObject({ namespace: ns, name, revision: 1, helmRevision: 1, state: 'active', createdBy: 'alice' });
    expect(res.body.agent.lastOperation).toMatchObject({ kind: 'create', state: 'succeeded' });

    const release = await helm.status({ namespace: ns, name });
    expect(release).toMatchObject({ status: 'deployed', revision: 1 });
    const agent = await cluster.agent(ns, name);
    expect(agent.spec.declarative.tools[0].headersFrom).toEqual([{ name: 'X-Muster-Toolset', value: create.toolset.join(',') }]);
    expect(agent.metadata.labels.team).toBe('sre');

    const revisions = await call(t.url, 'GET', `${path}/revisions`);
    expect(revisions.body.items).toHaveLength(1);
    expect(revisions.body.items[0].values).toEqual(await helm.getValues({ namespace: ns, name }));
  });

  it('refuses a create into a namespace the cluster does not have, saying to create it', async () => {
    const res = await call(t.url, 'POST', '/api/v1/agents', { ...create, namespace: 'no-such-namespace' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', details: [{ path: 'namespace' }] });
    expect(res.body.error.message).toMatch(/namespace "no-such-namespace" does not exist in the cluster: create it first/);
  });

  it('refuses a second create of the same agent with conflict', async () => {
    const res = await call(t.url, 'POST', '/api/v1/agents', { ...create, namespace: ns });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('conflict');
  });

  it('updates: a new helm revision, the Agent changed, revision 2 recorded with before and after', async () => {
    const res = await call(t.url, 'PATCH', path, { toolset: ['preset:none'], systemMessage: 'Chat only.', labels: { team: 'platform' } }, { 'x-actor': 'bob' });
    expect(res.status).toBe(200);
    expect(res.body.changed).toBe(true);
    expect(res.body.before.toolset).toEqual(create.toolset);
    expect(res.body.after.toolset).toEqual(['preset:none']);
    expect(res.body.agent).toMatchObject({ revision: 2, helmRevision: 2, updatedBy: 'bob' });

    const agent = await cluster.agent(ns, name);
    expect(agent.spec.declarative.tools ?? []).toEqual([]);
    expect(agent.spec.declarative.systemMessage).toBe('Chat only.');
    expect(agent.metadata.labels.team).toBe('platform');
  });

  it('makes no revision for an update that changes nothing', async () => {
    const res = await call(t.url, 'PATCH', path, { toolset: ['preset:none'], systemMessage: 'Chat only.' });
    expect(res.status).toBe(200);
    expect(res.body.changed).toBe(false);
    expect((await helm.history({ namespace: ns, name })).length).toBe(2);
    expect((await call(t.url, 'GET', `${path}/revisions`)).body.items).toHaveLength(2);
  });

  it('reports status from the release and the Agent conditions', async () => {
    const before = await call(t.url, 'GET', `${path}/status`);
    expect(before.body).toMatchObject({ verdict: 'progressing', releaseStatus: 'deployed', drift: [] });

    await cluster.setConditions(ns, name, [
      { type: 'Accepted', status: 'True', reason: 'Reconciled', lastTransitionTime: new Date().toISOString() },
      { type: 'Ready', status: 'True', reason: 'DeploymentReady', lastTransitionTime: new Date().toISOString() },
    ]);
    const ready = await statusOnceSeen(t.url, path, (body) => body.verdict !== 'progressing');
    expect(ready.body).toMatchObject({ verdict: 'ready', drift: [] });
    expect(ready.body.message).toMatch(/ready at revision 2/);

    await cluster.setConditions(ns, name, [
      { type: 'Accepted', status: 'False', reason: 'ModelConfigNotFound', message: 'ModelConfig default-model-config not found', lastTransitionTime: new Date().toISOString() },
    ]);
    const refused = await statusOnceSeen(t.url, path, (body) => body.verdict !== 'ready');
    expect(refused.body.verdict).toBe('failed');
    expect(refused.body.message).toMatch(/ModelConfig default-model-config not found/);
  });

  it('reports a live Agent changed outside agent-manager as drifted, naming what differs', async () => {
    await cluster.editAgent(ns, name, (agent) => {
      agent.spec.declarative.systemMessage = 'edited with kubectl';
    });
    const res = await statusOnceSeen(t.url, path, (body) => body.drift.length > 0);
    expect(res.body.verdict).toBe('failed');
    expect(res.body.drift).toEqual(['the live Agent was changed outside agent-manager at spec.declarative.systemMessage']);
  });

  it('lists revisions with who, when and values, and rolls back to revision 1 as a new revision', async () => {
    const revisions = await call(t.url, 'GET', `${path}/revisions`);
    expect(revisions.body.items.map((r: any) => [r.revision, r.kind, r.createdBy])).toEqual([
      [1, 'create', 'alice'],
      [2, 'update', 'bob'],
    ]);
    expect(Date.parse(revisions.body.items[1].createdAt)).not.toBeNaN();

    const res = await call(t.url, 'POST', `${path}/rollback`, { revision: 1 }, { 'x-actor': 'carol' });
    expect(res.status).toBe(200);
    expect(res.body.rolledBackTo).toBe(1);
    expect(res.body.after.toolset).toEqual(create.toolset);
    expect(res.body.agent).toMatchObject({ revision: 3, toolset: create.toolset });

    const agent = await cluster.agent(ns, name);
    expect(agent.spec.declarative.tools[0].headersFrom[0].value).toBe(create.toolset.join(','));
    expect(agent.spec.declarative.systemMessage).toBe(create.systemMessage);
    const after = await call(t.url, 'GET', `${path}/revisions`);
    expect(after.body.items.at(-1)).toMatchObject({ revision: 3, kind: 'rollback', rolledBackTo: 1, createdBy: 'carol' });
    expect((await call(t.url, 'GET', `${path}/status`)).body.drift).toEqual([]);
  });

  it('refuses a value the CRD refuses with invalid_request carrying the server\'s message, and records no revision', async () => {
    const res = await call(t.url, 'PATCH', path, { modelConfig: 'Not_A_Name' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toMatch(/modelConfig/);
    const agent = await call(t.url, 'GET', path);
    expect(agent.body.revision).toBe(3);
    expect(agent.body.lastOperation).toMatchObject({ kind: 'update', state: 'failed', errorCode: 'invalid_request' });
    expect((await cluster.agent(ns, name)).spec.declarative.modelConfig).toBe('default-model-config');
  });

  it('answers backend_error while the API server is down, changes nothing, and succeeds once it is back', async () => {
    await door.shut();
    try {
      const res = await call(t.url, 'PATCH', path, { systemMessage: 'During the outage.' });
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe('backend_error');
      expect(res.body.error.message).toMatch(/connection refused|unreachable|connect/i);
      const agent = await call(t.url, 'GET', path);
      expect(agent.body).toMatchObject({ revision: 3, spec: { systemMessage: create.systemMessage } });
      expect(agent.body.lastOperation).toMatchObject({ kind: 'update', state: 'failed', errorCode: 'backend_error' });
      expect((await call(t.url, 'GET', `${path}/status`)).body.verdict).toBe('unknown');
    } finally {
      await door.open();
    }
    const res = await call(t.url, 'PATCH', path, { systemMessage: 'After the outage.' });
    expect(res.status).toBe(200);
    expect(res.body.agent.revision).toBe(4);
    expect((await cluster.agent(ns, name)).spec.declarative.systemMessage).toBe('After the outage.');
  });

  it('reports a release removed outside agent-manager as missing', async () => {
    const other = 'removed-behind-our-back';
    expect((await call(t.url, 'POST', '/api/v1/agents', { ...create, name: other, namespace: ns })).status).toBe(201);
    await helm.uninstall({ namespace: ns, name: other });
    const res = await call(t.url, 'GET', `/api/v1/agents/${ns}/${other}/status`);
    expect(res.body).toMatchObject({ verdict: 'failed', drift: ['release: missing'], releaseStatus: null });
  });

  it('deletes: release uninstalled, Agent gone, record kept as deleted with its history', async () => {
    const res = await call(t.url, 'DELETE', path);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ dryRun: false, releaseRemoved: true, deleted: { state: 'deleted' } });
    expect(await helm.status({ namespace: ns, name })).toBeNull();
    expect(await cluster.agent(ns, name)).toBeNull();
    expect((await call(t.url, 'GET', path)).status).toBe(404);
    expect((await call(t.url, 'DELETE', path)).status).toBe(404);
    const deleted = await call(t.url, 'GET', `/api/v1/agents?namespace=${ns}&status=deleted`);
    expect(deleted.body.items.map((a: any) => [a.name, a.revision])).toEqual([[name, 4]]);
  });

  it('starts a new create of the same name fresh, at revision 1', async () => {
    const res = await call(t.url, 'POST', '/api/v1/agents', { ...create, namespace: ns });
    expect(res.status).toBe(201);
    expect(res.body.agent.revision).toBe(1);
    expect((await call(t.url, 'GET', `${path}/revisions`)).body.items).toHaveLength(1);
    const all = await call(t.url, 'GET', `/api/v1/agents?namespace=${ns}&status=all`);
    expect(all.body.items.filter((a: any) => a.name === name).map((a: any) => a.state).sort()).toEqual(['active', 'deleted']);
  });
});
