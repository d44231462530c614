// npm test: also on PostgreSQL — the idle sweep deleting session rows
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Store } from '@app/store';
import { CLIENT_NAME, startApp, type McpTestApp } from './mcp-support.js';
import { mcpClient } from '../support/mcp-client.js';

/** The least MCP_SESSION_IDLE_SECONDS allows: a session unused this long is closed. */
const IDLE_SECONDS = 10;

jest.setTimeout(120_000);

describe('MCP sessions idle for MCP_SESSION_IDLE_SECONDS', () => {
  let t: McpTestApp;

  beforeAll(async () => {
    t = await startApp({ MCP_SESSION_IDLE_SECONDS: String(IDLE_SECONDS), MCP_ALLOWED_HOSTS: '127.0.0.1,localhost', MCP_SESSIONS_PER_PRINCIPAL: '2' });
  });

  afterAll(async () => {
    await t?.close();
  });

  async function open(): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const client = mcpClient(CLIENT_NAME);
    const transport = new StreamableHTTPClientTransport(new URL(`${t.base}/mcp`));
    await client.connect(transport);
    return { client, transport };
  }

  it('closes the idle session (its id answers 404), keeps the one in use, and lets the client start a new session', async () => {
    const idle = await open();
    const busy = await open();
    // The service's clock moves past the idle time in two steps, the busy session used between them:
    // the idle one was unused for 11 s, the busy one for 3 s. Real time runs on top: the busy one
    // stays young enough for 7 s more, which a loaded machine's sweep (every 2.5 s) needs (6 s then
    // 6 s left it 4 s, and a parallel run on PostgreSQL reaped it once).
    t.clock.advance(8_000);
    await busy.client.listTools();
    t.clock.advance(3_000);
    // Reaped at the sweeper's next run (every quarter of the idle time, in real time). Watched in
    // the store: a request on the idle session would use it and keep it alive.
    const sessions = t.app.get(Store).client.mcpSession;
    for (let i = 0; i < 100 && (await sessions.count({ where: { id: idle.transport.sessionId! } })) > 0; i++) await sleep(100);

    const gone = await fetch(`${t.base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': idle.transport.sessionId!, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
    });
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { error: { message: string } }).error.message).toMatch(/^Session not found: .*start a new session with initialize/);
    await expect(idle.client.listTools()).rejects.toMatchObject({ code: 404, message: expect.stringContaining('Session not found') });

    expect((await busy.client.listTools()).tools.length).toBeGreaterThan(0);
    // The reaped session no longer counts against MCP_SESSIONS_PER_PRINCIPAL (2): a new one opens beside the busy one.
    const again = await open();
    expect((await again.client.listTools()).tools.map((tool) => tool.name)).toContain('create_agent');
    await Promise.all([again.client.close(), busy.client.close(), idle.client.close()]);
  });
});
