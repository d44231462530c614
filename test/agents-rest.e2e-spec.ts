// npm test: also on PostgreSQL — REST over the store: a failed write journaled with no record left, values kept exactly, integers beyond the store's refused, idempotency keys per caller
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
    ['33 selectors', selectors(33), 'toolset[32]', /33 selectors exceed the cap of 32/],
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
    // 30,000 code points: what the chart's schema counts; class-validator's MaxLength counted 15,000 (it skips variation selectors).
    ['a systemMessage over 20,000 characters counted as the chart counts them', { ...valid, systemMessage: '\u2764\uFE0F'.repeat(15_000) }, 'systemMessage', /at most 20000 characters \(it has 30000\)/],
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

  it('answers a create sent with no body by naming every required field, as an empty object', async () => {
    const create = await call(t.url, 'POST', '/api/v1/agents');
    expect(create.status).toBe(400);
    expect(create.body.error.details.map((detail: { path: string }) => detail.path)).toEqual(['name', 'namespace', 'modelConfig', 'toolset']);
  });

  it('answers a write with no reachable cluster with 502 naming KUBECONFIG, journals it failed, and stores no agent', async () => {
    const res = await call(t.url, 'POST', '/api/v1/agents', { ...valid, name: 'no-cluster' }, { 'x-actor': 'ci-pipeline' });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('backend_error');
    expect(res.body.error.message).toMatch(/KUBECONFIG.*(unreachable|refused)|^helm .*failed: .*(unreachable|refused)/i);
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

  describe('input that could trip the parsers', () => {
    it('keeps label and annotation keys named like Object.prototype members, exactly as sent', async () => {
      const labels = { constructor: 'a', valueOf: 'b', toString: 'c', hasOwnProperty: 'd', team: 'sre' };
      const res = await call(t.url, 'POST', '/api/v1/agents', { ...valid, labels, annotations: { constructor: 'x' }, dryRun: true });
      expect(res.status).toBe(200);
      expect(res.body.values.labels).toEqual(labels);
      expect(res.body.values.annotations).toEqual({ constructor: 'x' });
      expect(renderedAgent(res.body.manifests).metadata.labels).toMatchObject(labels);
    });

    it.each([['constructor'], ['hasOwnProperty'], ['__proto__']])('refuses a top-level field named %s as unknown', async (field) => {
      const res = await call(t.url, 'POST', '/api/v1/agents', `{"name":"a","namespace":"agents","modelConfig":"m","toolset":["preset:none"],"dryRun":true,"${field}":{"x":1}}`);
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([expect.objectContaining({ path: field, message: expect.stringMatching(/^unknown field/) })]);
    });

    it('refuses nesting deeper than any field goes with 400 naming where, on create and validate', async () => {
      const deep = '['.repeat(5000) + ']'.repeat(5000);
      const res = await call(t.url, 'POST', '/api/v1/agents', `{"name":"a","namespace":"agents","modelConfig":"m","toolset":${deep}}`);
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([{ path: expect.stringMatching(/^toolset\[0\]/), message: expect.stringMatching(/^nested deeper than 8 levels/) }]);
      const checked = await call(t.url, 'POST', '/api/v1/agents/validate', `{"name":"a","namespace":"agents","modelConfig":"m","toolset":${deep}}`);
      expect(checked.status).toBe(400);
      expect(checked.body.error.details).toHaveLength(1);
    });

    it.each([
      ['description', { description: 'a\u007fb' }, 'U+007F'],
      ['systemMessage (NUL: PostgreSQL cannot store it)', { systemMessage: 'a\u0000b' }, 'U+0000'],
      ['systemMessage', { systemMessage: 'x\u0080' }, 'U+0080'],
      ['displayName', { displayName: 'next\u0085line' }, 'U+0085'],
      ['annotations.note', { labels: { team: 'a' }, annotations: { note: '\ud800' } }, 'U+D800'],
      ['toolset[1]', { toolset: ['preset:none', 'tool:a\uFFFE'] }, 'U+FFFE'],
    ])('refuses a character helm cannot carry in %s, naming the field (validate reports it too)', async (_, fields, code) => {
      const res = await call(t.url, 'POST', '/api/v1/agents', { ...valid, ...fields, dryRun: true });
      expect(res.status).toBe(400);
      expect(res.body.error.details.map((d: { message: string }) => d.message).join('\n')).toContain(code);
      const checked = await call(t.url, 'POST', '/api/v1/agents/validate', { ...valid, ...fields });
      expect(checked.status).toBe(200);
      expect(checked.body.valid).toBe(false);
    });

    it('keeps tabs, newlines, other C0 controls and every script in a system message, exactly', async () => {
      const systemMessage = 'Línea\tuno\r\nзвезда ✓ 🚀 \u00a0 \u2028 end\f\u001b[0m';
      const res = await call(t.url, 'POST', '/api/v1/agents', { ...valid, systemMessage, dryRun: true });
      expect(res.status).toBe(200);
      expect(renderedAgent(res.body.manifests).spec.declarative.systemMessage).toBe(systemMessage);
    });

    it('refuses labels the chart sets and annotations helm owns', async () => {
      const res = await call(t.url, 'POST', '/api/v1/agents', {
        ...valid,
        labels: { 'app.kubernetes.io/managed-by': 'me' },
        annotations: { 'meta.helm.sh/release-name': 'other', 'helm.sh/hook': 'pre-install', 'helm.sh/resource-policy': 'keep', 'agent-manager.giantswarm.io/display-name': 'x' },
        dryRun: true,
      });
      expect(res.status).toBe(400);
      const messages = res.body.error.details.map((d: { message: string }) => d.message).join('\n');
      for (const key of ['app.kubernetes.io/managed-by', 'meta.helm.sh/release-name', 'helm.sh/hook', 'helm.sh/resource-policy', 'agent-manager.giantswarm.io/display-name']) expect(messages).toContain(`"${key}"`);
    });

    it('refuses a revision or expected version beyond the store\'s integers with 400, not 500', async () => {
      const rollback = await call(t.url, 'POST', '/api/v1/agents/agents/ghost/rollback', `{"revision":1e19,"dryRun":true}`);
      expect(rollback.status).toBe(400);
      expect(rollback.body.error.details[0].path).toBe('revision');
      const update = await call(t.url, 'PATCH', '/api/v1/agents/agents/ghost', { systemMessage: 'x', expectedVersion: 2 ** 31 });
      expect(update.status).toBe(400);
      expect(update.body.error.details[0].path).toBe('expectedVersion');
    });

    it.each([
      ['POST', '/api/v1/agents', { ...valid, name: 'query-dry-run' }],
      ['PATCH', '/api/v1/agents/agents/query-dry-run', { systemMessage: 'x' }],
      ['POST', '/api/v1/agents/agents/query-dry-run/rollback', { revision: 1 }],
    ] as const)('refuses ?dryRun=true on %s %s instead of writing, and journals nothing', async (method, path, body) => {
      const res = await call(t.url, method, `${path}?dryRun=true`, body);
      expect(res.status).toBe(400);
      expect(res.body.error.details[0]).toMatchObject({ path: 'dryRun', message: expect.stringContaining('send it in the JSON body') });
      expect(await t.store.client.operation.count({ where: { name: 'query-dry-run' } })).toBe(0);
    });

    it.each(['application/json', 'application/x-www-form-urlencoded', 'text/plain'])('refuses a %s body on DELETE, whose arguments are read from the query', async (type) => {
      const res = await call(t.url, 'DELETE', '/api/v1/agents/agents/ghost', '{"dryRun":true}', { 'content-type': type });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0]).toMatchObject({ path: 'body', message: expect.stringContaining('?dryRun=true') });
    });

    it('records X-Actor as UTF-8 and refuses one that cannot name anyone', async () => {
      const actor = 'José ☃ pipeline';
      const res = await call(t.url, 'POST', '/api/v1/agents', { ...valid, name: 'actor-check' }, { 'x-actor': Buffer.from(actor, 'utf8').toString('latin1') });
      expect(res.status).toBe(502);
      const [operation] = await t.store.client.operation.findMany({ where: { name: 'actor-check' } });
      expect(operation.actor).toBe(actor);
      const unnamed = await call(t.url, 'POST', '/api/v1/agents', { ...valid, name: 'actor-empty' }, { 'x-actor': ' ' });
      expect(unnamed.status).toBe(502);
      expect((await t.store.client.operation.findFirstOrThrow({ where: { name: 'actor-empty' } })).actor).toBe('api');
      for (const bad of ['x'.repeat(254), 'a\tb']) {
        const refused = await call(t.url, 'POST', '/api/v1/agents', { ...valid, dryRun: true }, { 'x-actor': bad });
        expect(refused.status).toBe(400);
        expect(refused.body.error.details[0].path).toBe('X-Actor');
      }
    });
  });

  it('answers unknown routes with not_found in the error model', async () => {
    const res = await call(t.url, 'GET', '/api/v2/agents');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });

  it('scopes Idempotency-Key to the caller: another caller\'s same key neither collides nor replays the first answer', async () => {
    const key = { 'idempotency-key': 'shared-key-1' };
    const first = await call(t.url, 'PATCH', '/api/v1/agents/agents/nobody', { description: 'one' }, { ...key, 'x-actor': 'alice' });
    expect(first.status).toBe(404);
    const otherBody = await call(t.url, 'PATCH', '/api/v1/agents/agents/nobody', { description: 'two' }, { ...key, 'x-actor': 'alice' });
    expect(otherBody.status).toBe(409);
    expect(otherBody.body.error.message).toContain('"shared-key-1" was already used for a different request');
    const otherCaller = await call(t.url, 'PATCH', '/api/v1/agents/agents/nobody', { description: 'two' }, { ...key, 'x-actor': 'bob' });
    expect(otherCaller.status).toBe(404);
  });
});
