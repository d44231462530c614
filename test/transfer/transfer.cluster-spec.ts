// npm test: also on PostgreSQL — a whole fleet written into an empty store through the write runner, versions and origins recorded, prunes marking agents deleted
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { parse } from 'yaml';
import { TestCluster } from '../support/cluster.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';
import { edited, exportText, importYaml, lines, seedAgent } from './transfer-support.js';

jest.setTimeout(300_000);

const BLUEPRINT = {
  name: 'transfer_helper',
  description: 'Creates a helper for a team.',
  fixed: { modelConfig: 'default-model-config', toolset: ['preset:read-only'] },
  open: ['systemMessage', 'labels'],
  defaults: {},
};

/**
 * Import applied for real (the real helm and kube-apiserver): a fleet exported from one store is
 * written into an empty one (a fresh store, the same cluster) and exports to the same bytes; an
 * edit of 3 of 10 agents updates exactly those 3; a conflicting item is reported and not applied;
 * prune removes only the selection's agents. Steps build on each other.
 */
describe('agents as code: import applied through the write pipeline', () => {
  let source: TestApp;
  let target: TestApp;
  let cluster: TestCluster;
  let ns: string;
  let other: string;
  let exported: string;

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    ns = await cluster.freshNamespace('transfer');
    other = await cluster.freshNamespace('transfer-other');
    const env = { KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '60', RECONCILE_AUTOMATIC: 'false' };
    // The source: a store that knows the fleet (recorded as creates record it; its releases are not
    // needed to export). The target: an empty store on the same cluster, where the import installs them.
    source = await startTestApp(env);
    target = await startTestApp(env);
    expect((await call(source.url, 'POST', '/api/v1/blueprints', BLUEPRINT)).status).toBe(201);
    for (let i = 0; i < 10; i += 1) {
      const origin = i < 2 ? { blueprint: BLUEPRINT.name, version: 1 } : undefined;
      await seedAgent(source.app, ns, `agent-${i}`, { labels: { team: 'a' }, description: `agent number ${i}`, ...(i === 3 && { systemMessage: 'line one\nline two\n' }) }, origin);
    }
    await seedAgent(source.app, other, 'outside', { labels: { team: 'a' } });
  });

  afterAll(async () => {
    await source?.close();
    await target?.close();
  });

  it('reproduces every agent and blueprint in an empty store, which then exports the same bytes', async () => {
    exported = (await exportText(source.url)).text;
    const res = await importYaml(target.url, exported);
    expect(res.status).toBe(200);
    expect(res.body.summary).toEqual({ created: 12 });
    for (const item of res.body.items.filter((i: { kind: string }) => i.kind === 'agent')) expect(item.operationId).toEqual(expect.any(String));
    expect((await exportText(target.url)).text).toBe(exported);
    const live = await cluster.agent(ns, 'agent-3');
    expect(live.spec.declarative.systemMessage).toBe('line one\nline two\n');
    const agent = await call(target.url, 'GET', `/api/v1/agents/${ns}/agent-0`);
    expect(agent.body).toMatchObject({ version: 1, revision: 1, blueprint: { blueprint: BLUEPRINT.name, version: 1 }, createdBy: 'api' });
    // The journal names each create as the caller's, through the one write runner.
    const journal = await call(target.url, 'GET', `/api/v1/operations?namespace=${ns}&operation=create_agent`);
    expect(journal.body.items).toHaveLength(10);
  });

  it('changes nothing when the same document is imported again', async () => {
    const again = await importYaml(target.url, exported);
    expect(again.body.summary).toEqual({ unchanged: 12 });
    expect((await exportText(target.url)).text).toBe(exported);
  });

  it('plans and applies exactly the 3 agents an edit changed', async () => {
    const yaml = edited(exported, (doc) => {
      for (const name of ['agent-2', 'agent-5', 'agent-8']) doc.agents.find((a: { name: string }) => a.name === name).spec.toolset = ['preset:none'];
    });
    const plan = await importYaml(target.url, yaml, '?dryRun=true');
    expect(lines(plan.body).filter((line) => !line.endsWith('unchanged → unchanged'))).toEqual([
      `agent ${ns}/agent-2: update → planned`,
      `agent ${ns}/agent-5: update → planned`,
      `agent ${ns}/agent-8: update → planned`,
    ]);
    const applied = await importYaml(target.url, yaml);
    expect(applied.body.summary).toEqual({ unchanged: 9, updated: 3 });
    const agent5 = applied.body.items.find((i: { name: string }) => i.name === 'agent-5');
    expect(agent5).toMatchObject({ action: 'update', result: 'updated', version: 2, changes: [{ path: 'toolset', before: ['preset:read-only'], after: ['preset:none'] }] });
    expect((await call(target.url, 'GET', `/api/v1/agents/${ns}/agent-5`)).body).toMatchObject({ version: 2, revision: 2, spec: { toolset: ['preset:none'] } });
    expect((await cluster.agent(ns, 'agent-5')).metadata.generation).toBeGreaterThan(1);
    expect((await importYaml(target.url, yaml)).body.summary).toEqual({ unchanged: 12 });
  });

  it('reports an agent changed since the export as a conflict and leaves it as it is', async () => {
    const patched = await call(target.url, 'PATCH', `/api/v1/agents/${ns}/agent-4`, { description: 'changed by hand' });
    expect(patched.status).toBe(200);
    const yaml = edited(exported, (doc) => {
      doc.agents.find((a: { name: string }) => a.name === 'agent-4').spec.description = 'changed in git';
      doc.agents.find((a: { name: string }) => a.name === 'agent-6').spec.description = 'also changed in git';
    });
    const res = await importYaml(target.url, yaml);
    const byName = Object.fromEntries(res.body.items.map((i: { name: string; result: string }) => [i.name, i.result]));
    expect(byName['agent-4']).toBe('conflict');
    expect(byName['agent-6']).toBe('updated');
    expect((await call(target.url, 'GET', `/api/v1/agents/${ns}/agent-4`)).body.spec.description).toBe('changed by hand');
  });

  it("prunes only the selection's agents the document no longer lists", async () => {
    const current = (await exportText(target.url, `?namespace=${ns}&label=team=a`)).text;
    const yaml = edited(current, (doc) => {
      doc.agents = doc.agents.filter((a: { name: string }) => a.name !== 'agent-7' && a.name !== 'agent-9');
      doc.prune = true;
    });
    const res = await importYaml(target.url, yaml);
    expect(lines(res.body).filter((line) => line.includes('prune'))).toEqual([`agent ${ns}/agent-7: prune → pruned`, `agent ${ns}/agent-9: prune → pruned`]);
    expect(res.body.summary).toEqual({ unchanged: 9, pruned: 2 });
    expect((await call(target.url, 'GET', `/api/v1/agents/${ns}/agent-7`)).status).toBe(404);
    expect(await cluster.agent(ns, 'agent-7')).toBeNull();
    expect((await call(target.url, 'GET', `/api/v1/agents/${other}/outside`)).status).toBe(200);
    const left = parse((await exportText(target.url)).text).agents.map((a: { name: string }) => a.name);
    expect(left).toHaveLength(9);
  });

  it('creates pruned agents again when the first document is imported again: a new write, not an answer kept from the first', async () => {
    const res = await importYaml(target.url, exported);
    const results = Object.fromEntries(res.body.items.filter((i: { kind: string }) => i.kind === 'agent').map((i: { name: string; result: string }) => [i.name, i.result]));
    // Changed since that export: the 3 updated, the one patched by hand and the one updated after it.
    expect(['agent-2', 'agent-4', 'agent-5', 'agent-6', 'agent-8'].map((name) => results[name])).toEqual(Array(5).fill('conflict'));
    expect([results['agent-7'], results['agent-9']]).toEqual(['created', 'created']);
    expect(await cluster.agent(ns, 'agent-7')).not.toBeNull();
    const revisions = await call(target.url, 'GET', `/api/v1/agents/${ns}/agent-7/revisions?life=all`);
    expect(revisions.body.lives.map((l: { state: string }) => l.state)).toEqual(['deleted', 'active']);
  });
});
