import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request as httpRequest } from 'node:http';
// Loaded here as the MCP suites do: jest's ESM runtime cannot resolve the SDK's zod/v4 when the app imports it lazily first.
import '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ BODY_LIMIT_BYTES: '4096', MCP_ALLOWED_HOSTS: '127.0.0.1,localhost', MCP_SESSIONS_PER_PRINCIPAL: '2' });
});

afterAll(async () => {
  await t?.close();
});

/** node:http, because fetch cannot set Host. */
function raw(method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; text: string }> {
  const { port } = new URL(t.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('the HTTP door, hardened', () => {
  it('refuses a body over BODY_LIMIT_BYTES with 413 and the standard error body', async () => {
    const body = { name: 'big', namespace: 'agents', modelConfig: 'm', toolset: ['preset:none'], systemMessage: 'x'.repeat(5000), dryRun: true };
    const res = await call(t.url, 'POST', '/api/v1/agents', body);
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('4096 bytes (BODY_LIMIT_BYTES)') });
  });

  it('sends security headers, Swagger UI included, and no CORS header unless CORS_ORIGINS lists origins', async () => {
    for (const path of ['/api/v1/info', '/docs/']) {
      const res = await call(t.url, 'GET', path, undefined, { origin: 'http://127.0.0.1:9999' });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('serves Swagger UI under a CSP that works over plain HTTP and names no other host', async () => {
    const csp = (await call(t.url, 'GET', '/docs/')).headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('upgrade-insecure-requests');
    expect(csp).not.toMatch(/https?:/);
    const init = await call(t.url, 'GET', '/docs/swagger-ui-init.js');
    expect(init.text).toMatch(/"validatorUrl": null/);
  });

  it.each([
    ['no Content-Type', {}, 'no Content-Type'],
    ['text/plain', { 'content-type': 'text/plain' }, '"text/plain"'],
    ['a form', { 'content-type': 'application/x-www-form-urlencoded' }, '"application/x-www-form-urlencoded"'],
  ])('refuses a JSON body sent with %s, naming the header to send', async (_case, headers, shown) => {
    const body = JSON.stringify({ name: 'typed', namespace: 'agents', modelConfig: 'm', toolset: ['preset:none'], dryRun: true });
    const res = await raw('POST', '/api/v1/agents', { host: '127.0.0.1', 'content-length': String(body.length), ...headers }, body);
    expect(res.status).toBe(400);
    const error = JSON.parse(res.text).error;
    expect(error).toMatchObject({ code: 'invalid_request', details: [{ path: 'Content-Type', message: expect.stringContaining(shown) }] });
    expect(error.message).toContain('Content-Type: application/json');
  });

  it('refuses a foreign Host or Origin on REST as on /mcp, and keeps health open to probes', async () => {
    const body = JSON.stringify({ name: 'rebound', namespace: 'agents', modelConfig: 'm', toolset: ['preset:none'], dryRun: true });
    const evil = await raw('POST', '/api/v1/agents', { host: 'evil.example', origin: 'http://evil.example', 'content-type': 'application/json' }, body);
    expect(evil.status).toBe(403);
    expect(JSON.parse(evil.text).error).toMatchObject({ code: 'forbidden', message: expect.stringContaining('more hosts with ALLOWED_HOSTS') });
    const origin = await raw('GET', '/api/v1/agents', { host: '127.0.0.1', origin: 'http://evil.example' });
    expect(origin.status).toBe(403);
    expect((await raw('GET', '/healthz', { host: '10.1.2.3:8080' })).status).toBe(200);
    expect((await raw('GET', '/api/v1/agents', { host: `127.0.0.1:${new URL(t.url).port}` })).status).toBe(200);
  });

  it('refuses __proto__ and constructor as MCP tool arguments instead of dropping them', async () => {
    const init = await fetch(`${t.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
    const session = init.headers.get('mcp-session-id')!;
    await init.text();
    const headers = { ...MCP_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
    const args = '{"name":"p","namespace":"agents","modelConfig":"m","toolset":["preset:none"],"__proto__":{"dryRun":true}}';
    const res = await fetch(`${t.url}/mcp`, { method: 'POST', headers, body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"create_agent","arguments":${args}}}` });
    const answer = (await res.json()) as { id: number; result: { isError: boolean; structuredContent: { error: { code: string; details: { path: string }[] } } } };
    expect(answer.id).toBe(7);
    expect(answer.result.isError).toBe(true);
    expect(answer.result.structuredContent.error).toMatchObject({ code: 'invalid_request', details: [{ path: '__proto__' }] });
    const operations = await t.store.client.operation.count({ where: { name: 'p' } });
    expect(operations).toBe(0);
    await fetch(`${t.url}/mcp`, { method: 'DELETE', headers });
  });

  it('caps the open MCP sessions of one principal at MCP_SESSIONS_PER_PRINCIPAL', async () => {
    const opened: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${t.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
      expect({ status: res.status, text: res.status === 200 ? '' : await res.text() }).toEqual({ status: 200, text: '' });
      await res.body?.cancel();
      opened.push(res.headers.get('mcp-session-id')!);
    }
    const third = await fetch(`${t.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
    expect(third.status).toBe(429);
    expect(((await third.json()) as { error: { message: string } }).error.message).toContain('MCP_SESSIONS_PER_PRINCIPAL=2');
    for (const id of opened) await fetch(`${t.url}/mcp`, { method: 'DELETE', headers: { ...MCP_HEADERS, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' } });
    const again = await fetch(`${t.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
    await again.text();
    expect(again.status).toBe(200);
  });

  it('bounds how long a client may take to send a request', () => {
    const server = t.app.getHttpServer() as { requestTimeout: number; headersTimeout: number };
    expect(server.requestTimeout).toBeGreaterThan(0);
    expect(server.headersTimeout).toBeGreaterThan(0);
    expect(server.headersTimeout).toBeLessThanOrEqual(server.requestTimeout);
  });
});
