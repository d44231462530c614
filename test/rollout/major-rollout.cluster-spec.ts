// npm test: also with helm 3 — the old Agent kept through an upgrade by helm.sh/resource-policy, and helm rollback re-adopting it, on each major
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { TestCluster } from '../support/cluster.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { call, freshDatabaseUrl, statusOnceSeen, type FreshDatabase } from '../support/test-app.js';

jest.setTimeout(600_000);

const MUSTER_URL = 'http://muster.muster.svc.cluster.local:8090/mcp';

/**
 * Issue 26: a rollout from chart 0.x (kagent v1alpha2 Agent) to chart 1.x (kagent v1alpha3
 * AgentTemplate and the agent's own RemoteMCPServer) is zero-gap: the old Agent keeps serving until
 * the new objects are Ready, and a failed gate leaves it serving. A watch on the API server sees every
 * event of both kinds and records any moment an agent had neither object serving.
 */
describe('a rollout to the next chart major', () => {
  let cluster: TestCluster;
  let db: FreshDatabase;
  let ns: string;
  let service: ServiceProcess;
  let kagent: { stop: () => Promise<void> };
  let watcher: GapWatcher;
  const chart1 = join(process.cwd(), 'charts', 'agent-v1');
  const spec = { modelConfig: 'default-model-config', toolset: ['preset:read-only', 'workflow:incident-triage'], systemMessage: 'You triage incidents.' };
  const names = ['m1', 'm2', 'm3', 'sick'];

  const rolloutUntil = async (id: string) => {
    for (const deadline = Date.now() + 300_000; ; await sleep(300)) {
      const res = await call(service.url, 'GET', `/api/v1/fleet/rollouts/${id}`);
      if (res.body.state !== 'running') return res.body;
      if (Date.now() > deadline) throw new Error(`rollout ${id} still running: ${JSON.stringify(res.body)}`);
    }
  };

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    ns = await cluster.freshNamespace('major');
    db = await freshDatabaseUrl();
    // The shared Muster server the 0.x Agents bind; 1.x copies its URL into each agent's own server.
    await cluster.objects.createNamespacedCustomObject({
      group: 'kagent.dev', version: 'v1alpha2', namespace: ns, plural: 'remotemcpservers',
      body: { apiVersion: 'kagent.dev/v1alpha2', kind: 'RemoteMCPServer', metadata: { name: 'muster' }, spec: { description: 'Muster', url: MUSTER_URL, protocol: 'STREAMABLE_HTTP' } },
    });
    // kagent: every object ready once observed, except the 1.x template of "sick".
    kagent = playKagent(cluster, ns, (name) => name !== 'sick');
    service = await startServiceProcess({ DATABASE_URL: db.url, KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '60', RECONCILE_AUTOMATIC: 'false' });
    for (const name of names) expect((await call(service.url, 'POST', '/api/v1/agents', { ...spec, namespace: ns, name })).status).toBe(201);
    for (const name of names) await until(async () => (await cluster.agent(ns, name))?.status?.observedGeneration === 1);
    watcher = await watchForGaps(cluster, ns, names);
  });

  afterAll(async () => {
    await watcher?.stop();
    await kagent?.stop();
    if (service && service.child.exitCode === null) await service.stop();
    await db?.drop();
  });

  it("answers a dry run with every field's move and the values 1.x takes, Muster's URL read from the shared server", async () => {
    const res = await call(service.url, 'POST', '/api/v1/fleet/rollouts', { chart: chart1, selector: { agents: [`${ns}/m1`] }, dryRun: true });
    expect(res.status).toBe(200);
    const [item] = res.body.plan.items;
    expect(item).toMatchObject({ action: 'upgrade', from: { version: '0.6.0' }, to: { name: 'agent', version: '1.0.0' }, notCarried: [] });
    expect(item.fields.map((f: any) => f.field)).toEqual(expect.arrayContaining(['modelConfig', 'toolset', 'systemMessage', 'description', 'labels', 'annotations']));
    expect(item.valuesAfter).toMatchObject({ modelConfig: spec.modelConfig, toolset: spec.toolset, systemMessage: spec.systemMessage, muster: { url: MUSTER_URL } });
    expect(item.manifestDiff).toMatch(/^-kind: Agent$/m);
    expect(item.manifestDiff).toMatch(/^\+kind: AgentTemplate$/m);
    expect(item.manifestDiff).toMatch(/^\+kind: RemoteMCPServer$/m);
  });

  it('moves agents to 1.x with no moment where neither object serves, then removes the old Agents', async () => {
    const res = await call(service.url, 'POST', '/api/v1/fleet/rollouts', { chart: chart1, selector: { agents: ['m1', 'm2', 'm3'].map((n) => `${ns}/${n}`) }, waves: [1, 2], gateTimeoutSeconds: 60 });
    expect(res.status).toBe(202);
    const done = await rolloutUntil(res.body.rollout.id);
    expect(done).toMatchObject({ state: 'succeeded', counts: { upgraded: 3 } });
    for (const name of ['m1', 'm2', 'm3']) {
      expect(await cluster.agent(ns, name)).toBeNull();
      const template = await get(cluster, ns, 'agenttemplates', 'v1alpha3', name);
      expect(template.spec).toMatchObject({ modelConfig: { name: spec.modelConfig }, systemPrompt: spec.systemMessage });
      const server = await get(cluster, ns, 'remotemcpservers', 'v1alpha3', `${name}-muster`);
      expect(server.spec).toMatchObject({ url: MUSTER_URL, headersFrom: [{ name: 'X-Muster-Toolset', value: spec.toolset.join(',') }] });
      const agent = (await call(service.url, 'GET', `/api/v1/agents/${ns}/${name}`)).body;
      expect(agent.chart).toEqual({ name: 'agent', version: '1.0.0' });
    }
    expect(watcher.gaps()).toEqual([]);
  });

  it('an update of a 1.x agent stays on its major and keeps its Muster server', async () => {
    const res = await call(service.url, 'PATCH', `/api/v1/agents/${ns}/m1`, { systemMessage: 'You triage incidents, briefly.' });
    expect(res.status).toBe(200);
    expect(res.body.agent.chart).toEqual({ name: 'agent', version: '1.0.0' });
    expect((await get(cluster, ns, 'agenttemplates', 'v1alpha3', 'm1')).spec.systemPrompt).toBe('You triage incidents, briefly.');
    expect((await get(cluster, ns, 'remotemcpservers', 'v1alpha3', 'm1-muster')).spec.url).toBe(MUSTER_URL);
    expect(await cluster.agent(ns, 'm1')).toBeNull();
    // Status reads the AgentTemplate its release applied: ready once kagent's harness says so, no drift.
    const status = await statusOnceSeen(service.url, `/api/v1/agents/${ns}/m1`, (body) => body.verdict === 'ready');
    expect(status.body).toMatchObject({ verdict: 'ready', drift: [], releaseStatus: 'deployed' });
  });

  it('diffs a moved agent: each revision rendered with the chart it used, and its live AgentTemplate after a hand edit (issue 28)', async () => {
    const diff = (query = '') => call(service.url, 'GET', `/api/v1/agents/${ns}/m1/revisions/diff${query}`);
    const move = await diff('?from=1&to=2');
    expect(move.status).toBe(200);
    expect(move.body.from.chart).toEqual({ name: 'agent', version: '0.6.0' });
    expect(move.body.to.chart).toEqual({ name: 'agent', version: '1.0.0' });
    expect(move.body.fields).toEqual([]);
    expect(move.body.manifestDiff).toMatch(/^-kind: Agent$/m);
    expect(move.body.manifestDiff).toMatch(/^\+kind: AgentTemplate$/m);

    const clean = await diff();
    expect(clean.body).toMatchObject({ from: { revision: 3, chart: { version: '1.0.0' } }, to: { source: 'live' }, changed: false, fields: [], manifestDiff: '' });
    const template = await get(cluster, ns, 'agenttemplates', 'v1alpha3', 'm1');
    template.spec.systemPrompt = 'hand-edited';
    await cluster.objects.replaceNamespacedCustomObject({ group: 'kagent.dev', version: 'v1alpha3', namespace: ns, plural: 'agenttemplates', name: 'm1', body: template });
    const drift = await diff();
    expect(drift.body.fields).toEqual([{ path: 'systemMessage', before: 'You triage incidents, briefly.', after: 'hand-edited' }]);
    expect(drift.body.manifestDiff).toMatch(/^\+\s+systemPrompt: hand-edited$/m);
    expect(drift.body.manifestDiff).toMatch(/^-\s+systemPrompt: You triage incidents, briefly\.$/m);
  });

  it('a failed gate rolls the agent back to 0.x: its old Agent served throughout and the 1.x objects are gone', async () => {
    const res = await call(service.url, 'POST', '/api/v1/fleet/rollouts', { chart: chart1, selector: { agents: [`${ns}/sick`] }, gateTimeoutSeconds: 30 });
    const done = await rolloutUntil(res.body.rollout.id);
    expect(done).toMatchObject({ state: 'failed', counts: { rolledBack: 1 } });
    expect(done.agents[0].reason).toMatch(/Ready is False/);
    const agent = await cluster.agent(ns, 'sick');
    expect(agent).not.toBeNull();
    expect(agent.metadata.annotations?.['helm.sh/resource-policy']).toBeUndefined();
    expect(await get(cluster, ns, 'agenttemplates', 'v1alpha3', 'sick')).toBeNull();
    expect(await get(cluster, ns, 'remotemcpservers', 'v1alpha3', 'sick-muster')).toBeNull();
    expect((await call(service.url, 'GET', `/api/v1/agents/${ns}/sick`)).body.chart).toEqual({ name: 'agent', version: '0.6.0' });
    expect(watcher.gaps()).toEqual([]);
  });
});

async function until(check: () => Promise<boolean>): Promise<void> {
  for (const deadline = Date.now() + 60_000; !(await check()); await sleep(200)) if (Date.now() > deadline) throw new Error('timed out');
}

async function get(cluster: TestCluster, namespace: string, plural: string, version: string, name: string): Promise<any | null> {
  try {
    return await cluster.objects.getNamespacedCustomObject({ group: 'kagent.dev', version, namespace, plural, name });
  } catch (error) {
    if ((error as { code?: number }).code === 404) return null;
    throw error;
  }
}

interface GapWatcher {
  gaps(): string[];
  stop(): Promise<void>;
}

/**
 * Watches Agents (v1alpha2) and AgentTemplates (v1alpha3) of the namespace on the API server and,
 * after every event, checks each agent: serving means its Agent exists with Ready true, or its
 * AgentTemplate exists with every harness Ready. A moment with neither is recorded as a gap.
 */
async function watchForGaps(cluster: TestCluster, namespace: string, names: string[]): Promise<GapWatcher> {
  const config = new KubeConfig();
  config.loadFromFile(cluster.kubeconfig);
  const watch = new Watch(config);
  const agents = new Map<string, any>();
  const templates = new Map<string, any>();
  const found: string[] = [];
  const ready = (conditions: any[] | undefined) => conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  const serving = (name: string) =>
    ready(agents.get(name)?.status?.conditions) || ((templates.get(name)?.status?.harnesses ?? []).length > 0 && templates.get(name).status.harnesses.every((h: any) => ready(h.conditions)));
  const check = (what: string) => {
    for (const name of names) if (!serving(name)) found.push(`${name} had neither object serving after ${what}`);
  };
  const requests = await Promise.all(
    [
      ['v1alpha2', 'agents', agents],
      ['v1alpha3', 'agenttemplates', templates],
    ].map(async ([version, plural, into]) => {
      const list = (await cluster.objects.listNamespacedCustomObject({ group: 'kagent.dev', version: version as string, namespace, plural: plural as string })) as { items: any[]; metadata: { resourceVersion: string } };
      for (const item of list.items) (into as Map<string, any>).set(item.metadata.name, item);
      return watch.watch(
        `/apis/kagent.dev/${version}/namespaces/${namespace}/${plural}`,
        { resourceVersion: list.metadata.resourceVersion },
        (type, object: any) => {
          if (type === 'DELETED') (into as Map<string, any>).delete(object.metadata.name);
          else (into as Map<string, any>).set(object.metadata.name, object);
          check(`${type} ${object.kind} ${object.metadata.name} (resourceVersion ${object.metadata.resourceVersion})`);
        },
        (error) => error && found.push(`the ${plural} watch ended: ${String(error)}`),
      );
    }),
  );
  check('the initial lists');
  return {
    gaps: () => [...found],
    stop: async () => {
      for (const request of requests) request.abort();
    },
  };
}

/**
 * Plays kagent for the namespace: each Agent (v1alpha2) gets Accepted and Ready once observed; each
 * AgentTemplate (v1alpha3) gets a harness reporting Ready, true when `healthy(name)`.
 */
function playKagent(cluster: TestCluster, namespace: string, healthy: (name: string) => boolean): { stop: () => Promise<void> } {
  let stopped = false;
  const condition = (type: string, ok: boolean) => ({ type, status: ok ? 'True' : 'False', reason: ok ? 'Ready' : 'DeploymentNotReady', message: ok ? 'ready' : 'the agent pod crashes', lastTransitionTime: new Date().toISOString() });
  const round = async (version: string, plural: string, status: (object: any) => object) => {
    const list = (await cluster.objects.listNamespacedCustomObject({ group: 'kagent.dev', version, namespace, plural }).catch(() => ({ items: [] }))) as { items: any[] };
    for (const object of list.items) {
      if (object.status?.observedGeneration === object.metadata.generation) continue;
      await cluster.objects
        .replaceNamespacedCustomObjectStatus({ group: 'kagent.dev', version, namespace, plural, name: object.metadata.name, body: { ...object, status: { observedGeneration: object.metadata.generation, ...status(object) } } })
        .catch(() => undefined); // changed meanwhile: seen again on the next round
    }
  };
  const loop = (async () => {
    while (!stopped) {
      await round('v1alpha2', 'agents', () => ({ conditions: [condition('Accepted', true), condition('Ready', true)] }));
      await round('v1alpha3', 'agenttemplates', (object) => ({ harnesses: [{ harness: 'kagent', desiredRevision: 'r1', conditions: [condition('Ready', healthy(object.metadata.name))] }] }));
      await sleep(200);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}
