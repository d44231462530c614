// npm test: also on PostgreSQL — revision numbers as ETags and If-Match against the stored revision
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { seedAgent } from './mcp/mcp-support.js';
import { call, startTestApp, type TestApp } from './support/test-app.js';

const agent = { name: 'incident-helper', namespace: 'agents', modelConfig: 'default-model-config', toolset: ['preset:read-only'] };

/** One ETag: the agent's version on agent reads and writes, never Express's automatic weak ones. */
describe('ETag', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
    await seedAgent(t.app, 'agents', 'tagged', ['preset:none']);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
  });

  it('gives an agent read the version ETag, strong, as If-Match takes it', async () => {
    const res = await call(t.url, 'GET', '/api/v1/agents/agents/tagged');
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBe(`"${res.body.version}"`);
  });

  it('refuses a weak ETag in If-Match with 412 (If-Match compares strongly), before anything is written', async () => {
    const { version } = (await call(t.url, 'GET', '/api/v1/agents/agents/tagged')).body;
    const res = await call(t.url, 'PATCH', '/api/v1/agents/agents/tagged', { description: 'x' }, { 'if-match': `W/"${version}"` });
    expect(res.status).toBe(412);
    expect(res.body.error.message).toContain('weak ETag, which never matches');
    expect((await call(t.url, 'GET', '/api/v1/agents/agents/tagged')).body.version).toBe(version);
  });

  it('refuses a malformed If-Match by name on every write, a create too, though a create takes only Idempotency-Key', async () => {
    const message = 'If-Match must be the ETag of the agent, e.g. "3" (see the ETag header of GET)';
    const update = await call(t.url, 'PATCH', '/api/v1/agents/agents/tagged', { description: 'x' }, { 'if-match': 'version 3' });
    expect(update.status).toBe(400);
    expect(update.body.error.details).toEqual([{ path: 'If-Match', message }]);
    const create = await call(t.url, 'POST', '/api/v1/agents', { ...agent, dryRun: true }, { 'if-match': 'version 3' });
    expect(create.status).toBe(400);
    expect(create.body.error.details).toEqual([{ path: 'If-Match', message }]);
    // A well-formed one is read and left out of a create: there is no version to match yet.
    expect((await call(t.url, 'POST', '/api/v1/agents', { ...agent, dryRun: true }, { 'if-match': '"5"' })).status).toBe(200);
  });

  it.each<[string, string, string, unknown]>([
    ['a dry-run create', 'POST', '/api/v1/agents', { ...agent, dryRun: true }],
    ['a validation', 'POST', '/api/v1/agents/validate', agent],
    ['a refusal', 'POST', '/api/v1/agents', { ...agent, toolset: [] }],
    ['a 404', 'GET', '/api/v1/agents/agents/absent', undefined],
    ['a list', 'GET', '/api/v1/agents', undefined],
    ['service info', 'GET', '/api/v1/info', undefined],
    ['the OpenAPI document', 'GET', '/api/v1/openapi.json', undefined],
  ])('gives %s no ETag', async (_, method, path, body) => {
    const res = await call(t.url, method, path, body);
    expect(res.text.length).toBeGreaterThan(0);
    expect(res.headers.get('etag')).toBeNull();
  });
});
