// Not in the helm 3 pass: its moves and returns are `helm upgrade --install` within chart major 0
// (a return is an upgrade, not helm rollback), the flags agents-lifecycle.cluster-spec.ts runs on each
// major; the move across majors and the kept Agent are major-rollout.cluster-spec.ts's, on both.
// npm test: also on PostgreSQL — rollouts and their agents stored, and taken on by a restarted service from the store
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { TestCluster } from '../support/cluster.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { call, freshDatabaseUrl, type FreshDatabase } from '../support/test-app.js';
import { mcpClient } from '../support/mcp-client.js';

jest.setTimeout(600_000);

/**
 * Issue 26: a chart release rolled out to the fleet in health-gated waves, through the one write
 * pipeline. Real service processes, the real helm and API server; a test controller plays kagent,
 * reporting each Agent Accepted and Ready once it observed its generation, except one agent that
 * the new chart leaves unready.
 */
describe('fleet rollouts', () => {
  let cluster: TestCluster;
  let db: FreshDatabase;
  let ns: string;
  let service: ServiceProcess;
  let chart061: string;
  let controller: { stop: () => Promise<void> };
  const spec = { modelConfig: 'default-model-config', toolset: ['preset:read-only'] };
  const names = Array.from({ length: 12 }, (_, i) => `a${String(i + 1).padStart(2, '0')}`);
  /** In wave 2 (waves 1/5/6 over agents sorted by name): the new chart leaves it unready. */
  const unhealthy = 'a04';

  const start = (env: Record<string, string> = {}) =>
    startServiceProcess({ DATABASE_URL: db.url, KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '60', RECONCILE_AUTOMATIC: 'false', LEASE_TTL_SECONDS: '4', ...env });

  async function rolloutUntil(url: string, id: string, done: (body: any) => boolean): Promise<any> {
    for (const deadline = Date.now() + 300_000; ; await sleep(300)) {
      const res = await call(url, 'GET', `/api/v1/fleet/rollouts/${id}`);
      expect(res.status).toBe(200);
      if (done(res.body)) return res.body;
      if (Date.now() > deadline) throw new Error(`rollout ${id} never got there: ${JSON.stringify(res.body)}`);
    }
  }

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    ns = await cluster.freshNamespace('rollout');
    db = await freshDatabaseUrl();
    // The platform's next chart release, 0.6.1: one meta-tool fewer by default, so the Agent's spec
    // (and its generation) changes, and kagent has something new to observe.
    chart061 = join(mkdtempSync(join(tmpdir(), 'agent-chart-')), 'agent');
    cpSync(join(process.cwd(), 'charts', 'agent'), chart061, { recursive: true });
    const edit = (file: string, from: RegExp, to: string) => writeFileSync(join(chart061, file), readFileSync(join(chart061, file), 'utf8').replace(from, to));
    edit('Chart.yaml', /^version: .*$/m, 'version: 0.6.1');
    edit('values.yaml', /^ {4}- list_core_tools\n/m, '');
    controller = playKagent(cluster, ns, (agent) => !(agent.metadata.name === unhealthy && agent.metadata.labels?.['helm.sh/chart'] === 'agent-0.6.1'));
    service = await start();
    for (const name of names) expect((await call(service.url, 'POST', '/api/v1/agents', { ...spec, namespace: ns, name })).status).toBe(201);
  });

  afterAll(async () => {
    await controller?.stop();
    if (service && service.child.exitCode === null) await service.stop();
    await db?.drop();
  });

  it('answers a dry run per agent: its wave, chart from → to, its values, and the manifests diff; nothing moves', async () => {
    const res = await call(service.url, 'POST', '/api/v1/fleet/rollouts', { chart: chart061, selector: { namespaces: [ns] }, waves: [1, 5, 6], dryRun: true });
    expect(res.status).toBe(200);
    expect(res.body.plan.items.map((item: any) => [item.name, item.wave])).toEqual(names.map((name, i) => [name, i === 0 ? 0 : i <= 5 ? 1 : 2]));
    const first = res.body.plan.items[0];
    expect(first).toMatchObject({ action: 'upgrade', from: { name: 'agent', version: '0.6.0' }, to: { name: 'agent', version: '0.6.1' }, notCarried: [] });
    expect(first.valuesAfter).toEqual(first.valuesBefore);
    expect(first.manifestDiff).toMatch(/^-.*"helm.sh\/chart":"agent-0.6.0"/m);
    expect(first.manifestDiff).toMatch(/^\+.*"helm.sh\/chart":"agent-0.6.1"/m);
    expect(first.manifestDiff).toMatch(/^-.*list_core_tools/m);
    expect((await call(service.url, 'GET', `/api/v1/agents/${ns}/a01`)).body.chart.version).toBe('0.6.0');
  });

  it('moves waves 1/5/6, stops at the wave with an unhealthy agent, rolls that wave back, and reports every agent', async () => {
    const res = await call(service.url, 'POST', '/api/v1/fleet/rollouts', { chart: chart061, selector: { namespaces: [ns] }, waves: [1, 5, 6], gateTimeoutSeconds: 20 }, { 'x-actor': 'platform-team' });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/api/v1/fleet/rollouts/${res.body.rollout.id}`);
    const done = await rolloutUntil(service.url, res.body.rollout.id, (body) => body.state !== 'running');
    expect(done).toMatchObject({ state: 'failed', failures: 1, counts: { upgraded: 1, rolledBack: 5, skipped: 6, pending: 0, failed: 0 } });
    expect(done.message).toMatch(/wave 2 failed its gate/);
    const byName = Object.fromEntries(done.agents.map((agent: any) => [agent.name, agent]));
    expect(byName.a01).toMatchObject({ wave: 0, state: 'upgraded' });
    expect(byName[unhealthy].reason).toMatch(/Ready is False/);
    for (const name of ['a02', 'a03', 'a05', 'a06']) expect(byName[name]).toMatchObject({ wave: 1, state: 'rolledBack', reason: expect.stringMatching(/rolled back with wave 2/) });
    for (const name of names.slice(6)) expect(byName[name]).toMatchObject({ wave: 2, state: 'skipped', reason: expect.stringMatching(/^not moved: wave 2 failed its gate/) });

    // What the store, helm and the cluster hold agrees with the report.
    const chartOf = async (name: string) => (await call(service.url, 'GET', `/api/v1/agents/${ns}/${name}`)).body.chart.version;
    expect(await chartOf('a01')).toBe('0.6.1');
    for (const name of names.slice(1)) expect(await chartOf(name)).toBe('0.6.0');
    expect((await cluster.agent(ns, 'a03')).metadata.labels['helm.sh/chart']).toBe('agent-0.6.0');
    const journal = await call(service.url, 'GET', `/api/v1/operations?namespace=${ns}&name=a03`);
    // Its move and its return, each journaled as the rollout's operation and its starter's.
    expect(journal.body.items.slice(0, 3).map((op: any) => [op.operation, op.actor])).toEqual([
      ['start_fleet_rollout', 'platform-team'],
      ['start_fleet_rollout', 'platform-team'],
      ['create_agent', 'api'],
    ]);
  });

  it('a service killed mid-rollout: the restarted one takes the rollout on from what its agents recorded, moving each agent once', async () => {
    const res = await call(service.url, 'POST', '/api/v1/fleet/rollouts', { chart: chart061, selector: { agents: names.slice(6).map((name) => `${ns}/${name}`) }, waves: [1], gateTimeoutSeconds: 30 });
    expect(res.status).toBe(202);
    await rolloutUntil(service.url, res.body.rollout.id, (body) => body.counts.upgraded >= 2);
    await service.kill();
    service = await start();
    const done = await rolloutUntil(service.url, res.body.rollout.id, (body) => body.state !== 'running');
    expect(done).toMatchObject({ state: 'succeeded', counts: { upgraded: 6, pending: 0, failed: 0 } });
    for (const name of names.slice(6)) {
      const revisions = await call(service.url, 'GET', `/api/v1/agents/${ns}/${name}/revisions`);
      expect(revisions.body.items.map((r: any) => r.kind)).toEqual(['create', 'update']);
      expect((await call(service.url, 'GET', `/api/v1/agents/${ns}/${name}`)).body.chart.version).toBe('0.6.1');
    }
  });

  it('over MCP, with wait: true, tells each agent as it settles and answers the finished rollout', async () => {
    const client = mcpClient('rollout-test');
    await client.connect(new StreamableHTTPClientTransport(new URL(`${service.url}/mcp?toolsets=fleet`)));
    const told: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void told.push(String(n.params.data)));
    try {
      const result = await client.callTool({ name: 'start_fleet_rollout', arguments: { chart: chart061, selector: { agents: [`${ns}/a05`, `${ns}/a06`] }, waves: [1], wait: true } });
      expect(result.isError).toBeFalsy();
      const { rollout } = result.structuredContent as { rollout: any };
      expect(rollout).toMatchObject({ state: 'succeeded', counts: { upgraded: 2 } });
      expect(told).toEqual(expect.arrayContaining([`start_fleet_rollout: rollout ${rollout.id}: ${ns}/a05 upgraded (this can take a while)`, `start_fleet_rollout: rollout ${rollout.id}: ${ns}/a06 upgraded (this can take a while)`]));
      expect(told.some((line) => line.includes(`rollout ${rollout.id}: wave 2 of 2 moving`))).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('pauses, resumes and cancels on request, and refuses a step that does not apply', async () => {
    const res = await call(service.url, 'POST', '/api/v1/fleet/rollouts', { chart: chart061, selector: { agents: [`${ns}/a02`, `${ns}/a03`] }, waves: [1] });
    const id = res.body.rollout.id;
    expect((await call(service.url, 'POST', `/api/v1/fleet/rollouts/${id}/pause`, {})).status).toBe(200);
    const paused = await rolloutUntil(service.url, id, (body) => body.state === 'paused');
    expect(paused.message).toMatch(/^paused by /);
    expect((await call(service.url, 'POST', `/api/v1/fleet/rollouts/${id}/pause`, {})).status).toBe(409);
    expect((await call(service.url, 'POST', `/api/v1/fleet/rollouts/${id}/cancel`, {})).status).toBe(200);
    const cancelled = await rolloutUntil(service.url, id, (body) => body.state === 'cancelled');
    expect(cancelled.counts.pending).toBe(0);
    expect((await call(service.url, 'POST', `/api/v1/fleet/rollouts/${id}/resume`, {})).body.error).toMatchObject({ code: 'conflict' });
    const listed = await call(service.url, 'GET', '/api/v1/fleet/rollouts?state=cancelled');
    expect(listed.body.items.map((r: any) => r.id)).toContain(id);
  });
});

/**
 * Plays kagent's controller for one namespace: every Agent whose generation it has not observed
 * gets its status written, Accepted and Ready True when `healthy(agent)`, Ready False otherwise.
 */
function playKagent(cluster: TestCluster, namespace: string, healthy: (agent: any) => boolean): { stop: () => Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const list = (await cluster.objects.listNamespacedCustomObject({ group: 'kagent.dev', version: 'v1alpha2', namespace, plural: 'agents' }).catch(() => ({ items: [] }))) as { items: any[] };
      for (const agent of list.items) {
        if (agent.status?.observedGeneration === agent.metadata.generation) continue;
        const now = new Date().toISOString();
        const ready = healthy(agent);
        const conditions = [
          { type: 'Accepted', status: 'True', reason: 'Reconciled', message: 'accepted', lastTransitionTime: now },
          { type: 'Ready', status: ready ? 'True' : 'False', reason: ready ? 'DeploymentReady' : 'DeploymentNotReady', message: ready ? 'the agent is ready' : 'the agent pod crashes', lastTransitionTime: now },
        ];
        await cluster.objects
          .replaceNamespacedCustomObjectStatus({ group: 'kagent.dev', version: 'v1alpha2', namespace, plural: 'agents', name: agent.metadata.name, body: { ...agent, status: { observedGeneration: agent.metadata.generation, conditions } } })
          .catch(() => undefined); // changed meanwhile: seen again on the next round
      }
      await sleep(250);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}
