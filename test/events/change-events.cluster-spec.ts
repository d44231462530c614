import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { TestCluster } from '../support/cluster.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';
import { QUICK_WEBHOOKS, TestReceiver, until, webhooksFile } from './events-support.js';

// helm runs a few times on 2 shared cores.
jest.setTimeout(240_000);

/**
 * Change events of agent writes (docs/contract.md §14), against the test API server with the real
 * helm: a webhook receives exactly the writes that were committed (created, updated, rolled back,
 * deleted), each signed, in order, with who, the operation, the revision and the spec's field
 * changes; the refused ones and the one helm failed send nothing.
 */
describe('change events of agent writes', () => {
  const secret = 'another-webhook-secret-long-enough';
  const receiver = new TestReceiver(secret);
  let cluster: TestCluster;
  let t: TestApp;
  let dir: string;
  let ns: string;
  const create = { name: 'evented', modelConfig: 'default-model-config', toolset: ['preset:read-only'], systemMessage: 'First.', labels: { team: 'sre' } };

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    dir = mkdtempSync(join(tmpdir(), 'am-events-cluster-'));
    await receiver.up();
    ns = await cluster.freshNamespace('events');
    const hooks = webhooksFile(dir, 'hooks.yaml', [{ name: 'audit', url: receiver.url(), secret, types: ['io.agent-manager.agent.*'], namespaces: [ns] }]);
    t = await startTestApp({ KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '60', WEBHOOKS_FILE: hooks, ...QUICK_WEBHOOKS });
  });

  afterAll(async () => {
    await t?.close();
    await receiver.down();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends the committed writes, in order, signed, with actor, operation, revision and field changes; failed writes send nothing', async () => {
    const path = `/api/v1/agents/${ns}/${create.name}`;
    expect((await call(t.url, 'POST', '/api/v1/agents', { ...create, namespace: ns }, { 'x-actor': 'alice' })).status).toBe(201);
    expect((await call(t.url, 'POST', '/api/v1/agents', { ...create, namespace: ns })).status).toBe(409);
    expect((await call(t.url, 'PATCH', path, { toolset: ['tool:no spaces allowed'] })).status).toBe(400);
    const updated = await call(t.url, 'PATCH', path, { toolset: ['preset:none'], systemMessage: 'Second.' }, { 'x-actor': 'bob' });
    expect(updated.status).toBe(200);
    expect((await call(t.url, 'PATCH', path, { toolset: ['preset:none'] })).body.changed).toBe(false);
    // helm fails: an Agent of that name exists that helm does not own
    await cluster.objects.createNamespacedCustomObject({
      group: 'kagent.dev', version: 'v1alpha2', namespace: ns, plural: 'agents',
      body: { apiVersion: 'kagent.dev/v1alpha2', kind: 'Agent', metadata: { name: 'clash' }, spec: { type: 'Declarative', description: 'made by hand', declarative: { modelConfig: 'default-model-config', systemMessage: 'hand-made' } } },
    });
    const clash = await call(t.url, 'POST', '/api/v1/agents', { ...create, name: 'clash', namespace: ns });
    expect(clash.status).toBeGreaterThanOrEqual(400);
    expect((await call(t.url, 'POST', `${path}/rollback`, { revision: 1 }, { 'x-actor': 'carol' })).status).toBe(200);
    expect((await call(t.url, 'DELETE', path, undefined, { 'x-actor': 'dave' })).status).toBe(200);

    await until('four events', () => receiver.accepted().length >= 4);
    await new Promise((resolve) => setTimeout(resolve, 500)); // and no more
    const got = receiver.accepted();
    expect(got.map((event) => [event.type, event.subject, event.data?.actor, event.data?.revision])).toEqual([
      ['io.agent-manager.agent.created', `${ns}/evented`, 'alice', 1],
      ['io.agent-manager.agent.updated', `${ns}/evented`, 'bob', 2],
      ['io.agent-manager.agent.rolled_back', `${ns}/evented`, 'carol', 3],
      ['io.agent-manager.agent.deleted', `${ns}/evented`, 'dave', 3],
    ]);
    expect(receiver.received.every((r) => r.signed && r.status === 204)).toBe(true);
    expect(got[0]).toMatchObject({ source: `/agent-manager/namespaces/${ns}`, namespace: ns, data: { operation: 'create', helmRevision: 1 } });
    expect(got[1].data).toMatchObject({
      operation: 'update',
      operationId: updated.body.agent.lastOperation.id,
      changes: [
        { path: 'systemMessage', before: 'First.', after: 'Second.' },
        { path: 'toolset', before: ['preset:read-only'], after: ['preset:none'] },
      ],
    });
    expect(got[2].data).toMatchObject({ operation: 'rollback', rolledBackTo: 1, changes: expect.arrayContaining([{ path: 'toolset', before: ['preset:none'], after: ['preset:read-only'] }]) });
    // the journal has the failed create; the outbox has no event of it
    const events = await call(t.url, 'GET', `/api/v1/events?subject=${ns}/clash`);
    expect(events.body.items).toEqual([]);
    const failed = await call(t.url, 'GET', `/api/v1/operations?namespace=${ns}&name=clash`);
    expect(failed.body.items.map((op: { outcome?: string; state?: string }) => op.outcome ?? op.state)).toContain('failed');
  });
});
