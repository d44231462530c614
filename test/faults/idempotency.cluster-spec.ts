// npm test: also on PostgreSQL — idempotency keys and the first answer kept in the store across a store failure
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { HelmClient, resolveHelmBinary } from '@app/helm';
import { TestCluster } from '../support/cluster.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { storeBlip } from '../support/store-blip.js';
import { call, freshDatabaseUrl, startTestApp, type FreshDatabase, type TestApp } from '../support/test-app.js';

jest.setTimeout(240_000);

const realHelm = resolve(process.env.HELM_BIN ?? resolveHelmBinary());
const slowHelm = resolve('test/support/slow-helm.sh');
const base = { modelConfig: 'default-model-config', toolset: ['preset:read-only'] };

/**
 * Idempotency-Key across faults (issue 11, Why #5), against the real helm, API server and store
 * (SQLite, or PostgreSQL under npm run test:pg): the first answer survives a store failure between
 * helm and the record; refusals the environment caused are not replayed; a replay after delete says so.
 */
describe('idempotent writes across faults', () => {
  let cluster: TestCluster;
  let helm: HelmClient;

  beforeAll(() => {
    cluster = TestCluster.fromEnv();
    helm = new HelmClient({ bin: realHelm, kubeconfig: cluster.kubeconfig, timeoutSeconds: 60 });
  });

  describe('a store failure after helm applied a create, before it was recorded', () => {
    let db: FreshDatabase;
    let service: ServiceProcess | undefined;

    beforeAll(async () => {
      db = await freshDatabaseUrl();
    });

    afterAll(async () => {
      await service?.kill();
      await db?.drop();
    });

    it('answers 502 saying so; the retry with the same key gets 201 with the agent, helm ran once', async () => {
      const ns = await cluster.freshNamespace('blip');
      const name = 'blipped';
      service = await startServiceProcess({
        DATABASE_URL: db.url,
        KUBECONFIG: cluster.kubeconfig,
        HELM_BIN: slowHelm,
        SLOW_HELM_REAL: realHelm,
        SLOW_HELM_COMMANDS: 'install',
        SLOW_HELM_AFTER: '8',
        // Long enough that the lease's and the key's renewals, each held 5 s by the locked store, never queue up ahead of the record.
        LEASE_TTL_SECONDS: '60',
        // No reconcile pass reading the agents while the store is locked: the fault is for the record alone.
        RECONCILE_AUTOMATIC: 'false',
      });
      const key = { 'idempotency-key': 'blip-create-1' };
      const body = { ...base, name, namespace: ns };
      const first = call(service.url, 'POST', '/api/v1/agents', body, key);
      for (let i = 0; (await helm.status({ namespace: ns, name }))?.status !== 'deployed'; i++) {
        if (i > 300) throw new Error('helm never deployed the create');
        await sleep(100);
      }
      await storeBlip(db.url, async () => (await readFile(service!.log, 'utf8')).includes('recording operation'));
      const failed = await first;
      expect(failed.status).toBe(502);
      expect(failed.body.error.message).toContain('recording it in the store failed');
      expect(failed.body.error.message).toContain('a retry with the same idempotency key gets its answer');

      const retried = await call(service.url, 'POST', '/api/v1/agents', body, key);
      expect(retried.status).toBe(201);
      expect(retried.body.agent).toMatchObject({ namespace: ns, name, revision: 1, helmRevision: 1, lastOperation: { kind: 'create', state: 'succeeded' } });
      expect(retried.body.values).toMatchObject({ modelConfig: base.modelConfig, toolset: base.toolset });
      expect(retried.body.manifests).toContain('kind: Agent');
      const again = await call(service.url, 'POST', '/api/v1/agents', body, key);
      expect(again.status).toBe(201);
      expect(again.body).toEqual(retried.body);

      expect(await helm.history({ namespace: ns, name })).toHaveLength(1);
      const revisions = await call(service.url, 'GET', `/api/v1/agents/${ns}/${name}/revisions`);
      expect(revisions.body.items).toHaveLength(1);
      expect((await call(service.url, 'PATCH', `/api/v1/agents/${ns}/${name}`, { systemMessage: 'after the blip' })).status).toBe(200);
    });
  });

  describe('with the service in this process', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await startTestApp({ KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '60' });
    });

    afterAll(async () => {
      await t?.close();
    });

    it('does not replay a refusal the cluster caused: a create into a missing namespace runs again once it exists', async () => {
      const ns = `idem-later-${Date.now().toString(36)}`;
      const body = { ...base, name: 'waits-for-namespace', namespace: ns };
      const key = { 'idempotency-key': 'env-refusal-1' };
      const refused = await call(t.url, 'POST', '/api/v1/agents', body, key);
      expect(refused.status).toBe(400);
      expect(refused.body.error.details).toEqual([{ path: 'namespace', message: `namespace "${ns}" not found` }]);

      await cluster.createNamespace(ns);
      const created = await call(t.url, 'POST', '/api/v1/agents', body, key);
      expect(created.status).toBe(201);
      expect(created.body.agent).toMatchObject({ namespace: ns, name: 'waits-for-namespace', revision: 1 });
      const replayed = await call(t.url, 'POST', '/api/v1/agents', body, key);
      expect(replayed.status).toBe(201);
      expect(replayed.body).toEqual(created.body);
      expect(await helm.history({ namespace: ns, name: 'waits-for-namespace' })).toHaveLength(1);
    });

    it('says so when the agent a replayed answer describes was deleted since, and a new key creates it again', async () => {
      const ns = await cluster.freshNamespace('idem-deleted');
      const name = 'deleted-since';
      const body = { ...base, name, namespace: ns };
      const created = await call(t.url, 'POST', '/api/v1/agents', body, { 'idempotency-key': 'create-then-delete' });
      expect(created.status).toBe(201);
      const updated = await call(t.url, 'PATCH', `/api/v1/agents/${ns}/${name}`, { systemMessage: 'v2' }, { 'idempotency-key': 'update-then-delete' });
      expect(updated.status).toBe(200);
      const deleted = await call(t.url, 'DELETE', `/api/v1/agents/${ns}/${name}`, undefined, { 'x-actor': 'cleaner', 'idempotency-key': 'the-delete' });
      expect(deleted.status).toBe(200);

      const replay = await call(t.url, 'POST', '/api/v1/agents', body, { 'idempotency-key': 'create-then-delete' });
      expect(replay.status).toBe(409);
      expect(replay.body.error.code).toBe('conflict');
      expect(replay.body.error.message).toContain(`agent was deleted since`);
      expect(replay.body.error.message).toContain('by cleaner');
      expect(replay.body.error.message).toContain('send a new key');
      const updateReplay = await call(t.url, 'PATCH', `/api/v1/agents/${ns}/${name}`, { systemMessage: 'v2' }, { 'idempotency-key': 'update-then-delete' });
      expect(updateReplay.status).toBe(409);
      expect(updateReplay.body.error.message).toContain('deleted since');
      // The delete's own answer still stands.
      const deleteReplay = await call(t.url, 'DELETE', `/api/v1/agents/${ns}/${name}`, undefined, { 'x-actor': 'cleaner', 'idempotency-key': 'the-delete' });
      expect(deleteReplay.status).toBe(200);
      expect(deleteReplay.body).toEqual(deleted.body);

      const again = await call(t.url, 'POST', '/api/v1/agents', body, { 'idempotency-key': 'create-after-delete' });
      expect(again.status).toBe(201);
      expect(again.body.agent.id).not.toBe(created.body.agent.id);
    });
  });
});
