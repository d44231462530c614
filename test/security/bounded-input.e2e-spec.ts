import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256Hex } from '@app/auth';
import { call, startTestApp, type TestApp } from '../support/test-app.js';
import { bearer, connectAs } from '../auth/auth-support.js';

const EDITOR = 'am_editor_1f2e3d4c5b6a79880f1e2d3c4b5a6978';
const NOBODY = 'am_nobody_8a7b6c5d4e3f20190a8b7c6d5e4f3a21';

/** token:editor may validate and create in team-a; token:nobody authenticates and is granted nothing. */
const POLICY = `
roles:
  editor: [get_info, list_server_toolsets, list_agents, validate_agent, create_agent]
bindings:
  - role: editor
    subjects: ["token:editor"]
    namespaces: ["team-a"]
`;

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** A toolset of `count` invalid items: ~4 bytes each on the wire, each a violation if read. */
const hugeToolset = (count: number) => Array.from({ length: count }, () => 'x');

let t: TestApp;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bounded-input-'));
  const tokens = join(dir, 'tokens.yaml');
  writeFileSync(tokens, `- name: editor\n  sha256: ${sha256Hex(EDITOR)}\n- name: nobody\n  sha256: ${sha256Hex(NOBODY)}\n`);
  const policy = join(dir, 'policy.yaml');
  writeFileSync(policy, POLICY);
  t = await startTestApp({ API_TOKENS_FILE: tokens, AUTHZ_POLICY_FILE: policy, MCP_ALLOWED_HOSTS: '127.0.0.1,localhost' });
}, 120_000);

afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a caller granted the operation nowhere is refused before its body is read', () => {
  it('REST: an oversized toolset from a principal with no grant answers 403, not a list of violations', async () => {
    const body = { name: 'big', namespace: 'team-a', modelConfig: 'm', toolset: hugeToolset(100_000) };
    const refused = await call(t.url, 'POST', '/api/v1/agents', body, bearer(NOBODY));
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('forbidden');
    expect(refused.body.error.message).toMatch(/^create_agent in any namespace is not granted to token:nobody: an admin grants it/);
    expect(refused.body.error.details).toEqual([]);
  });

  it('REST: the body is not even parsed (malformed JSON from a principal with no grant answers 403, not 400)', async () => {
    for (const path of ['/api/v1/agents', '/api/v1/agents/validate']) {
      const refused = await call(t.url, 'POST', path, '{"toolset": [', bearer(NOBODY));
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('forbidden');
    }
  });

  it('REST: approve_change and start_fleet_rollout refuse a larger-than-allowed body from a principal with no grant 403, as create_agent does, not 413', async () => {
    const padding = 'x'.repeat(2 * 1024 * 1024); // twice BODY_LIMIT_BYTES: read, it would be refused 413
    for (const [path, operation] of [
      ['/api/v1/changes/chg-1/approve', 'approve_change'],
      ['/api/v1/fleet/rollouts', 'start_fleet_rollout'],
      ['/api/v1/agents', 'create_agent'],
    ]) {
      const refused = await call(t.url, 'POST', path, { note: padding }, bearer(NOBODY));
      expect({ path, status: refused.status, code: refused.body?.error?.code }).toEqual({ path, status: 403, code: 'forbidden' });
      expect(refused.body.error.message).toMatch(new RegExp(`^${operation} in any namespace is not granted to token:nobody: an admin grants it`));
    }
  });

  it('REST: every route with a body in the OpenAPI document refuses malformed JSON from a principal with no grant 403, naming its operation', async () => {
    const document = JSON.parse(readFileSync(join(process.cwd(), 'openapi/agent-manager.json'), 'utf8')) as { paths: Record<string, Record<string, { operationId: string }>> };
    const routes = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([method]) => ['post', 'put', 'patch'].includes(method))
        .map(([method, { operationId }]) => ({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, 'x'), operation: operationId.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) })),
    );
    expect(routes.length).toBeGreaterThanOrEqual(21);
    for (const { method, path, operation } of routes) {
      const refused = await call(t.url, method, path, '{"garbled": [', bearer(NOBODY));
      expect({ method, path, status: refused.status, code: refused.body?.error?.code }).toEqual({ method, path, status: 403, code: 'forbidden' });
      expect(refused.body.error.message).toMatch(new RegExp(`^${operation} in any namespace is not granted to token:nobody`));
    }
  });

  it('REST: the refusal is journaled as every refusal is', async () => {
    const rows = await t.store.client.operation.findMany({ where: { actor: 'token:nobody', kind: 'create_agent', state: 'refused' } });
    expect(rows.length).toBeGreaterThan(0);
    expect(rows[0]).toMatchObject({ namespace: '*', door: 'rest', authMethod: 'token', errorCode: 'forbidden' });
  });

  it('MCP: a principal granted nothing is answered 403 before its body is read', async () => {
    const res = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...bearer(NOBODY) },
      body: JSON.stringify({ ...INITIALIZE, params: { ...INITIALIZE.params, padding: hugeToolset(100_000) } }),
    });
    expect(res.status).toBe(403);
    const body = (await res.json()) as { jsonrpc: string; error: { message: string } };
    expect(body.jsonrpc).toBe('2.0');
    expect(body.error.message).toMatch(/^Forbidden: no operation is granted to token:nobody in any namespace: an admin grants it/);
    const garbled = await fetch(`${t.url}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, ...bearer(NOBODY) }, body: '{"jsonrpc": ' });
    expect(garbled.status).toBe(403);
  });
});

describe('bounded answers for a caller who holds the operation', () => {
  it('REST: an oversized toolset answers 400 naming the 32-selector cap, with a short answer', async () => {
    const body = { name: 'big', namespace: 'team-a', modelConfig: 'm', toolset: hugeToolset(100_000), dryRun: true };
    const refused = await call(t.url, 'POST', '/api/v1/agents', body, bearer(EDITOR));
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('invalid_request');
    expect(refused.body.error.details[0]).toMatchObject({ path: 'toolset[32]' });
    expect(refused.body.error.details[0].message).toContain('100000 selectors exceed the cap of 32 inline selectors');
    expect(refused.body.error.details.length).toBeLessThanOrEqual(51);
    expect(refused.text.length).toBeLessThan(64 * 1024);
  });

  it('REST validate: the same list is a verdict naming the cap, not 22 MB of violations', async () => {
    const body = { name: 'big', namespace: 'team-a', modelConfig: 'm', toolset: hugeToolset(100_000) };
    const verdict = await call(t.url, 'POST', '/api/v1/agents/validate', body, bearer(EDITOR));
    expect(verdict.status).toBe(200);
    expect(verdict.body.valid).toBe(false);
    expect(verdict.body.violations[0].message).toContain('exceed the cap of 32 inline selectors');
    expect(verdict.text.length).toBeLessThan(64 * 1024);
  });

  it('lists at most 50 problems and says how many more', async () => {
    const body: Record<string, unknown> = { name: 'many', namespace: 'team-a', modelConfig: 'm', toolset: ['preset:none'], dryRun: true };
    for (let i = 0; i < 80; i += 1) body[`unknown${i}`] = i;
    const refused = await call(t.url, 'POST', '/api/v1/agents', body, bearer(EDITOR));
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toHaveLength(51);
    expect(refused.body.error.details[50]).toEqual({ path: '', message: '30 more problems are not listed (at most 50 are): fix these and send again to see the rest' });
    expect(refused.body.error.message).toMatch(/^80 problems: .*; and 30 more$/);
  });

  it('MCP: validate_agent with 150,000 items answers a verdict naming the cap, not an internal error', async () => {
    const { client } = await connectAs(t.url, EDITOR);
    const result = await client.callTool({ name: 'validate_agent', arguments: { name: 'big', namespace: 'team-a', modelConfig: 'm', toolset: hugeToolset(150_000) } });
    expect(result.isError).toBeFalsy();
    const verdict = result.structuredContent as { valid: boolean; violations: { path: string; message: string }[] };
    expect(verdict.valid).toBe(false);
    expect(verdict.violations[0].message).toContain('150000 selectors exceed the cap of 32 inline selectors');
    await client.close();
  });
});

describe('what a body may hold', () => {
  it('refuses invalid UTF-8 naming the field, instead of storing U+FFFD', async () => {
    const head = Buffer.from('{"name":"utf","namespace":"team-a","modelConfig":"m","toolset":["preset:none"],"dryRun":true,"systemMessage":"caf');
    const body = Buffer.concat([head, Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    const res = await fetch(`${t.url}/api/v1/agents`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(EDITOR) }, body });
    expect(res.status).toBe(400);
    const answer = (await res.json()) as { error: { code: string; details: { path: string; message: string }[] } };
    expect(answer.error.code).toBe('invalid_request');
    expect(answer.error.details).toEqual([
      { path: 'systemMessage', message: 'systemMessage is not valid UTF-8 (bytes that are no character were sent): send the text encoded as UTF-8' },
    ]);
  });

  it('refuses an invisible character in a selector naming the index (REST and MCP)', async () => {
    const body = { name: 'zw', namespace: 'team-a', modelConfig: 'm', toolset: ['server:github', 'preset:read\u200b-only'], dryRun: true };
    const refused = await call(t.url, 'POST', '/api/v1/agents', body, bearer(EDITOR));
    expect(refused.status).toBe(400);
    expect(refused.body.error.details[0].path).toBe('toolset[1]');
    expect(refused.body.error.details[0].message).toContain('"preset:read\\u200b-only" at index 1 contains the invisible character U+200B');
    const { client } = await connectAs(t.url, EDITOR);
    const result = await client.callTool({ name: 'create_agent', arguments: body });
    expect(result.isError).toBe(true);
    expect((result.content as { text: string }[])[0].text).toContain('at index 1 contains the invisible character U+200B');
    await client.close();
  });
});

describe('one identity parser for both doors', () => {
  it('refuses "Bearer <token> junk" on REST and on /mcp alike, saying where to get a token', async () => {
    const authorization = `Bearer ${EDITOR} junk`;
    const rest = await call(t.url, 'GET', '/api/v1/agents', undefined, { authorization });
    expect(rest.status).toBe(401);
    const mcp = await fetch(`${t.url}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, authorization }, body: JSON.stringify(INITIALIZE) });
    expect(mcp.status).toBe(401);
    const said = ((await mcp.json()) as { error_description: string }).error_description;
    expect(said).toBe(rest.body.error.message);
    expect(said).toMatch(/^the Authorization header must be "Bearer <token>"; send "Authorization: Bearer <token>" with an API token an admin issued you$/);
  });

  it('answers a missing header on /mcp as REST does: where to get a token', async () => {
    const rest = await call(t.url, 'GET', '/api/v1/agents');
    const mcp = await fetch(`${t.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
    expect(mcp.status).toBe(401);
    expect(((await mcp.json()) as { error_description: string }).error_description).toBe(rest.body.error.message);
  });
});
