import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { HelmClient, resolveHelmBinary } from '@app/helm';
import { Store } from '@app/store';
import { TestCluster } from '../support/cluster.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { call, freshDatabaseUrl, startTestApp, type FreshDatabase, type TestApp } from '../support/test-app.js';

jest.setTimeout(240_000);

const LEASE_TTL_SECONDS = 4;
const realHelm = resolve(process.env.HELM_BIN ?? resolveHelmBinary());
const slowHelm = resolve('test/support/slow-helm.sh');

/**
 * Several service processes on one store (PostgreSQL under npm run test:pg, else one SQLite
 * file), the real helm and the real API server: nothing lost, nothing doubled.
 */
describe('writers across replicas, crashes and retries', () => {
  let db: FreshDatabase;
  let cluster: TestCluster;
  let helm: HelmClient;
  let ns: string;
  const procs: ServiceProcess[] = [];
  const apps: TestApp[] = [];
  const base = { modelConfig: 'default-model-config', toolset: ['preset:read-only'] };
  const settings = (env: Record<string, string> = {}) => ({
    DATABASE_URL: db.url,
    KUBECONFIG: cluster.kubeconfig,
    HELM_BIN: realHelm,
    LEASE_TTL_SECONDS: String(LEASE_TTL_SECONDS),
    // These cases are the writers' own decisions and the remedies a person applies; an automatic
    // reconcile pass would race them (it frees a stuck release by itself once the lease expired).
    RECONCILE_AUTOMATIC: 'false',
    ...env,
  });

  const start = async (env: Record<string, string> = {}) => {
    const proc = await startServiceProcess(settings(env));
    procs.push(proc);
    return proc;
  };
  /** A replica in this process, on a clock the test moves: a dead replica's lease expires on it without waiting. */
  const startHere = async () => {
    const t = await startTestApp(settings());
    apps.push(t);
    return t;
  };
  const slow = (before: number, after: number) => ({ HELM_BIN: slowHelm, SLOW_HELM_REAL: realHelm, SLOW_HELM_BEFORE: String(before), SLOW_HELM_AFTER: String(after) });
  const until = async <T>(what: string, probe: () => Promise<T | undefined | false>, tries = 200): Promise<T> => {
    for (let i = 0; i < tries; i++) {
      const value = await probe();
      if (value) return value;
      await sleep(100);
    }
    throw new Error(`timed out waiting for ${what}`);
  };

  beforeAll(async () => {
    db = await freshDatabaseUrl();
    cluster = TestCluster.fromEnv();
    helm = new HelmClient({ bin: realHelm, kubeconfig: cluster.kubeconfig, timeoutSeconds: 60 });
    ns = await cluster.freshNamespace('writers');
  });

  // A replica whose clock was moved ends with its test: ahead of the others, it would take their leases early.
  afterEach(async () => {
    for (const t of apps.splice(0)) await t.close();
  });

  afterAll(async () => {
    for (const proc of procs) if (proc.child.exitCode === null && proc.child.signalCode === null) await proc.kill();
    await db?.drop();
  });

  it('applies 20 concurrent updates through two replicas each as its own revision, or refuses them', async () => {
    const [a, b] = [await start(), await start()];
    const name = 'contended';
    const path = `/api/v1/agents/${ns}/${name}`;
    expect((await call(a.url, 'POST', '/api/v1/agents', { ...base, name, namespace: ns })).status).toBe(201);

    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call(i % 2 ? b.url : a.url, 'PATCH', path, { systemMessage: `message ${i}` }, { 'if-match': '"1"' })),
    );
    const statuses = answers.map((r) => r.status);
    for (const status of statuses) expect([200, 409, 412]).toContain(status);
    const applied = answers.filter((r) => r.status === 200);
    expect(applied.length).toBeGreaterThanOrEqual(1);
    for (const refused of answers.filter((r) => r.status === 409)) expect(refused.body.error.message).toMatch(/write in progress \(operation [0-9a-f-]+/);
    for (const stale of answers.filter((r) => r.status === 412)) expect(stale.body.error.message).toMatch(/is at version \d+, not 1/);

    // Without If-Match, last writer wins; each applied write is still its own revision.
    const unconditional = await Promise.all(Array.from({ length: 6 }, (_, i) => call(i % 2 ? a.url : b.url, 'PATCH', path, { systemMessage: `free ${i}` })));
    const appliedAll = [...applied, ...unconditional.filter((r) => r.status === 200)];
    for (const r of unconditional) expect([200, 409]).toContain(r.status);

    const revisions = (await call(a.url, 'GET', `${path}/revisions`)).body.items;
    expect(revisions.map((r: { revision: number }) => r.revision)).toEqual(Array.from({ length: revisions.length }, (_, i) => i + 1));
    expect(revisions).toHaveLength(1 + appliedAll.length);
    expect(new Set(appliedAll.map((r) => r.body.agent.revision)).size).toBe(appliedAll.length);
    expect(await helm.history({ namespace: ns, name })).toHaveLength(revisions.length);

    const last = revisions.at(-1);
    const live = await cluster.agent(ns, name);
    expect(live.spec.declarative.systemMessage).toBe(last.spec.systemMessage);
    expect(await helm.getValues({ namespace: ns, name })).toEqual(last.values);
  });

  it('runs helm once for the same Idempotency-Key sent 5 times at once, and refuses the key for another body', async () => {
    const [a, b] = [procs[0], procs[1]];
    const name = 'retried';
    const path = `/api/v1/agents/${ns}/${name}`;
    expect((await call(a.url, 'POST', '/api/v1/agents', { ...base, name, namespace: ns })).status).toBe(201);
    const body = { systemMessage: 'sent five times' };
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => call(i % 2 ? b.url : a.url, 'PATCH', path, body, { 'idempotency-key': 'retry-1' })));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    for (const r of answers) expect(r.body).toEqual(answers[0].body);
    expect(await helm.history({ namespace: ns, name })).toHaveLength(2);
    expect((await call(a.url, 'GET', `${path}/revisions`)).body.items).toHaveLength(2);

    const reused = await call(b.url, 'PATCH', path, { systemMessage: 'another body' }, { 'idempotency-key': 'retry-1' });
    expect(reused.status).toBe(409);
    expect(reused.body.error.message).toMatch(/already used for a different request/);
  });

  it('answers a retry after success with the first answer, even when the write could not be repeated', async () => {
    const [a, b] = [procs[0], procs[1]];
    const name = 'retried-after-success';
    const path = `/api/v1/agents/${ns}/${name}`;
    const create = { ...base, name, namespace: ns };
    const first = await call(a.url, 'POST', '/api/v1/agents', create, { 'idempotency-key': 'create-1' });
    const again = await call(b.url, 'POST', '/api/v1/agents', create, { 'idempotency-key': 'create-1' });
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.body).toEqual(first.body);

    const patch = await call(a.url, 'PATCH', path, { systemMessage: 'once' }, { 'idempotency-key': 'patch-1', 'if-match': '"1"' });
    const patchAgain = await call(b.url, 'PATCH', path, { systemMessage: 'once' }, { 'idempotency-key': 'patch-1', 'if-match': '"1"' });
    expect([patch.status, patchAgain.status]).toEqual([200, 200]);
    expect(patchAgain.body).toEqual(patch.body);

    const removed = await call(a.url, 'DELETE', path, undefined, { 'idempotency-key': 'delete-1' });
    const removedAgain = await call(b.url, 'DELETE', path, undefined, { 'idempotency-key': 'delete-1' });
    expect([removed.status, removedAgain.status]).toEqual([200, 200]);
    expect(removedAgain.body).toEqual(removed.body);
    expect(await helm.status({ namespace: ns, name })).toBeNull();
  });

  it('records a change that landed when the replica was killed before recording it', async () => {
    const name = 'landed';
    const path = `/api/v1/agents/${ns}/${name}`;
    expect((await call(procs[0].url, 'POST', '/api/v1/agents', { ...base, name, namespace: ns })).status).toBe(201);
    const doomed = await start(slow(0, 30));
    const write = call(doomed.url, 'PATCH', path, { systemMessage: 'landed, then the replica died' }).catch(() => null);
    await until('helm to apply revision 2', async () => (await helm.history({ namespace: ns, name })).length === 2);
    await doomed.kill();
    await write;

    const pending = (await call(procs[0].url, 'GET', path)).body.lastOperation;
    expect(pending).toMatchObject({ kind: 'update', state: 'pending' });
    const restarted = await start();
    const agent = await until('the pending update to be resolved', async () => {
      const body = (await call(restarted.url, 'GET', path)).body;
      return body.lastOperation.state !== 'pending' && body;
    });
    expect(agent).toMatchObject({ revision: 2, spec: { systemMessage: 'landed, then the replica died' }, lastOperation: { state: 'succeeded', id: pending.id } });
    expect(await helm.getValues({ namespace: ns, name })).toEqual(agent.values);
    expect((await call(restarted.url, 'PATCH', path, { systemMessage: 'next write' })).status).toBe(200);
  });

  it('marks a change that never reached helm failed, and hands the dead replica\'s lease over only after it expired', async () => {
    const name = 'interrupted';
    const path = `/api/v1/agents/${ns}/${name}`;
    const survivor = await startHere();
    expect((await call(survivor.url, 'POST', '/api/v1/agents', { ...base, name, namespace: ns })).status).toBe(201);
    // Its lease would outlast the test in real time: only the survivor's clock moving past it lets the write through.
    const doomed = await start({ ...slow(60, 0), LEASE_TTL_SECONDS: '600' });
    const write = call(doomed.url, 'PATCH', path, { systemMessage: 'never applied' }).catch(() => null);
    const pending = await until('the update to be journaled', async () => {
      const op = (await call(survivor.url, 'GET', path)).body.lastOperation;
      return op.state === 'pending' && op;
    });
    await doomed.kill();
    await write;

    const store = await Store.open(db.url);
    try {
      const lease = await store.client.agentLease.findUniqueOrThrow({ where: { key: `${ns}/${name}` } });
      expect(lease.operationId).toBe(pending.id);
      // The write waits in line for the dead replica's lease and takes it over only once it expired.
      const sent = call(survivor.url, 'PATCH', path, { systemMessage: 'queued behind the dead one' });
      expect(await Promise.race([sent.then(() => 'answered'), sleep(1500, 'waiting')])).toBe('waiting');
      expect((await call(survivor.url, 'GET', path)).body.lastOperation.id).toBe(pending.id);
      survivor.clock.advance(lease.expiresAt.getTime() - Date.now() + 1000);
      const queued = await sent;
      expect(queued.status).toBe(200);
      expect(queued.body.agent.revision).toBe(2);
    } finally {
      await store.client.$disconnect();
    }
    const later = await call(survivor.url, 'PATCH', path, { systemMessage: 'after the takeover' });
    expect(later.status).toBe(200);
    expect(later.body.agent.revision).toBe(3);
    const ops = (await call(survivor.url, 'GET', `/api/v1/agents/${ns}/${name}`)).body;
    expect(ops.spec.systemMessage).toBe('after the takeover');
    expect(await helm.history({ namespace: ns, name })).toHaveLength(3);
    const dead = await until('the dead operation to be closed', async () => {
      const s = await Store.open(db.url);
      try {
        const op = await s.client.operation.findUnique({ where: { id: pending.id } });
        return op && op.state !== 'pending' ? op : undefined;
      } finally {
        await s.client.$disconnect();
      }
    });
    expect(dead).toMatchObject({ state: 'failed', errorCode: 'backend_error' });
    expect(dead.errorMessage).toMatch(/interrupted/);
  });

  it('names a release left pending by a helm run that died, frees it with a rollback asked to, and writes again', async () => {
    const name = 'stuck';
    const path = `/api/v1/agents/${ns}/${name}`;
    // In this process, on a clock the test moves: the dead replica's lease expires on it without waiting it out.
    const survivor = await startHere();
    expect((await call(survivor.url, 'POST', '/api/v1/agents', { ...base, name, namespace: ns })).status).toBe(201);
    // A write of ours is journaled; its replica will die before its helm runs.
    const doomed = await start(slow(60, 0));
    const write = call(doomed.url, 'PATCH', path, { systemMessage: 'never applied' }).catch(() => null);
    await until('the update to be journaled', async () => (await call(survivor.url, 'GET', path)).body.lastOperation.state === 'pending');
    // Meanwhile someone else's helm run holds the release pending and is killed: helm leaves it pending-upgrade.
    // (A Deployment never becomes ready here: the control plane has no controller-manager.)
    const chart = await mkdtemp(join(tmpdir(), 'am-never-ready-'));
    await mkdir(join(chart, 'templates'));
    await writeFile(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: never-ready\nversion: 0.1.0\n');
    await writeFile(
      join(chart, 'templates', 'deployment.yaml'),
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: never-ready\nspec:\n  selector:\n    matchLabels: {app: never-ready}\n  template:\n    metadata:\n      labels: {app: never-ready}\n    spec:\n      containers: [{name: c, image: never-pulled.invalid/none:1}]\n',
    );
    const env = { KUBECONFIG: cluster.kubeconfig };
    const external = execa(realHelm, ['upgrade', name, chart, '--namespace', ns, '--wait', '--timeout', '180s'], { env, reject: false });
    // Killed while it waits for the Deployment, its apply done (the Agent removed): killed mid-apply instead, helm 3
    // leaves the Agent in the cluster but not in the pending revision, and its own rollback refuses that ("no Agent
    // with the name found"), which is another case than the one this test is about.
    await until(
      'the release to be pending-upgrade, its apply done',
      async () => (await helm.status({ namespace: ns, name }))?.status === 'pending-upgrade' && (await cluster.agent(ns, name)) === null,
    );
    external.kill('SIGKILL');
    await external;
    await doomed.kill();
    await write;

    survivor.clock.advance(LEASE_TTL_SECONDS * 1000 + 300); // the dead replica's lease has expired
    const refused = await call(survivor.url, 'PATCH', path, { systemMessage: 'while stuck' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain('helm reports the release pending-upgrade');
    expect(refused.body.error.message).toContain('"freeStuckRelease": true');
    expect(refused.body.error.message).toContain(`helm rollback ${name} --namespace ${ns}`);
    const stuck = (await call(survivor.url, 'GET', path)).body;
    expect(stuck).toMatchObject({ revision: 1, lastOperation: { state: 'pending' } });
    const rollbackPath = `${path}/rollback`;
    expect((await call(survivor.url, 'POST', rollbackPath, { revision: 1 })).status).toBe(409);

    // The remedy the message names, through agent-manager: a rollback told to free the release.
    const freed = await call(survivor.url, 'POST', rollbackPath, { revision: 1, freeStuckRelease: true }, { 'x-actor': 'oncall' });
    expect(freed.status).toBe(200);
    expect(freed.body.agent).toMatchObject({ revision: 2, lastOperation: { kind: 'rollback', state: 'succeeded' } });
    expect((await helm.status({ namespace: ns, name }))?.status).toBe('deployed');
    expect((await cluster.agent(ns, name)).spec.declarative.modelConfig).toBe(base.modelConfig);
    const store = await Store.open(db.url);
    try {
      const closed = await store.client.operation.findUniqueOrThrow({ where: { id: stuck.lastOperation.id } });
      expect(closed).toMatchObject({ state: 'failed', errorCode: 'backend_error' });
      expect(closed.errorMessage).toContain(`rollback operation ${freed.body.agent.lastOperation.id} freed it`);
    } finally {
      await store.client.$disconnect();
    }
    const later = await call(survivor.url, 'PATCH', path, { systemMessage: 'after the rollback' });
    expect(later.status).toBe(200);
    expect(later.body.agent).toMatchObject({ revision: 3, spec: { systemMessage: 'after the rollback' } });
    expect((await cluster.agent(ns, name)).spec.declarative.systemMessage).toBe('after the rollback');
    expect(await helm.getValues({ namespace: ns, name })).toEqual(later.body.agent.values);
  });

  it('on SIGTERM goes unready, lets the running write finish, then exits', async () => {
    const name = 'draining';
    const path = `/api/v1/agents/${ns}/${name}`;
    expect((await call(procs[0].url, 'POST', '/api/v1/agents', { ...base, name, namespace: ns })).status).toBe(201);
    const leaving = await start(slow(4, 0));
    const write = call(leaving.url, 'PATCH', path, { systemMessage: 'finished during shutdown' });
    await until('the update to be journaled', async () => (await call(procs[0].url, 'GET', path)).body.lastOperation.state === 'pending');
    const exit = leaving.stop();
    await until('readiness to go false', async () => (await call(leaving.url, 'GET', '/readyz').catch(() => ({ status: 0 }))).status === 503);
    const refused = await call(leaving.url, 'PATCH', path, { systemMessage: 'too late' });
    expect(refused.status).toBe(503);
    expect((await write).status).toBe(200);
    expect(await exit).toBe(0);
    expect((await call(procs[0].url, 'GET', path)).body).toMatchObject({ revision: 2, spec: { systemMessage: 'finished during shutdown' } });
  });
});
