import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { call, connect, seedAgent, startApp, type McpTestApp } from './mcp-support.js';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });

interface Answer {
  status: number;
  contentType: string | null;
  /** Whether the body's length came first (Content-Length) rather than chunked. */
  lengthFirst: boolean;
  body: unknown;
}

async function post(url: string, headers: Record<string, string>, body: string): Promise<Answer> {
  const res = await fetch(url, { method: 'POST', headers, body });
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get('content-type'), lengthFirst: res.headers.has('content-length'), body: text === '' ? '' : JSON.parse(text) };
}

/**
 * The SDK's own answer to a POST after initialize: its Streamable HTTP transport (stateless, JSON
 * answers) in front of a bare SDK server, the body parsed as express parses it for /mcp.
 */
async function startSdkReference(): Promise<{ url: string; close(): Promise<void> }> {
  const http: HttpServer = createServer((req, res) => {
    void (async () => {
      const json = /^application\/json/.test(req.headers['content-type'] ?? '');
      const body = json ? JSON.parse(await read(req)) : undefined;
      const server = new Server({ name: 'reference', version: '1' }, { capabilities: { tools: {} } });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.once('close', () => void server.close());
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    })();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };
}

async function read(req: IncomingMessage): Promise<string> {
  let data = '';
  for await (const chunk of req) data += chunk;
  return data;
}

describe('MCP over Streamable HTTP: JSON answers', () => {
  let service: McpTestApp;
  let reference: Awaited<ReturnType<typeof startSdkReference>>;
  let session: Record<string, string>;

  beforeAll(async () => {
    service = await startApp();
    reference = await startSdkReference();
    const res = await fetch(`${service.base}/mcp`, {
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    await res.text();
    session = { 'mcp-session-id': res.headers.get('mcp-session-id')! };
  });

  afterAll(async () => {
    await reference?.close();
    await service?.close();
  });

  it.each<[string, Record<string, string>, unknown]>([
    ['one request', {}, ping(7)],
    ['a batch, answered in the order of its requests', {}, [ping(3), ping(2)]],
    ['a batch of a request and a notification (one answer)', {}, [ping(4), { jsonrpc: '2.0', method: 'notifications/initialized' }]],
    ['a notification alone (202)', {}, { jsonrpc: '2.0', method: 'notifications/initialized' }],
    ['a response from the client (202)', {}, { jsonrpc: '2.0', id: 9, result: {} }],
    ['a method nobody serves', {}, { jsonrpc: '2.0', id: 5, method: 'no/such/method' }],
    ['a batch repeating a request id', {}, [ping(6), ping(6)]],
    ['no MCP-Protocol-Version header', { 'mcp-protocol-version': '' }, ping(8)],
    ['an Accept without text/event-stream', { accept: 'application/json' }, ping(10)],
    ['a Content-Type that is not JSON', { 'content-type': 'text/plain' }, ping(11)],
    ['an unsupported MCP-Protocol-Version', { 'mcp-protocol-version': '1999-01-01' }, ping(12)],
    ['a body that is no JSON-RPC message', {}, { hello: 'world' }],
    ['a batch of 101 messages', {}, Array.from({ length: 101 }, (_, i) => ping(100 + i))],
  ])('answers %s as the SDK transport does', async (_, overrides, body) => {
    const headers = Object.fromEntries(Object.entries({ ...HEADERS, ...session, ...overrides }).filter(([, v]) => v !== ''));
    const ours = await post(`${service.base}/mcp`, headers, JSON.stringify(body));
    const sdk = await post(reference.url, headers, JSON.stringify(body));
    expect(ours).toEqual(sdk);
  });

  it('answers a read tools/call as one JSON body holding what REST answers', async () => {
    await seedAgent(service.app, 'default', 'json-answer', ['preset:read-only']);
    const client = await connect(service.base);
    try {
      const result = await call(client, 'get_agent', { namespace: 'default', name: 'json-answer' });
      const rest = await fetch(`${service.base}/api/v1/agents/default/json-answer`);
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual(await rest.json());
    } finally {
      await client.close();
    }
    const raw = await post(
      `${service.base}/mcp`,
      { ...HEADERS, ...session },
      JSON.stringify({ jsonrpc: '2.0', id: 21, method: 'tools/call', params: { name: 'get_agent', arguments: { namespace: 'default', name: 'json-answer' } } }),
    );
    expect(raw).toMatchObject({ status: 200, contentType: 'application/json', body: { jsonrpc: '2.0', id: 21, result: { structuredContent: { name: 'json-answer' } } } });
  });
});
