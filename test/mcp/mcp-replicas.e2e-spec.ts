// npm test: also on PostgreSQL — MCP sessions in the store shared by replicas
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ApiProperty } from '@app/common';
import { McpRegistry, type ToolSpec } from '@app/mcp';
import { freshDatabaseUrl, type FreshDatabase } from '../pg/fresh-database.js';
import { startRoundRobinProxy, type RoundRobinProxy } from '../support/round-robin-proxy.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { startTestApp, unreachableKubeconfig, type TestApp } from '../support/test-app.js';
import { call, connect } from './mcp-support.js';

const DRY_CREATE = { name: 'replicated', namespace: 'agents', modelConfig: 'default-model-config', toolset: ['preset:read-only'], dryRun: true };

class PingInputDto {
  @ApiProperty() text: string;
}

class PingResultDto {
  @ApiProperty() said: string;
}

/** A tool every replica adds while it runs (as each replica's modules would). */
function pingTool(): ToolSpec {
  return {
    name: 'ping_replica',
    title: 'Ping',
    toolset: 'agents',
    description: 'Says the text back.',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    input: [PingInputDto],
    output: PingResultDto,
    run: async (args) => ({ said: String(args.text) }),
  };
}

/** tools/list, a write (a dry-run create: helm renders, nothing is written) and a read, as one client. */
async function useEveryKind(client: Client): Promise<void> {
  const names = (await client.listTools()).tools.map((t) => t.name);
  expect(names).toEqual(expect.arrayContaining(['create_agent', 'list_agents']));
  const created = await call(client, 'create_agent', DRY_CREATE);
  expect(created.isError).toBeFalsy();
  expect(created.structuredContent).toMatchObject({ dryRun: true });
  const listed = await call(client, 'list_agents', { namespace: 'agents' });
  expect(listed.isError).toBeFalsy();
}

/** The backends that served a session's POSTs, in order (initialize included). */
function postsBy(proxy: RoundRobinProxy): number[] {
  return proxy.served.filter((s) => s.method === 'POST').map((s) => s.backend);
}

/** The backends of every request (the client's GET stream included), in the order they arrived. */
function requestsBy(proxy: RoundRobinProxy): number[] {
  return proxy.served.map((s) => s.backend);
}

/**
 * MCP over Streamable HTTP behind a round-robin balancer with no session affinity: two replicas
 * on one store, and a client whose consecutive requests alternate between them.
 */
describe('MCP across replicas without session affinity', () => {
  describe('two service processes, one killed', () => {
    let dir: string;
    let db: FreshDatabase;
    let replicas: ServiceProcess[] = [];
    let proxy: RoundRobinProxy;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'agent-manager-replicas-'));
      db = await freshDatabaseUrl();
      const env = { DATABASE_URL: db.url, KUBECONFIG: unreachableKubeconfig(dir), RECONCILE_AUTOMATIC: 'false' };
      // One at a time: both migrating one fresh SQLite file at once would race.
      replicas = [await startServiceProcess(env)];
      replicas.push(await startServiceProcess(env));
      proxy = await startRoundRobinProxy(replicas.map((r) => r.url));
    }, 240_000);

    afterAll(async () => {
      await proxy?.close();
      for (const r of replicas) if (r.child.exitCode === null && r.child.signalCode === null) await r.kill();
      await db?.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('serves one session from both replicas in turn, and keeps it when one replica is killed', async () => {
      const client = await connect(proxy.url);
      const session = (client.transport as StreamableHTTPClientTransport).sessionId;
      expect(session).toBeDefined();
      await useEveryKind(client);
      // Consecutive requests alternate: each replica served several POSTs of the one session.
      const all = requestsBy(proxy);
      for (let i = 1; i < all.length; i++) expect(all[i]).not.toBe(all[i - 1]);
      const posts = postsBy(proxy);
      expect(posts.filter((b) => b === 0).length).toBeGreaterThanOrEqual(2);
      expect(posts.filter((b) => b === 1).length).toBeGreaterThanOrEqual(2);

      const before = proxy.served.length;
      await replicas[0].kill();
      await useEveryKind(client);
      expect((client.transport as StreamableHTTPClientTransport).sessionId).toBe(session);
      expect(new Set(proxy.served.slice(before).map((s) => s.backend))).toEqual(new Set([1]));
      await client.close();
    }, 120_000);

    it('ends a session on every replica when the client ends it on one', async () => {
      const client = await connect(proxy.url);
      const session = (client.transport as StreamableHTTPClientTransport).sessionId!;
      await (client.transport as StreamableHTTPClientTransport).terminateSession();
      await client.close();
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
      const res = await fetch(`${replicas[1].url}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
      expect(res.status).toBe(404);
      await res.text();
    }, 60_000);
  });

  describe('two replicas in this process: tools changed at run time, the session cap and idle sessions', () => {
    let first: TestApp;
    let second: TestApp;
    let proxy: RoundRobinProxy;
    const limits = { MCP_SESSIONS_PER_PRINCIPAL: '2', MCP_SESSION_IDLE_SECONDS: '10' };
    const initialize = (base: string) =>
      fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
      });
    const toolsList = (base: string, session: string) =>
      fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      });
    const end = (base: string, session: string) => fetch(`${base}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } });

    beforeAll(async () => {
      first = await startTestApp(limits);
      second = await startTestApp({ ...limits, DATABASE_URL: first.databaseUrl }, first.clock);
      proxy = await startRoundRobinProxy([first.url, second.url]);
    }, 120_000);

    afterAll(async () => {
      await proxy?.close();
      await second?.close();
      await first?.close();
    });

    it('tells a client holding a stream of tools/list_changed, whichever replica holds it, and serves the new tool from both', async () => {
      const client = await connect(proxy.url);
      let changes = 0;
      const changed = new Promise<void>((resolve) =>
        client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
          changes++;
          resolve();
        }),
      );
      // The client opens its GET stream after initialize; wait until a replica answered it (the stream is open).
      for (let i = 0; i < 600 && !proxy.served.some((s) => s.method === 'GET' && s.status !== undefined); i++) await new Promise((r) => setTimeout(r, 50));
      expect(proxy.served.filter((s) => s.method === 'GET')).toEqual([{ method: 'GET', backend: expect.any(Number), status: 200 }]);

      const removers = [first, second].map((t) => t.app.get(McpRegistry).addTools([pingTool()]));
      await changed;
      expect(changes).toBeGreaterThanOrEqual(1);
      for (let i = 0; i < 2; i++) {
        expect((await client.listTools()).tools.map((t) => t.name)).toContain('ping_replica');
        expect((await call(client, 'ping_replica', { text: `hello ${i}` })).structuredContent).toEqual({ said: `hello ${i}` });
      }
      const posts = postsBy(proxy).slice(-4);
      expect(new Set(posts)).toEqual(new Set([0, 1]));
      removers.forEach((remove) => remove());
      await (client.transport as StreamableHTTPClientTransport).terminateSession();
      await client.close();
    }, 60_000);

    it("counts one principal's sessions on every replica against MCP_SESSIONS_PER_PRINCIPAL", async () => {
      const opened: string[] = [];
      for (const replica of [first, second]) {
        const res = await initialize(replica.url);
        await res.text();
        expect(res.status).toBe(200);
        opened.push(res.headers.get('mcp-session-id')!);
      }
      for (const replica of [first, second]) {
        const third = await initialize(replica.url);
        expect(third.status).toBe(429);
        expect(((await third.json()) as { error: { message: string } }).error.message).toContain('MCP_SESSIONS_PER_PRINCIPAL=2');
      }
      expect((await end(second.url, opened[0])).status).toBe(200);
      const again = await initialize(first.url);
      await again.text();
      expect(again.status).toBe(200);
      for (const id of [opened[1], again.headers.get('mcp-session-id')!]) expect((await end(first.url, id)).status).toBe(200);
    }, 60_000);

    it('closes a session nobody used for MCP_SESSION_IDLE_SECONDS on every replica', async () => {
      const res = await initialize(first.url);
      await res.text();
      const session = res.headers.get('mcp-session-id')!;
      const used = await toolsList(second.url, session);
      await used.text();
      expect(used.status).toBe(200);
      // Idle for 10 s on the replicas' clock, then reaped by whichever replica sweeps first (a sweep runs
      // every few seconds). Watched in the store: a request would use the session and keep it alive.
      first.clock.advance(11_000);
      for (let i = 0; i < 300 && (await first.store.client.mcpSession.count({ where: { id: session } })) > 0; i++) await new Promise((r) => setTimeout(r, 100));
      const probe = await toolsList(second.url, session);
      await probe.text();
      const status = probe.status;
      expect(status).toBe(404);
    }, 90_000);
  });
});
