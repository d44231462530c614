// npm test: also on PostgreSQL — the reconciler lease contended and handed over by replicas sharing one store
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { TestCluster } from '../support/cluster.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { call, freshDatabaseUrl, type FreshDatabase } from '../support/test-app.js';

jest.setTimeout(300_000);

/**
 * Issue 30: one reconciler per cluster, driven by watches. Replicas on one store elect one
 * reconciler; it finds a hand edit of a live Agent from its watch (nobody asks for a pass, and no
 * resync is due), leaves alone an agent another replica writes, hands over when it stops, and a
 * SIGTERM stops a full resync between agents. Real service processes, helm and API server.
 */
describe('the elected reconciler', () => {
  let cluster: TestCluster;
  let db: FreshDatabase;
  let ns: string;
  const started: ServiceProcess[] = [];
  const spec = { modelConfig: 'default-model-config', toolset: ['preset:read-only'] };

  const logOf = (p: ServiceProcess) => readFileSync(p.log, 'utf8');
  async function start(replica: string, env: Record<string, string> = {}): Promise<ServiceProcess> {
    const p = await startServiceProcess({
      DATABASE_URL: db.url, KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '60', REPLICA_ID: replica,
      RECONCILE_AUTOMATIC: 'true', LEASE_TTL_SECONDS: '3', RECONCILE_RESYNC_SECONDS: '3600', ...env,
      // The control plane is shared with the other suites: their releases are not this store's agents.
      WATCH_NAMESPACES: ns,
    });
    started.push(p);
    return p;
  }
  /** Waits until the process's log matches (a minute at most: then the test fails naming what it waited for). */
  async function until(p: ServiceProcess, pattern: RegExp): Promise<void> {
    for (const deadline = Date.now() + 60_000; !pattern.test(logOf(p)); await sleep(200)) {
      if (Date.now() > deadline) throw new Error(`the log of ${p.url} never matched ${pattern}:\n${logOf(p).slice(-3000)}`);
    }
  }
  const create = async (p: ServiceProcess, name: string) => expect((await call(p.url, 'POST', '/api/v1/agents', { ...spec, namespace: ns, name })).status).toBe(201);
  // A field the chart sets (a field it does not set is the API server's or kagent's, not drift).
  const editByHand = (name: string) => cluster.editAgent(ns, name, (agent) => (agent.spec.declarative.modelConfig = `hand-edited-${Date.now()}`));
  const found = (name: string) => new RegExp(`reconciler found ${ns}/${name} drift`);

  let a: ServiceProcess;
  let b: ServiceProcess;

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    ns = await cluster.freshNamespace('elected');
    db = await freshDatabaseUrl();
    a = await start('replica-a');
    await until(a, /this replica is the reconciler \(reconciler@replica-a\)/);
    b = await start('replica-b');
    for (const name of ['edited', 'written', 'marker', 'later']) await create(a, name);
  });

  afterAll(async () => {
    for (const p of started) if (p.child.exitCode === null && p.child.signalCode === null) await p.kill();
    await db?.drop();
  });

  it('finds a hand edit of a live Agent from its watch, with no pass asked for; the replica that only watches says nothing', async () => {
    await editByHand('edited');
    await until(a, found('edited'));
    expect(logOf(b)).not.toMatch(found('edited'));
    expect(logOf(b)).not.toMatch(/this replica is the reconciler/);
  });

  it('leaves alone an agent another replica writes: no finding, no reconcile action', async () => {
    for (const description of ['v2', 'v3', 'v4']) {
      expect((await call(b.url, 'PATCH', `/api/v1/agents/${ns}/written`, { description })).status).toBe(200);
    }
    // The reconciler decides changed agents in the order their changes arrived: once the marker's edit is found, the writes were decided.
    await editByHand('marker');
    await until(a, found('marker'));
    expect(logOf(a)).not.toMatch(new RegExp(`(reconciler found|reconciled) ${ns}/written`));
    const journal = await call(a.url, 'GET', `/api/v1/operations?namespace=${ns}&operation=reconcile_agents`);
    expect(journal.status).toBe(200);
    expect(journal.body.items).toEqual([]);
  });

  it('hands the reconciler over when its replica stops, and the next one finds what changes', async () => {
    expect(await a.stop()).toBe(0);
    await until(b, /this replica is the reconciler \(reconciler@replica-b\)/);
    await editByHand('later');
    await until(b, found('later'));
  });

  it('stops a full resync between two agents on SIGTERM and exits cleanly', async () => {
    expect(await b.stop()).toBe(0);
    // One decision a second: the resync at start lasts longer than it takes to stop the replica.
    const c = await start('replica-c', { RECONCILE_RATE: '1' });
    await until(c, /full resync started/);
    expect(await c.stop()).toBe(0);
    expect(logOf(c)).toMatch(/full resync interrupted after \d+ agent/);
  });
});
