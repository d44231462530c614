// npm test: also with helm 3 — adoption reads each major's list, history and values output
// Not in the PostgreSQL pass: every store here is a SQLite file the suite names (the file removed while
// the service runs is the fault), so that pass ran SQLite again; rebuild and adopt on PostgreSQL are
// reconcile.int-spec.ts's, and `store rebuild` opening a PostgreSQL store is store-rebuild-cli.e2e-spec.ts's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Reconciler } from '@app/agents';
import { Caller } from '@app/common';
import { TestCluster } from '../support/cluster.js';
import { runCli } from '../support/cli-process.js';
import { ensureBuilt } from '../support/service-process.js';
import { call, startTestApp, unreachableKubeconfig, type TestApp } from '../support/test-app.js';

jest.setTimeout(240_000);

/**
 * The SQLite file removed while the service runs (issue 11, Why #4): readiness and writes say so,
 * and after a restart on an empty store, store rebuild takes every agent back with its history.
 */
// Rebuild adopts every release the cluster holds: a control plane of its own, not the one the other
// suites (running beside this one) keep creating and deleting releases on.
let cluster: TestCluster;
beforeAll(async () => {
  cluster = await TestCluster.ownControlPlane();
});
afterAll(async () => {
  await cluster?.stop();
});

describe('store lost while running, rebuilt from the cluster', () => {
  let dir: string;
  let ns: string;
  let t: TestApp | undefined;
  const name = 'rebuilt-agent';
  const create = { name, modelConfig: 'default-model-config', toolset: ['preset:read-only'], labels: { team: 'sre' } };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'store-rebuild-'));
    ns = await cluster.freshNamespace('rebuild');
  });

  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers /readyz 503 and refuses writes with 503 once the SQLite file was removed', async () => {
    const file = join(dir, 'first.db');
    t = await startTestApp({ KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '60', RECONCILE_AUTOMATIC: 'false', DATABASE_URL: `file:${file}` });
    expect((await call(t.url, 'POST', '/api/v1/agents', { ...create, namespace: ns })).status).toBe(201);
    expect((await call(t.url, 'PATCH', `/api/v1/agents/${ns}/${name}`, { toolset: ['preset:none'] })).status).toBe(200);
    expect((await call(t.url, 'GET', '/readyz')).status).toBe(200);

    rmSync(file);
    const ready = await call(t.url, 'GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.reason).toContain('was removed');
    const write = await call(t.url, 'POST', '/api/v1/agents', { ...create, name: 'after-loss', namespace: ns });
    expect(write.status).toBe(503);
    expect(write.body.error.code).toBe('unavailable');
    await t.close();
    t = undefined;
  });

  it('lists the unknown release for adoption, then store rebuild restores the agent with its two revisions', async () => {
    t = await startTestApp({ KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '60', RECONCILE_AUTOMATIC: 'false', DATABASE_URL: `file:${join(dir, 'second.db')}` });
    expect((await call(t.url, 'GET', `/api/v1/agents/${ns}/${name}`)).status).toBe(404);

    const dry = await call(t.url, 'POST', '/api/v1/reconcile', { namespace: ns, dryRun: true });
    expect(dry.body).toMatchObject({ dryRun: true });
    expect(dry.body.items).toEqual([expect.objectContaining({ namespace: ns, name, action: 'report', finding: 'unmanaged', done: false })]);

    const { adopted, skipped } = await t.app.get(Reconciler).rebuild(Caller.internal());
    // The control plane is the suite's own: what rebuild skips is this file's earlier releases.
    expect(skipped.filter((s) => s.release.startsWith(`${ns}/`))).toEqual([]);
    expect(adopted).toContain(`${ns}/${name}`);

    const agent = await call(t.url, 'GET', `/api/v1/agents/${ns}/${name}`);
    expect(agent.status).toBe(200);
    expect(agent.body).toMatchObject({ revision: 2, helmRevision: 2, toolset: ['preset:none'], spec: { labels: { team: 'sre' } } });
    const revisions = await call(t.url, 'GET', `/api/v1/agents/${ns}/${name}/revisions`);
    expect(revisions.body.items.map((r: { revision: number; helmRevision: number; spec: { toolset: string[] } }) => [r.revision, r.helmRevision, r.spec.toolset])).toEqual([
      [1, 1, ['preset:read-only']],
      [2, 2, ['preset:none']],
    ]);

    const again = await call(t.url, 'POST', '/api/v1/reconcile', { namespace: ns, name });
    expect(again.body.items).toEqual([expect.objectContaining({ action: 'none' })]);
    const update = await call(t.url, 'PATCH', `/api/v1/agents/${ns}/${name}`, { toolset: ['preset:read-only'] });
    expect(update.status).toBe(200);
    expect(update.body.agent).toMatchObject({ revision: 3, helmRevision: 3 });
  });
});

/**
 * The documented recovery after losing the store, as an operator runs it: `agent-manager store
 * rebuild` on the default store (SQLite). It used to adopt nothing, print nothing and exit 0.
 */
describe('agent-manager store rebuild (the command) on SQLite', () => {
  let dir: string;
  let ns: string;
  let t: TestApp | undefined;

  beforeAll(async () => {
    await ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'store-rebuild-cli-'));
    ns = await cluster.freshNamespace('rebuild-cli');
  });

  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('adopts every agent with its history after the store file was deleted, and says what it did', async () => {
    const file = join(dir, 'store.db');
    const env = { KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '60', RECONCILE_AUTOMATIC: 'false', DATABASE_URL: `file:${file}` };
    t = await startTestApp(env);
    for (const name of ['first', 'second']) {
      const created = await call(t.url, 'POST', '/api/v1/agents', { name, namespace: ns, modelConfig: 'default-model-config', toolset: ['preset:read-only'] });
      expect(created.status).toBe(201);
    }
    expect((await call(t.url, 'PATCH', `/api/v1/agents/${ns}/second`, { toolset: ['preset:none'] })).status).toBe(200);
    await t.close();
    t = undefined;
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });

    const run = await runCli(['store', 'rebuild'], env);
    expect(run.stdout).toContain(`adopted ${ns}/first\n`);
    expect(run.stdout).toContain(`adopted ${ns}/second\n`);
    expect(run.stdout).toMatch(/^store rebuild: \d+ adopted, \d+ skipped$/m);
    // The control plane is the suite's own: what rebuild skips is this file's earlier releases.
    expect(run.stderr).not.toContain(`skipped ${ns}/`);
    expect(run.code).toBe(/^skipped /m.test(run.stderr) ? 1 : 0);

    t = await startTestApp(env);
    expect((await call(t.url, 'GET', `/api/v1/agents/${ns}/first`)).body).toMatchObject({ revision: 1, toolset: ['preset:read-only'] });
    const revisions = await call(t.url, 'GET', `/api/v1/agents/${ns}/second/revisions`);
    expect(revisions.body.items.map((r: { revision: number; spec: { toolset: string[] } }) => [r.revision, r.spec.toolset])).toEqual([
      [1, ['preset:read-only']],
      [2, ['preset:none']],
    ]);
  });

  it('exits non-zero, having adopted nothing, when the cluster cannot be reached', async () => {
    const run = await runCli(['store', 'rebuild'], { KUBECONFIG: unreachableKubeconfig(dir), DATABASE_URL: `file:${join(dir, 'other.db')}` });
    expect(run.stderr).toMatch(/^agent-manager store rebuild: nothing adopted: the cluster is unreachable/m);
    expect(run.stdout).not.toContain('adopted ');
    expect(run.code).toBe(1);
  });
});
