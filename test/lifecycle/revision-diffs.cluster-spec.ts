// npm test: also on PostgreSQL — revisions of several lives and the journal's intents read together
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call as callTool, connect, text } from '../mcp/mcp-support.js';
import { TestCluster } from '../support/cluster.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';

// Sized for 2 cores shared with other builds: four writes and a dozen helm template runs.
jest.setTimeout(300_000);

/**
 * Issue 28 item 1: what changed between two revisions, across a delete and re-create (two lives),
 * and between the current revision and the live Agent after a hand edit (drift), on both doors
 * (GET …/revisions/diff and the MCP tool diff_agent_revisions). Real helm (template and the
 * writes), the real API server with the kagent CRDs.
 */
describe('revision diffs across lives and against the live Agent', () => {
  let t: TestApp;
  let cluster: TestCluster;
  let mcp: Client;
  let ns: string;
  let path: string;
  const name = 'diffed';
  const diff = (query = '') => call(t.url, 'GET', `${path}/revisions/diff${query}`);

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    t = await startTestApp({ KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '60', RECONCILE_AUTOMATIC: 'false' });
    ns = await cluster.freshNamespace('diffs');
    path = `/api/v1/agents/${ns}/${name}`;
    const first = { namespace: ns, name, modelConfig: 'default-model-config', toolset: ['preset:read-only'], systemMessage: 'first', labels: { team: 'sre' } };
    expect((await call(t.url, 'POST', '/api/v1/agents', first)).status).toBe(201);
    expect((await call(t.url, 'PATCH', path, { systemMessage: 'second', labels: { team: 'platform' } })).status).toBe(200);
    expect((await call(t.url, 'DELETE', path)).status).toBe(200);
    const again = { namespace: ns, name, modelConfig: 'm', toolset: ['preset:none'], description: 'again' };
    expect((await call(t.url, 'POST', '/api/v1/agents', again)).status).toBe(201);
    mcp = await connect(t.url, '?revisions');
  });

  afterAll(async () => {
    await mcp?.close();
    await t?.close();
  });

  it('diffs two revisions of one life: the fields and the rendered manifests', async () => {
    const res = await diff('?life=1&from=1&to=2');
    expect(res.status).toBe(200);
    expect(res.body.from).toMatchObject({ source: 'revision', life: 1, revision: 1, chart: { name: 'agent' } });
    expect(res.body.to).toMatchObject({ source: 'revision', life: 1, revision: 2 });
    expect(res.body.fields).toEqual([
      { path: 'labels.team', before: 'sre', after: 'platform' },
      { path: 'systemMessage', before: 'first', after: 'second' },
    ]);
    expect(res.body.changed).toBe(true);
    expect(res.body.manifestDiff).toContain(`--- ${ns}/${name} (life 1 revision 1)`);
    expect(res.body.manifestDiff).toMatch(/^-\s+systemMessage: "first"$/m);
    expect(res.body.manifestDiff).toMatch(/^\+\s+systemMessage: "second"$/m);
    expect(res.body.manifestDiff).toMatch(/^\+.*"team":"platform"/m);
  });

  it('diffs across the delete and re-create, and by default from the revision before (the last of the life before)', async () => {
    const res = await diff('?from=1:2&to=2:1');
    expect(res.status).toBe(200);
    expect(res.body.fields).toEqual([
      { path: 'description', after: 'again' },
      { path: 'labels.team', before: 'platform' },
      { path: 'modelConfig', before: 'default-model-config', after: 'm' },
      { path: 'systemMessage', before: 'second' },
      { path: 'toolset', before: ['preset:read-only'], after: ['preset:none'] },
    ]);
    expect(res.body.manifestDiff).toMatch(/^\+\s+modelConfig: "m"$/m);
    const byDefault = await diff('?to=1');
    expect(byDefault.body).toEqual(res.body);

    const tool = await callTool(mcp, 'diff_agent_revisions', { namespace: ns, name, from: '1:2', to: '2:1' });
    expect(tool.isError).toBeFalsy();
    expect(tool.structuredContent).toEqual(res.body);
  });

  it('against the live Agent: nothing after a write, the drift after a hand edit, on both doors', async () => {
    const clean = await diff();
    expect(clean.status).toBe(200);
    expect(clean.body).toMatchObject({ from: { life: 2, revision: 1 }, to: { source: 'live', life: 2, revision: null, chart: null }, changed: false, fields: [], manifestDiff: '' });
    expect(clean.body.to.spec).toEqual(clean.body.from.spec);

    await cluster.editAgent(ns, name, (agent) => {
      agent.spec.declarative.modelConfig = 'hand-edited';
      agent.metadata.labels.extra = 'by-hand';
    });
    const drift = await diff();
    expect(drift.body.changed).toBe(true);
    expect(drift.body.fields).toEqual([
      { path: 'labels.extra', after: 'by-hand' },
      { path: 'modelConfig', before: 'm', after: 'hand-edited' },
    ]);
    expect(drift.body.manifestDiff).toContain(`+++ ${ns}/${name} (live)`);
    expect(drift.body.manifestDiff).toMatch(/^-\s+modelConfig: m$/m);
    expect(drift.body.manifestDiff).toMatch(/^\+\s+modelConfig: hand-edited$/m);
    expect(drift.body.manifestDiff).toMatch(/^\+\s+extra: by-hand$/m);

    const tool = await callTool(mcp, 'diff_agent_revisions', { namespace: ns, name });
    expect(tool.isError).toBeFalsy();
    expect(tool.structuredContent).toEqual(drift.body);
    // An earlier life's revision against the live object: its fields and the hand edit together.
    const across = await diff('?from=1:1');
    expect(across.body.fields).toContainEqual({ path: 'modelConfig', before: 'default-model-config', after: 'hand-edited' });
  });

  it('refuses a revision that does not exist (404) or is no revision (400), naming the field, on both doors', async () => {
    const missing = await diff('?from=9');
    expect(missing.status).toBe(404);
    expect(missing.body.error.details).toEqual([{ path: 'from', message: 'revision 9 does not exist in life 2 (1 to 1)' }]);
    const noLife = await diff('?to=3:1');
    expect(noLife.status).toBe(404);
    expect(noLife.body.error.details).toEqual([{ path: 'to', message: 'life 3 does not exist (1 to 2)' }]);
    const bad = await diff('?from=first');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([{ path: 'from', message: 'from must be a revision number, e.g. 1, or <life>:<revision>, e.g. 1:2' }]);
    expect((await diff('?life=0')).status).toBe(400);
    const tool = await callTool(mcp, 'diff_agent_revisions', { namespace: ns, name, from: 5, to: 1 });
    expect(tool.isError).toBe(true);
    expect(text(tool)).toContain('revision 5 does not exist in life 2');
    expect((await call(t.url, 'GET', `/api/v1/agents/${ns}/never-was/revisions/diff`)).status).toBe(404);
  });
});
