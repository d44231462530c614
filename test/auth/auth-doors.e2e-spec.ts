import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair, importJWK, SignJWT, UnsecuredJWT } from 'jose';
import { toolNotAllowed } from '@app/auth';
import { ConfigError, loadConfig } from '@app/common';
import { createApp } from '../../apps/agent-manager/src/app.factory.js';
import { call, startTestApp, unreachableKubeconfig, type TestApp } from '../support/test-app.js';
import { ADMIN_TOKEN, AUDIENCE, authEnv, bearer, connectAs, POLICY, seedAgent, VIEWER_TOKEN } from './auth-support.js';
import { TestIssuer } from './oidc-issuer.js';

let issuer: TestIssuer;
let t: TestApp;
let dir: string;
/** Where clients reach the service (behind its ingress): what the metadata and the challenges name. */
const PUBLIC = 'https://agent-manager.example.com';

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

async function mcpPost(token: string | undefined, body: unknown = INITIALIZE) {
  return fetch(`${t.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(token ? bearer(token) : {}) },
    body: JSON.stringify(body),
  });
}

async function forged(claims: Record<string, unknown>, header: Record<string, unknown> = {}, key?: Parameters<SignJWT['sign']>[0]): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sub: 'ci', iss: issuer.url, aud: AUDIENCE, iat: now, exp: now + 300, groups: ['team-payments'], ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: issuer.key.kid, ...header })
    .sign(key ?? (await importJWK(issuer.key, 'ES256')));
}

beforeAll(async () => {
  issuer = await TestIssuer.start();
  dir = mkdtempSync(join(tmpdir(), 'auth-e2e-'));
  t = await startTestApp({ ...authEnv(dir, issuer.url), PUBLIC_URL: PUBLIC });
  for (const [ns, name] of [
    ['payments-eu', 'biller'],
    ['payments-us', 'refunder'],
    ['team-a', 'helper'],
    ['secret', 'vault-agent'],
  ]) {
    await seedAgent(t.store, ns, name);
  }
});

afterAll(async () => {
  await t?.close();
  await issuer?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('authentication on both doors', () => {
  it('answers a valid OIDC token from the real issuer with 200 on REST and opens an MCP session', async () => {
    const token = await issuer.token(AUDIENCE);
    expect((await call(t.url, 'GET', '/api/v1/agents', undefined, bearer(token))).status).toBe(200);
    const { client } = await connectAs(t.url, token);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();
  });

  it.each([
    ['missing', async () => undefined],
    ['expired', async () => forged({ exp: Math.floor(Date.now() / 1000) - 3600, iat: Math.floor(Date.now() / 1000) - 7200 })],
    ['for another audience', async () => forged({ aud: 'https://other.example.com' })],
    ['from another issuer', async () => forged({ iss: 'https://evil.example.com' })],
    ['with a bad signature', async () => forged({}, {}, (await generateKeyPair('ES256')).privateKey)],
    ['alg none', async () => new UnsecuredJWT({ sub: 'ci', iss: issuer.url, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 300 }).encode()],
    ['an unknown API token', async () => 'am_not_a_token_anyone_issued_0000000'],
  ])('refuses a token %s with 401 on REST and on /mcp, pointing at the metadata', async (_case, make) => {
    const token = await make();
    const rest = await call(t.url, 'GET', '/api/v1/agents', undefined, token ? bearer(token) : {});
    expect(rest.status).toBe(401);
    expect(rest.body.error.code).toBe('unauthenticated');
    expect(rest.headers.get('www-authenticate')).toContain(`resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource"`);
    const mcp = await mcpPost(token);
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get('www-authenticate')).toMatch(new RegExp(`^Bearer .*resource_metadata="${PUBLIC.replaceAll('.', '\\.')}/\\.well-known/oauth-protected-resource/mcp"`));
  });

  it('serves the RFC 9728 documents naming the issuer and the resource', async () => {
    const mcp = await call(t.url, 'GET', '/.well-known/oauth-protected-resource/mcp');
    expect(mcp.status).toBe(200);
    expect(mcp.body).toMatchObject({ resource: `${PUBLIC}/mcp`, authorization_servers: [issuer.url], bearer_methods_supported: ['header'] });
    const rest = await call(t.url, 'GET', '/.well-known/oauth-protected-resource');
    expect(rest.body).toMatchObject({ resource: PUBLIC, authorization_servers: [issuer.url] });
  });

  it('keeps health open', async () => {
    expect((await call(t.url, 'GET', '/healthz')).status).toBe(200);
    expect((await call(t.url, 'GET', '/readyz')).status).toBe(200);
  });

  it('accepts API tokens: the principal is token:<name>', async () => {
    const info = await call(t.url, 'GET', '/api/v1/info', undefined, bearer(ADMIN_TOKEN));
    expect(info.status).toBe(200);
    const refused = await call(t.url, 'GET', '/api/v1/agents/secret/vault-agent', undefined, bearer(VIEWER_TOKEN));
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain('token:viewer');
  });
});

describe('one policy on both doors', () => {
  it('answers 403 naming the operation, the namespace and the principal', async () => {
    const token = await issuer.token(AUDIENCE);
    const body = { name: 'x', namespace: 'secret', modelConfig: 'm', toolset: ['preset:none'], dryRun: true };
    const refused = await call(t.url, 'POST', '/api/v1/agents', body, bearer(token));
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('forbidden');
    expect(refused.body.error.message).toMatch(/^create_agent in namespace "secret" is not granted to ci \(groups: team-payments, staff\) \(it is granted in namespaces "payments-\*"\)/);
  });

  it('decides before it reads the write headers: a malformed Idempotency-Key answers 403 where the write is not granted, 400 naming the header where it is', async () => {
    const editor = bearer(await issuer.token(AUDIENCE));
    const body = { name: 'x', modelConfig: 'm', toolset: ['preset:none'], dryRun: true };
    const headers = { ...editor, 'idempotency-key': 'not a key' };
    const refused = await call(t.url, 'POST', '/api/v1/agents', { ...body, namespace: 'secret' }, headers);
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain('create_agent in namespace "secret"');
    const unreadable = await call(t.url, 'POST', '/api/v1/agents', { ...body, namespace: 'payments-eu' }, headers);
    expect(unreadable.status).toBe(400);
    expect(unreadable.body.error.details).toEqual([{ path: 'Idempotency-Key', message: 'Idempotency-Key must be 1 to 255 visible ASCII characters, e.g. a UUID' }]);
  });

  it('needs the matching write for a dry run and for validate', async () => {
    const body = { name: 'x', namespace: 'team-a', modelConfig: 'm', toolset: ['preset:none'] };
    // The viewer holds neither anywhere: refused before its body is read, so no namespace is named.
    const dryRun = await call(t.url, 'POST', '/api/v1/agents', { ...body, dryRun: true }, bearer(VIEWER_TOKEN));
    expect(dryRun.status).toBe(403);
    expect(dryRun.body.error.message).toContain('create_agent in any namespace is not granted to token:viewer');
    const validate = await call(t.url, 'POST', '/api/v1/agents/validate', body, bearer(VIEWER_TOKEN));
    expect(validate.status).toBe(403);
    expect(validate.body.error.message).toContain('validate_agent in any namespace is not granted to token:viewer');
    // An editor of payments-* holds both somewhere: the namespace decides.
    const editor = bearer(await issuer.token(AUDIENCE));
    const elsewhere = await call(t.url, 'POST', '/api/v1/agents/validate', body, editor);
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.error.message).toContain('validate_agent in namespace "team-a"');
  });

  it('lists only agents in namespaces the principal may list, page by page', async () => {
    const token = await issuer.token(AUDIENCE);
    const first = await call(t.url, 'GET', '/api/v1/agents?limit=1', undefined, bearer(token));
    expect(first.body.items.map((a: { namespace: string }) => a.namespace)).toEqual(['payments-eu']);
    const second = await call(t.url, 'GET', `/api/v1/agents?limit=1&cursor=${first.body.nextCursor}`, undefined, bearer(token));
    expect(second.body.items.map((a: { namespace: string }) => a.namespace)).toEqual(['payments-us']);
    expect(second.body.nextCursor).toBeNull();
    const admin = await call(t.url, 'GET', '/api/v1/agents', undefined, bearer(ADMIN_TOKEN));
    expect(admin.body.items).toHaveLength(4);
    const other = await call(t.url, 'GET', '/api/v1/agents?namespace=secret', undefined, bearer(token));
    expect(other.status).toBe(403);
  });

  it('lists over MCP only the tools the principal is granted, and refuses another with the exact tool_not_allowed text', async () => {
    const { client } = await connectAs(t.url, VIEWER_TOKEN);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(['get_info', 'list_server_toolsets', 'list_agents', 'get_agent']);
    const refused = await client.callTool({ name: 'create_agent', arguments: { name: 'x', namespace: 'team-a', modelConfig: 'm', toolset: ['preset:none'], dryRun: true } });
    expect(refused.isError).toBe(true);
    expect((refused.content as { text: string }[])[0].text).toBe(toolNotAllowed('create_agent', names));
    const elsewhere = await client.callTool({ name: 'get_agent', arguments: { namespace: 'secret', name: 'vault-agent' } });
    expect(elsewhere.isError).toBe(true);
    expect((elsewhere.content as { text: string }[])[0].text).toMatch(/^get_agent in namespace "secret" is not granted to token:viewer/);
    const listed = await client.callTool({ name: 'list_agents', arguments: {} });
    expect((listed.structuredContent as { items: { name: string }[] }).items.map((a) => a.name)).toEqual(['helper']);
    await client.close();
  });

  it('answers another principal presenting a session id with 404', async () => {
    const { client, transport } = await connectAs(t.url, ADMIN_TOKEN);
    const hijack = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': transport.sessionId!, 'mcp-protocol-version': '2025-06-18', ...bearer(VIEWER_TOKEN) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
    });
    expect(hijack.status).toBe(404);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('delete_agent');
    await client.close();
  });
});

describe('the audit trail', () => {
  it('journals refusals with the principal, how it authenticated, the door and the X-Actor note, and shows them to admins only', async () => {
    // A namespace no other case refuses ci in: the refusals of one principal, operation and namespace
    // within a minute are one entry (the first one's details, with a count).
    const body = { name: 'audited', namespace: 'audited', modelConfig: 'm', toolset: ['preset:none'] };
    // ci holds create_agent in payments-* (so its body is read) but not in audited.
    const token = await issuer.token(AUDIENCE);
    const refused = await call(t.url, 'POST', '/api/v1/agents', body, { ...bearer(token), 'x-actor': 'someone-else', 'x-request-id': 'req-audit-1' });
    expect(refused.status).toBe(403);
    const page = await call(t.url, 'GET', '/api/v1/operations?outcome=refused&namespace=audited&operation=create_agent', undefined, bearer(ADMIN_TOKEN));
    expect(page.status).toBe(200);
    expect(page.body.items[0]).toMatchObject({
      operation: 'create_agent',
      namespace: 'audited',
      name: 'audited',
      outcome: 'refused',
      actor: 'ci',
      subject: 'ci',
      authMethod: 'oidc',
      door: 'rest',
      requestId: 'req-audit-1',
      actorNote: 'someone-else',
      count: 1,
    });
    const { client } = await connectAs(t.url, ADMIN_TOKEN, '?audit');
    const viaMcp = await client.callTool({ name: 'list_operations', arguments: { subject: 'token:viewer', outcome: 'refused', limit: 1 } });
    expect((viaMcp.structuredContent as { items: { subject: string }[] }).items).toEqual([expect.objectContaining({ subject: 'token:viewer' })]);
    await client.close();
    const notAdmin = await call(t.url, 'GET', '/api/v1/operations', undefined, bearer(VIEWER_TOKEN));
    expect(notAdmin.status).toBe(403);
  });

  it('never stores a token', async () => {
    const rows = await t.store.client.operation.findMany();
    expect(JSON.stringify(rows)).not.toContain(VIEWER_TOKEN);
    expect(JSON.stringify(rows)).not.toMatch(/Bearer/i);
  });
});

describe('start-up refusals', () => {
  it.each([
    ['an unknown operation', POLICY.replace('list_server_toolsets]', 'list_server_toolsets, launch_rockets]'), /launch_rockets/],
    ['a role cycle', POLICY.replace('viewer: [get_info,', 'viewer: [editor, get_info,'), /cycle/],
    ['a binding with no namespace', POLICY.replace('    namespaces: ["team-a"]\n', ''), /bindings\[2\]/],
  ])('refuses to start on a policy with %s, naming it', async (_case, policy, named) => {
    const where = mkdtempSync(join(tmpdir(), 'auth-bad-'));
    try {
      const config = loadConfig({ ...process.env, KUBECONFIG: unreachableKubeconfig(where), DATABASE_URL: `file:${join(where, 's.db')}`, ...authEnv(where, undefined, policy) });
      const failure = await createApp(config, { logger: false }).then(
        async (app) => {
          await app.close();
          return null;
        },
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(ConfigError);
      expect((failure as Error).message).toMatch(named);
    } finally {
      rmSync(where, { recursive: true, force: true });
    }
  });
});
