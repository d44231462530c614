import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair, SignJWT } from 'jose';
import { call, startTestApp, type TestApp } from '../support/test-app.js';
import { ADMIN_TOKEN, AUDIENCE, authEnv, bearer } from './auth-support.js';

/** An issuer nothing listens at: its discovery fails, so no JWT can be verified (API tokens can). */
const UNREACHABLE_ISSUER = 'http://127.0.0.1:9';
const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

let t: TestApp;
let dir: string;
let jwt: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'issuer-outage-e2e-'));
  t = await startTestApp(authEnv(dir, UNREACHABLE_ISSUER));
  const { privateKey } = await generateKeyPair('ES256');
  const now = Math.floor(Date.now() / 1000);
  jwt = await new SignJWT({ sub: 'ci', iss: UNREACHABLE_ISSUER, aud: AUDIENCE, iat: now, exp: now + 300 }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).sign(privateKey);
});

afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const mcpPost = (headers: Record<string, string>) =>
  fetch(`${t.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(INITIALIZE) });

describe('an OIDC issuer that cannot be reached', () => {
  it('answers a JWT with 503 on both doors (a retry may succeed), naming the issuer, never 401 or 500', async () => {
    const rest = await call(t.url, 'GET', '/api/v1/agents', undefined, bearer(jwt));
    expect(rest.status).toBe(503);
    expect(rest.body.error.code).toBe('unavailable');
    expect(rest.body.error.message).toContain(`the OpenID discovery of ${UNREACHABLE_ISSUER} is not usable`);

    const mcp = await mcpPost(bearer(jwt));
    expect(mcp.status).toBe(503);
    expect(mcp.headers.get('www-authenticate')).toBeNull();
    const body = (await mcp.json()) as { error: { message: string } };
    expect(body.error.message).toContain(`the OpenID discovery of ${UNREACHABLE_ISSUER} is not usable`);
  });

  it('still lets API tokens through on both doors, and still answers no token 401', async () => {
    expect((await call(t.url, 'GET', '/api/v1/agents', undefined, bearer(ADMIN_TOKEN))).status).toBe(200);
    const mcp = await mcpPost(bearer(ADMIN_TOKEN));
    expect(mcp.status).toBe(200);
    expect(mcp.headers.get('mcp-session-id')).toBeTruthy();
    expect((await mcpPost({})).status).toBe(401);
  });
});
