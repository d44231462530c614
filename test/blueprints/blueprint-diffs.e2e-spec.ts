import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call as rest, startTestApp, type TestApp } from '../support/test-app.js';
import { call, connect, text } from '../mcp/mcp-support.js';
import { HELPER } from './blueprints-support.js';

jest.setTimeout(60_000);

/**
 * Issue 28 item 1: what changed between two versions of a blueprint, on both doors
 * (GET /api/v1/blueprints/{name}/versions/diff, the blueprint-admin tool diff_blueprint_versions).
 */
describe('blueprint version diffs (REST and MCP)', () => {
  let t: TestApp;
  let admin: Client;
  const name = 'diffed_helper';
  const path = `/api/v1/blueprints/${name}/versions/diff`;

  beforeAll(async () => {
    t = await startTestApp();
    admin = await connect(t.url, '?toolsets=blueprint-admin');
    expect((await rest(t.url, 'POST', '/api/v1/blueprints', { ...HELPER, name })).status).toBe(201);
    const v2 = { ...HELPER, name: undefined, fixed: { ...HELPER.fixed, modelConfig: 'large-model-config' }, open: ['description', 'displayName', 'annotations'], note: 'v2' };
    expect((await rest(t.url, 'POST', `/api/v1/blueprints/${name}/versions`, v2)).status).toBe(201);
    const v3 = { ...HELPER, name: undefined, defaults: { namespace: 'platform' }, note: 'v3' };
    expect((await rest(t.url, 'POST', `/api/v1/blueprints/${name}/versions`, v3)).status).toBe(201);
  });

  afterAll(async () => {
    await admin?.close();
    await t?.close();
  });

  it('by default diffs the active version against the one before it, naming each argument that moved', async () => {
    const res = await rest(t.url, 'GET', path);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      name,
      from: 2,
      to: 3,
      activeVersion: 3,
      changed: true,
      fields: [
        { path: 'defaults.annotations', before: { 'example.com/team': 'sre' } },
        { path: 'defaults.namespace', before: 'agents', after: 'platform' },
        { path: 'fixed.modelConfig', before: 'large-model-config', after: 'secret-model-config' },
        { path: 'open', before: ['description', 'displayName', 'annotations'], after: ['displayName', 'annotations'] },
      ],
    });
  });

  it('diffs any two versions, the same over MCP, and nothing between a version and itself', async () => {
    const res = await rest(t.url, 'GET', `${path}?from=1&to=2`);
    expect(res.body.fields).toEqual([
      { path: 'fixed.modelConfig', before: 'secret-model-config', after: 'large-model-config' },
      { path: 'open', before: ['displayName', 'annotations'], after: ['description', 'displayName', 'annotations'] },
    ]);
    const tool = await call(admin, 'diff_blueprint_versions', { name, from: 1, to: 2 });
    expect(tool.isError).toBeFalsy();
    expect(tool.structuredContent).toEqual(res.body);
    const same = await rest(t.url, 'GET', `${path}?from=2&to=2`);
    expect(same.body).toMatchObject({ changed: false, fields: [] });
  });

  it('shows the first version whole (nothing before it)', async () => {
    const res = await rest(t.url, 'GET', `${path}?to=1`);
    expect(res.body.from).toBeNull();
    expect(res.body.fields.map((f: { path: string }) => f.path)).toEqual([
      'defaults.annotations', 'defaults.namespace', 'description', 'fixed.labels', 'fixed.modelConfig', 'fixed.systemMessage', 'fixed.toolset', 'open',
    ]);
    expect(res.body.fields.every((f: object) => !('before' in f))).toBe(true);
  });

  it('refuses a version that does not exist (404) or is no version (400), naming the field, on both doors', async () => {
    const missing = await rest(t.url, 'GET', `${path}?from=9`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.details).toEqual([{ path: 'from', message: 'version 9 does not exist (1 to 3)' }]);
    const bad = await rest(t.url, 'GET', `${path}?to=two`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toBe('to');
    const tool = await call(admin, 'diff_blueprint_versions', { name, to: 7 });
    expect(tool.isError).toBe(true);
    expect(text(tool)).toContain('to: blueprint diffed_helper has no version 7');
    expect((await rest(t.url, 'GET', '/api/v1/blueprints/never_was/versions/diff')).status).toBe(404);
  });
});
