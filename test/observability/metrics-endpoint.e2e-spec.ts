import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
// Loaded up front as the MCP suites do: jest's ESM loader cannot link the SDK's zod/v4 when the service imports it lazily mid-test.
import '@modelcontextprotocol/sdk/types.js';
import { parsePrometheusText } from '../support/prometheus-text.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ MCP_ALLOWED_HOSTS: 'localhost,127.0.0.1' });
});

afterAll(async () => {
  await t?.close();
});

/** node:http, because fetch cannot set Host (a scraper reaches the pod by its address). */
function get(path: string, host: string): Promise<{ status: number; type: string; text: string }> {
  const { port } = new URL(t.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: 'GET', path, headers: { host } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), text }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('/metrics on the main port (no METRICS_PORT)', () => {
  it('answers a scraper that names the pod address, where the API refuses that Host', async () => {
    expect((await get('/api/v1/agents', '10.1.2.3:8080')).status).toBe(403);
    const scrape = await get('/metrics', '10.1.2.3:8080');
    expect(scrape.status).toBe(200);
    expect(scrape.type).toContain('text/plain');
    expect(parsePrometheusText(scrape.text).types.get('agent_manager_http_requests_total')).toBe('counter');
  });

  it('counts requests by route template, never by path: unknown paths share one label value', async () => {
    expect((await call(t.url, 'GET', '/api/v1/agents/team-a/helper')).status).toBe(404);
    expect((await call(t.url, 'GET', '/no/such/route-1')).status).toBe(404);
    expect((await call(t.url, 'GET', '/no/such/route-2')).status).toBe(404);
    const { samples } = parsePrometheusText((await get('/metrics', 'localhost')).text);
    const requests = samples.filter((s) => s.name === 'agent_manager_http_requests_total');
    expect(requests).toContainEqual({ name: 'agent_manager_http_requests_total', labels: { method: 'GET', route: '/api/v1/agents/:namespace/:name', outcome: 'not_found', status: '404' }, value: 1 });
    expect(requests).toContainEqual({ name: 'agent_manager_http_requests_total', labels: { method: 'GET', route: 'unmatched', outcome: 'not_found', status: '404' }, value: 2 });
    expect(requests.filter((s) => /team-a|helper|route-/.test(Object.values(s.labels).join(' ')))).toEqual([]);
  });

  it('counts a request its client abandoned before the answer as aborted (499), not as the status nobody sent', async () => {
    const { port } = new URL(t.url);
    const socket = connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    // A validate whose body never finishes arriving; the client then leaves.
    socket.write('POST /api/v1/agents/validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"name":');
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const { samples } = parsePrometheusText((await get('/metrics', 'localhost')).text);
    const posts = samples.filter((s) => s.name === 'agent_manager_http_requests_total' && s.labels.method === 'POST');
    expect(posts).toContainEqual({ name: 'agent_manager_http_requests_total', labels: { method: 'POST', route: 'unmatched', outcome: 'aborted', status: '499' }, value: 1 });
    expect(posts.filter((s) => s.labels.outcome === 'ok')).toEqual([]);
  });

  it('counts an MCP GET stream the client closed with the status it was answered, not as aborted', async () => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = await fetch(`${t.url}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'm', version: '1' } } }) });
    const session = init.headers.get('mcp-session-id')!;
    await init.text();
    const inSession = { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
    expect((await fetch(`${t.url}/mcp`, { method: 'POST', headers: inSession, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).status).toBe(202);
    const closing = new AbortController();
    const stream = await fetch(`${t.url}/mcp`, { headers: { accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' }, signal: closing.signal });
    expect(stream.status).toBe(200);
    closing.abort();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { samples } = parsePrometheusText((await get('/metrics', 'localhost')).text);
    const gets = samples.filter((s) => s.name === 'agent_manager_http_requests_total' && s.labels.method === 'GET' && s.labels.route === '/mcp');
    expect(gets).toEqual([expect.objectContaining({ labels: { method: 'GET', route: '/mcp', outcome: 'ok', status: '200' }, value: 1 })]);
  });

  it('answers X-Request-Id with the id the caller sent, or a new one when it is not a usable id', async () => {
    expect((await call(t.url, 'GET', '/api/v1/info', undefined, { 'x-request-id': 'deploy-42' })).headers.get('x-request-id')).toBe('deploy-42');
    const fresh = (await call(t.url, 'GET', '/api/v1/info', undefined, { 'x-request-id': 'has spaces' })).headers.get('x-request-id');
    expect(fresh).toMatch(/^[0-9a-f-]{36}$/);
  });
});
