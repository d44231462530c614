import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import { TOOLNAMES_REMOVED_MESSAGE } from '@app/toolset';
import { call, startTestApp, type TestApp } from './support/test-app.js';

const valid = { name: 'incident-helper', namespace: 'agents', modelConfig: 'default-model-config', toolset: ['preset:read-only', 'workflow:incident-triage'] };
const selectors = (n: number) => Array.from({ length: n }, (_, i) => `tool:t${i}`);

function renderedAgent(manifests: string): any {
  return parseAllDocuments(manifests)
    .map((d) => d.toJSON())
    .find((o) => o?.kind === 'Agent');
}

describe('REST API (no cluster reachable)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  it('answers health and readiness', async () => {
    expect((await call(t.url, 'GET', '/healthz')).status).toBe(200);
    const ready = await call(t.url, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.store).toBe(t.provider);
  });

  it('serves Swagger UI at /docs and the committed OpenAPI document at /api/v1/openapi.json', async () => {
    const docs = await call(t.url, 'GET', '/docs');
    expect(docs.status).toBe(200);
    expect(docs.text).toContain('swagger-ui');
    const served = await call(t.url, 'GET', '/api/v1/openapi.json');
    expect(served.status).toBe(200);
    const committed = JSON.parse(readFileSync(new URL('../openapi/agent-manager.json', import.meta.url), 'utf8'));
    expect(served.body).toEqual(committed);
    expect(Object.keys(served.body.paths)).toEqual(
      expect.arrayContaining(['/api/v1/agents', '/api/v1/agents/{namespace}/{name}', '/api/v1/agents/{namespace}/{name}/rollback', '/api/v1/info']),
    );
  });

  it('reports helm, chart, store, limits and presets in info', async () => {
    const info = await call(t.url, 'GET', '/api/v1/info');
    expect(info.status).toBe(200);
    expect(info.body.helm.version).toMatch(/^v[34]\./);
    expect(info.body.store).toBe(t.provider);
    expect(info.body.toolsetLimits.maxSelectors).toBe(32);
    expect(info.body.chart.valuesSchemaDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(info.body.presets.map((p: { name: string }) => p.name)).toEqual(['read-only', 'none', 'full', 'infrastructure', 'agent-platform']);
  });

  it('answers a dry-run create with the rendered Agent carrying X-Muster-Toolset exactly as given', async () => {
    const toolset = ['preset:read-only', 'tool:überwachung', 'server:github', 'server:github'];
    const res = await call(t.url, 'POST', '/api/v1/agents', { ...valid, toolset, dryRun: true, systemMessage: 'Be "careful"\nand brief.' });
    expect(res.status).toBe(200);
    expect(res.body.dryRun).toBe(true);
    expect(res.body.values.toolset).toEqual(toolset);
    const agent = renderedAgent(res.body.manifests);
    expect(agent.apiVersion).toBe('kagent.dev/v1alpha2');
    expect(agent.metadata).toMatchObject({ name: 'incident-helper', namespace: 'agents' });
    expect(agent.spec.declarative.systemMessage).toBe('Be "careful"\nand brief.');
    expect(agent.spec.declarative.tools[0].headersFrom).toEqual([{ name: 'X-Muster-Toolset', value: toolset.join(',') }]);
    const list = await call(t.url, 'GET', '/api/v1/agents');
    expect(list.body.items).toEqual([]);
  });

  it('renders no Muster tool entry for the chat-only toolset', async () => {
    const res = await call(t.url, 'POST', '/api/v1/agents', { ...valid, toolset: ['preset:none'], dryRun: true });
    expect(res.status).toBe(200);
    expect(renderedAgent(res.body.manifests).spec.declarative.tools ?? []).toEqual([]);
  });

  it.each([
    ['an empty list', [], 'toolset[]', /preset:none/],
    ['33 selectors', selectors(33), 'toolset', /33 selectors exceed the cap of 32/],
    ['a comma inside a selector', ['tool:a,b'], 'toolset[0]', /"tool:a,b" at index 0 holds 2 selectors/],
    ['a server with no name', ['server:'], 'toolset[0]', /"server:" at index 0 names no server/],
    ['the reserved prefix', ['toolset:mine'], 'toolset[0]', /reserved prefix "toolset:"/],
    ['a label selector', ['label:team=sre'], 'toolset[0]', /only inside presets/],
    ['a wrong-case prefix', ['Preset:read-only'], 'toolset[0]', /did you mean "preset:read-only"/],
    ['whitespace', ['preset: read-only'], 'toolset[0]', /whitespace/],
    ['a plural prefix', ['tools:kubectl'], 'toolset[0]', /did you mean "tool:kubectl"/],
    ['a string instead of a list', 'preset:read-only', 'toolset', /list/],
    ['null', null, 'toolset', /required/],
  ])('refuses %s with 400 naming the toolset and the selector', async (_case, toolset, path, message) => {
    const res = await call(t.url, 'POST', '/api/v1/agents', { ...valid, toolset });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    const detail = res.body.error.details.find((d: { path: string }) => d.path === path || (path === 'toolset[]' && d.path.startsWith('toolset')));
    expect(detail).toBeDefined();
    expect(detail.message).toMatch(/^toolset |toolset is required|toolset/);
    expect(detail.message).toMatch(message);
  });

  it('reports every toolset violation at once, each with its index', async () => {
    const res = await call(t.url, 'POST', '/api/v1/agents', { ...valid, toolset: ['preset:read-only', 'Tool:x', 'label:a=b', 'server:'] });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toEqual(['toolset[1]', 'toolset[2]', 'toolset[3]']);
    for (const d of res.body.error.details) expect(d.message).toContain('toolset ["preset:read-only","Tool:x","label:a=b","server:"]');
  });

  it('accepts 32 selectors', async () => {
    const res = await call(t.url, 'POST', '/api/v1/agents', { ...valid, toolset: selectors(32), dryRun: true });
    expect(res.status).toBe(200);
  });

  it.each([
    ['top level', { toolNames: ['list_tools'] }],
    ['top level, null', { toolNames: null }],
    ['top level, empty', { toolNames: [] }],
    ['under muster', { muster: { toolNames: ['call_tool'] } }],
  ])('refuses toolNames (%s) with the exact migration text', async (_case, extra) => {
    const res = await call(t.url, 'POST', '/api/v1/agents', { ...valid, ...extra });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(TOOLNAMES_REMOVED_MESSAGE);
    expect(res.body.error.details[0].message).toBe(TOOLNAMES_REMOVED_MESSAGE);
  });

  it.each([
    ['an unknown field', { ...valid, replicas: 3 }, 'replicas', /unknown field "replicas"/],
    ['a name that is not DNS-1123', { ...valid, name: 'Incident_Helper' }, 'name', /DNS-1123/],
    ['a name over 53 characters', { ...valid, name: 'a'.repeat(54) }, 'name', /at most 53/],
    ['a bad namespace', { ...valid, namespace: '-agents' }, 'namespace', /DNS-1123/],
    ['a systemMessage over 20,000 characters', { ...valid, systemMessage: 'x'.repeat(20_001) }, 'systemMessage', /at most 20000/],
    ['a missing modelConfig', { name: 'a', namespace: 'b', toolset: ['preset:none'] }, 'modelConfig', /^modelConfig is required$/],
    ['labels that are not strings', { ...valid, labels: { team: 3 } }, 'labels', /value of "team" must be a string/],
    ['a label key Kubernetes refuses', { ...valid, labels: { 'bad key!': 'x' } }, 'labels', /key "bad key!" must be at most 63/],
    ['a label value Kubernetes refuses', { ...valid, labels: { team: 'has space' } }, 'labels', /value of "team" must be at most 63/],
    ['an annotation key with a bad prefix', { ...valid, annotations: { 'Example.COM/x': 'y' } }, 'annotations', /prefix that is not a DNS subdomain/],
    ['dryRun that is not a boolean', { ...valid, dryRun: 'yes' }, 'dryRun', /boolean/],
  ])('refuses %s by name', async (_case, body, path, message) => {
    const res = await call(t.url, 'POST', '/api/v1/agents', body);
    expect(res.status).toBe(400);
    const detail = res.body.error.details.find((d: { path: string }) => d.path === path);
    expect(detail?.message).toMatch(message);
  });

  it('accepts a systemMessage of exactly 20,000 characters', async () => {
    const res = await call(t.url, 'POST', '/api/v1/agents', { ...valid, systemMessage: 'x'.repeat(20_000), dryRun: true });
    expect(res.status).toBe(200);
  });

  it('answers unreadable JSON and a non-object body with 400 in the error model', async () => {
    const broken = await call(t.url, 'POST', '/api/v1/agents', '{"name": ');
    expect(broken.status).toBe(400);
    expect(broken.body.error.code).toBe('invalid_request');
    const list = await call(t.url, 'POST', '/api/v1/agents', [1, 2]);
    expect(list.status).toBe(400);
    expect(list.body.error.code).toBe('invalid_request');
  });

  it('answers a write with no reachable cluster with 502 and helm\'s message, journals it failed, and stores no agent', async () => {
    const res = await call(t.url, 'POST', '/api/v1/agents', { ...valid, name: 'no-cluster' }, { 'x-actor': 'ci-pipeline' });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('backend_error');
    expect(res.body.error.message).toMatch(/^helm .*failed: .*(unreachable|refused)/i);
    expect((await call(t.url, 'GET', '/api/v1/agents/agents/no-cluster')).status).toBe(404);
    expect((await call(t.url, 'GET', '/api/v1/agents?status=all')).body.items).toEqual([]);
    const operations = await t.store.client.operation.findMany({ where: { name: 'no-cluster' } });
    expect(operations).toHaveLength(1);
    expect(operations[0]).toMatchObject({ kind: 'create', state: 'failed', errorCode: 'backend_error', actor: 'ci-pipeline' });
    expect(operations[0].errorMessage).toBe(res.body.error.message);
  });

  it('answers not_found for agents that do not exist, on every agent route', async () => {
    for (const [method, path, body] of [
      ['GET', '/api/v1/agents/agents/ghost', undefined],
      ['PATCH', '/api/v1/agents/agents/ghost', { systemMessage: 'x' }],
      ['DELETE', '/api/v1/agents/agents/ghost', undefined],
      ['GET', '/api/v1/agents/agents/ghost/status', undefined],
      ['GET', '/api/v1/agents/agents/ghost/revisions', undefined],
      ['POST', '/api/v1/agents/agents/ghost/rollback', { revision: 1 }],
    ] as const) {
      const res = await call(t.url, method, path, body);
      expect([method, path, res.status, res.body.error.code]).toEqual([method, path, 404, 'not_found']);
    }
  });

  it('refuses a bad path segment before looking anything up', async () => {
    const res = await call(t.url, 'GET', '/api/v1/agents/Bad_NS/x');
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].path).toBe('namespace');
  });

  it('validates without writing: every violation, or valid with the manifests', async () => {
    const bad = await call(t.url, 'POST', '/api/v1/agents/validate', { name: 'v', namespace: 'agents', toolset: ['Preset:x', 'tool:a,b'], toolNames: [] });
    expect(bad.status).toBe(200);
    expect(bad.body.valid).toBe(false);
    expect(bad.body.manifests).toBeNull();
    expect(bad.body.violations.map((v: { path: string }) => v.path).sort()).toEqual(['modelConfig', 'toolNames', 'toolset[0]', 'toolset[1]']);
    const good = await call(t.url, 'POST', '/api/v1/agents/validate', { ...valid, toolset: ['preset:read_only'] });
    expect(good.status).toBe(200);
    expect(good.body).toMatchObject({ valid: true, violations: [] });
    expect(good.body.warnings[0].message).toMatch(/did you mean "preset:read-only"/);
    expect(renderedAgent(good.body.manifests).spec.declarative.tools[0].headersFrom[0].value).toBe('preset:read_only');
    const update = await call(t.url, 'POST', '/api/v1/agents/validate', { mode: 'update', name: 'ghost', namespace: 'agents', systemMessage: 'x' });
    expect(update.body.valid).toBe(false);
    expect(update.body.violations[0].message).toMatch(/does not exist/);
    const unreadable = await call(t.url, 'POST', '/api/v1/agents/validate', '"just a string"');
    expect(unreadable.status).toBe(400);
  });

  it('refuses bad list parameters by name', async () => {
    const res = await call(t.url, 'GET', '/api/v1/agents?limit=0&status=gone&cursor=zzz');
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(['limit', 'status']);
    const cursor = await call(t.url, 'GET', '/api/v1/agents?cursor=zzz');
    expect(cursor.status).toBe(400);
    expect(cursor.body.error.details[0].path).toBe('cursor');
  });

  it('answers unknown routes with not_found in the error model', async () => {
    const res = await call(t.url, 'GET', '/api/v2/agents');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });
});
