import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Store } from '@app/store';
import { LoggingMessageNotificationSchema, type LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import { call, CLIENT_NAME, connect, OVER_CAP, seedAgent, startApp, text, TOOLNAMES_MESSAGE, type McpTestApp } from './mcp-support.js';
import { mcpClient } from '../support/mcp-client.js';

const DEFAULT_TOOLS = ['get_info', 'list_server_toolsets', 'list_agents', 'get_agent', 'get_agent_status', 'validate_agent', 'create_agent', 'update_agent', 'delete_agent', 'list_toolset_presets', 'validate_toolset_presets', 'list_model_configs'];
const REVISION_TOOLS = ['list_agent_revisions', 'diff_agent_revisions', 'rollback_agent'];
const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

/** A raw POST with headers fetch cannot set (Host). */
function post(url: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      let data = '';
      res.on('data', (chunk) => (data += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

describe('MCP over Streamable HTTP', () => {
  let service: McpTestApp;
  const clients: Client[] = [];
  const open = async (query = '') => {
    const client = await connect(service.base, query);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    service = await startApp();
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await service.close();
  });

  describe('toolsets by URL', () => {
    it('serves the default toolsets on /mcp, each tool with its four hints and an output schema', async () => {
      const { tools } = await (await open()).listTools();
      expect(tools.map((t) => t.name)).toEqual(DEFAULT_TOOLS);
      for (const tool of tools) {
        expect(tool.description).toBeTruthy();
        expect(tool.inputSchema.type).toBe('object');
        expect(tool.outputSchema?.type).toBe('object');
        for (const hint of HINTS) expect(typeof tool.annotations?.[hint]).toBe('boolean');
        expect(JSON.stringify(tool)).not.toMatch(/\$ref|"nullable"/);
      }
      const byName = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
      expect(byName.create_agent).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true });
      expect(byName.delete_agent).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: true });
      expect(byName.list_agents).toMatchObject({ readOnlyHint: true, openWorldHint: false });
      expect(byName.get_agent_status).toMatchObject({ readOnlyHint: true, openWorldHint: true });
    });

    it('takes the REST body DTO as the input schema, with the path fields beside it', async () => {
      const { tools } = await (await open()).listTools();
      const create = tools.find((t) => t.name === 'create_agent');
      const update = tools.find((t) => t.name === 'update_agent');
      expect(create?.inputSchema.required).toEqual(expect.arrayContaining(['name', 'namespace', 'modelConfig', 'toolset']));
      expect(create?.inputSchema.properties?.toolset).toMatchObject({ type: 'array', maxItems: 32, minItems: 1 });
      expect(create?.inputSchema).toMatchObject({ additionalProperties: false });
      expect(Object.keys(update?.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['namespace', 'name', 'toolset', 'dryRun']));
      expect(update?.inputSchema.required).toEqual(['namespace', 'name']);
    });

    it('adds an opt-in toolset for a bare flag, with its instructions', async () => {
      const client = await open('?revisions');
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual([...DEFAULT_TOOLS, ...REVISION_TOOLS]);
      expect(client.getInstructions()).toContain('## Revisions');
    });

    it('serves only the named toolset plus the always-on one for ?only=', async () => {
      const client = await open('?only=revisions');
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['get_info', 'list_server_toolsets', ...REVISION_TOOLS]);
      expect(client.getInstructions()).toContain('## Revisions');
      expect(client.getInstructions()).not.toContain('## Agents');
    });

    it('leaves a toolset out for ?without=, and keeps its instructions out too', async () => {
      const client = await open('?without=agents');
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['get_info', 'list_server_toolsets']);
      expect(client.getInstructions()).not.toContain('## Agents');
    });

    it('serves an unknown name anyway and reports it on /mcp/toolsets and in list_server_toolsets', async () => {
      const client = await open('?benchmrks');
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(DEFAULT_TOOLS);

      const res = await fetch(`${service.base}/mcp/toolsets?benchmrks`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ active: ['meta', 'agents', 'blueprints'], unknown: ['benchmrks'] });

      const result = await call(client, 'list_server_toolsets');
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ active: ['meta', 'agents', 'blueprints'], unknown: ['benchmrks'], tools: DEFAULT_TOOLS });
      expect(result.structuredContent?.how_to_select).toMatch(/\?only=/);
      expect(result.structuredContent?.toolsets).toEqual([
        expect.objectContaining({ name: 'meta', default: true, always: true, active: true }),
        expect.objectContaining({ name: 'agents', default: true, always: false, active: true }),
        expect.objectContaining({ name: 'revisions', default: false, always: false, active: false }),
        expect.objectContaining({ name: 'audit', default: false, always: false, active: false }),
        expect.objectContaining({ name: 'blueprints', default: true, always: false, active: true }),
        expect.objectContaining({ name: 'blueprint-admin', default: false, always: false, active: false }),
        expect.objectContaining({ name: 'admin', default: false, always: false, active: false }),
        expect.objectContaining({ name: 'fleet', default: false, always: false, active: false }),
        expect.objectContaining({ name: 'changes', default: false, always: false, active: false }),
      ]);
    });

    it('reads the selection once, when the session opens: a later request of the session with another URL gets the same tools', async () => {
      const client = await open('?only=revisions');
      const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId as string;
      const res = await fetch(`${service.base}/mcp?agents`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} }),
      });
      // a request whose answer sends nothing before it is answered as one JSON body, not an event stream
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const tools = ((await res.json()) as { result: { tools: { name: string }[] } }).result.tools;
      expect(tools.map((t) => t.name)).toEqual(['get_info', 'list_server_toolsets', ...REVISION_TOOLS]);
    });

    it('reads the ignored query keys as nothing', async () => {
      const res = await fetch(`${service.base}/mcp/toolsets?scopes=data:read`);
      expect(await res.json()).toEqual({ active: ['meta', 'agents', 'blueprints'], unknown: [] });
    });
  });

  describe('the agent tools', () => {
    let client: Client;
    const logs: LoggingMessageNotification['params'][] = [];

    beforeAll(async () => {
      client = await open('?revisions');
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        logs.push(n.params);
      });
      await seedAgent(service.app, 'agents', 'seeded', ['preset:read-only']);
    });

    it('refuses 33 selectors naming the toolset and the cap, exactly as REST does', async () => {
      const body = { name: 'too-many', namespace: 'agents', modelConfig: 'default-model-config', toolset: OVER_CAP, dryRun: true };
      const result = await call(client, 'create_agent', body);
      expect(result.isError).toBe(true);
      const error = (result.structuredContent as { error: { code: string; message: string } }).error;
      expect(error.code).toBe('invalid_request');
      expect(error.message).toContain('toolset');
      expect(error.message).toContain('32');
      expect(text(result)).toContain(error.message);

      const rest = await fetch(`${service.base}/api/v1/agents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(rest.status).toBe(400);
      expect(await rest.json()).toEqual(result.structuredContent);
    });

    it('refuses toolNames with the exact migration text', async () => {
      const result = await call(client, 'create_agent', { name: 'legacy', namespace: 'agents', modelConfig: 'm', toolNames: ['list_tools'], toolset: ['preset:read-only'] });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: { code: 'invalid_request', message: TOOLNAMES_MESSAGE } });
      expect(text(result).split('\n')[0]).toBe(TOOLNAMES_MESSAGE);
    });

    it('refuses an unknown argument by name', async () => {
      const result = await call(client, 'create_agent', { name: 'x', namespace: 'agents', modelConfig: 'm', toolset: ['preset:none'], colour: 'red' });
      expect(result.isError).toBe(true);
      expect(text(result)).toContain('unknown field "colour"');
    });

    it('answers a dry-run create with the rendered Agent, the toolset header exactly as given', async () => {
      const toolset = ['preset:read-only', 'workflow:incident-triage', 'tool:überwachung'];
      const result = await call(client, 'create_agent', { name: 'helper', namespace: 'agents', modelConfig: 'default-model-config', toolset, dryRun: true });
      expect(result.isError).toBeFalsy();
      const answer = result.structuredContent as { dryRun: boolean; agent: unknown; values: { toolset: string[] }; manifests: string };
      expect(answer).toMatchObject({ dryRun: true, agent: null, values: { toolset } });
      expect(answer.manifests).toContain('kind: Agent');
      expect(answer.manifests).toContain('X-Muster-Toolset');
      expect(answer.manifests).toContain(toolset.join(','));
      expect(JSON.parse(text(result))).toEqual(answer);
      expect(logs.filter((l) => String(l.data).startsWith('create_agent agents/helper'))).toEqual([]);
    });

    it('keeps label keys named like Object.prototype members and refuses a character helm cannot carry, naming the field', async () => {
      const labels = { constructor: 'a', valueOf: 'b' };
      const kept = await call(client, 'create_agent', { name: 'proto', namespace: 'agents', modelConfig: 'm', toolset: ['preset:none'], labels, dryRun: true });
      expect(kept.isError).toBeFalsy();
      expect((kept.structuredContent as { values: { labels: object } }).values.labels).toEqual(labels);
      const refused = await call(client, 'create_agent', { name: 'proto', namespace: 'agents', modelConfig: 'm', toolset: ['preset:none'], description: 'a\u007fb', dryRun: true });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({ error: { code: 'invalid_request', details: [{ path: 'description', message: expect.stringContaining('U+007F') }] } });
    });

    it('journals a client name with control characters and unpaired surrogates replaced, cut to 253 characters', async () => {
      const odd = mcpClient(`odd\u0000name\ud800${'x'.repeat(300)}`);
      await odd.connect(new StreamableHTTPClientTransport(new URL(`${service.base}/mcp`)));
      clients.push(odd);
      const result = await call(odd, 'create_agent', { name: 'odd-client', namespace: 'agents', modelConfig: 'm', toolset: ['preset:none'] });
      expect(result.structuredContent).toMatchObject({ error: { code: 'backend_error' } });
      const [operation] = await service.app.get(Store).client.operation.findMany({ where: { name: 'odd-client' } });
      expect(operation.actor).toBe(`mcp:odd?name?${'x'.repeat(253 - 'mcp:odd?name?'.length)}`);
    });

    it('validates without writing: valid with manifests, or every violation', async () => {
      const good = await call(client, 'validate_agent', { name: 'fresh', namespace: 'agents', modelConfig: 'm', toolset: ['preset:none'] });
      expect(good.structuredContent).toMatchObject({ valid: true, violations: [] });
      const bad = await call(client, 'validate_agent', { name: 'Bad_Name', namespace: 'agents', toolset: ['label:x'] });
      expect(bad.isError).toBeFalsy();
      const answer = bad.structuredContent as { valid: boolean; violations: { path: string }[] };
      expect(answer.valid).toBe(false);
      expect(answer.violations.map((v) => v.path)).toEqual(expect.arrayContaining(['name', 'modelConfig']));
    });

    it('fails a create without dryRun with backend_error (no cluster) and journals it failed under the MCP client', async () => {
      const result = await call(client, 'create_agent', { name: 'no-cluster', namespace: 'agents', modelConfig: 'm', toolset: ['preset:none'] });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: { code: 'backend_error' } });
      expect(logs).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ level: 'info', data: expect.stringMatching(/^create_agent agents\/no-cluster: started/) }),
          expect.objectContaining({ level: 'error', data: expect.stringMatching(/^create_agent agents\/no-cluster failed/) }),
        ]),
      );
      const missing = await call(client, 'get_agent', { namespace: 'agents', name: 'no-cluster' });
      expect(missing.structuredContent).toMatchObject({ error: { code: 'not_found' } });
    });

    it('updates: a dry run shows before and after; a real one fails backend_error, recorded on the agent, the store unchanged', async () => {
      const dry = await call(client, 'update_agent', { namespace: 'agents', name: 'seeded', toolset: ['preset:none'], dryRun: true });
      expect(dry.structuredContent).toMatchObject({ dryRun: true, changed: true, before: { toolset: ['preset:read-only'] }, after: { toolset: ['preset:none'] } });

      const real = await call(client, 'update_agent', { namespace: 'agents', name: 'seeded', toolset: ['preset:none'] });
      expect(real.structuredContent).toMatchObject({ error: { code: 'backend_error' } });

      const agent = await call(client, 'get_agent', { namespace: 'agents', name: 'seeded' });
      expect(agent.structuredContent).toMatchObject({
        toolset: ['preset:read-only'],
        revision: 1,
        lastOperation: { kind: 'update', state: 'failed', errorCode: 'backend_error', actor: `mcp:${CLIENT_NAME}` },
      });
      const listed = await call(client, 'list_agents', { namespace: 'agents' });
      expect((listed.structuredContent as { items: { name: string }[] }).items.map((a) => a.name)).toEqual(['seeded']);
    });

    it('refuses a stale expectedVersion with precondition_failed naming the current version, as If-Match does on REST', async () => {
      const agent = (await call(client, 'get_agent', { namespace: 'agents', name: 'seeded' })).structuredContent as { version: number };
      const stale = await call(client, 'update_agent', { namespace: 'agents', name: 'seeded', systemMessage: 'x', expectedVersion: agent.version + 5 });
      expect(stale.isError).toBe(true);
      expect(stale.structuredContent).toMatchObject({ error: { code: 'precondition_failed', message: expect.stringContaining(`is at version ${agent.version}, not ${agent.version + 5}`) } });
      const rest = await fetch(`${service.base}/api/v1/agents/agents/seeded`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', 'if-match': `"${agent.version + 5}"` },
        body: JSON.stringify({ systemMessage: 'x' }),
      });
      expect(rest.status).toBe(412);
      expect(((await rest.json()) as { error: { message: string } }).error.message).toBe((stale.structuredContent as { error: { message: string } }).error.message);
    });

    it('deletes: a dry run shows what would go; a real one fails backend_error and the agent stays', async () => {
      const dry = await call(client, 'delete_agent', { namespace: 'agents', name: 'seeded', dryRun: true });
      expect(dry.structuredContent).toMatchObject({ dryRun: true, releaseRemoved: false, deleted: { name: 'seeded', state: 'active' } });

      const real = await call(client, 'delete_agent', { namespace: 'agents', name: 'seeded' });
      expect(real.structuredContent).toMatchObject({ error: { code: 'backend_error' } });
      const agent = await call(client, 'get_agent', { namespace: 'agents', name: 'seeded' });
      expect(agent.structuredContent).toMatchObject({ state: 'active', lastOperation: { kind: 'delete', state: 'failed' } });
    });

    it('lists revisions and rolls back as a dry run', async () => {
      const revisions = await call(client, 'list_agent_revisions', { namespace: 'agents', name: 'seeded' });
      expect(revisions.structuredContent).toMatchObject({ current: 1, items: [{ revision: 1, kind: 'create' }] });
      const rollback = await call(client, 'rollback_agent', { namespace: 'agents', name: 'seeded', revision: 1, dryRun: true });
      expect(rollback.structuredContent).toMatchObject({ dryRun: true, rolledBackTo: 1 });
      const missing = await call(client, 'rollback_agent', { namespace: 'agents', name: 'seeded', revision: 9, dryRun: true });
      expect(missing.structuredContent).toMatchObject({ error: { code: 'not_found' } });
      expect(text(missing)).toContain('list_agent_revisions');
    });

    it('reads status and service info', async () => {
      const status = await call(client, 'get_agent_status', { namespace: 'agents', name: 'seeded' });
      expect(status.isError).toBeFalsy();
      expect(['ready', 'progressing', 'failed', 'unknown']).toContain((status.structuredContent as { verdict: string }).verdict);
      const info = await call(client, 'get_info');
      expect(info.structuredContent).toMatchObject({ service: 'agent-manager', capabilities: { mcp: true }, toolsetLimits: { maxSelectors: 32 } });
    });

    it('answers a tool of another toolset, or none, with an actionable not_found', async () => {
      const other = await open('?only=revisions');
      const result = await call(other, 'create_agent', { name: 'x', namespace: 'agents', modelConfig: 'm', toolset: ['preset:none'] });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: { code: 'not_found' } });
      expect(text(result)).toContain('list_server_toolsets');
    });

    it('says in its notifications what a write really does: a refusal never reaches helm, a delete uninstalls', async () => {
      const before = logs.length;
      await call(client, 'create_agent', { name: 'Not-A-Label', namespace: 'agents', modelConfig: 'm', toolset: ['preset:none'] });
      const refused = logs.slice(before).map((l) => String(l.data));
      expect(refused).toEqual([expect.stringMatching(/^create_agent agents\/Not-A-Label: started: checking the request$/), expect.stringMatching(/^create_agent agents\/Not-A-Label failed: name must be/)]);
      await seedAgent(service.app, 'agents', 'progress-delete', ['preset:read-only']);
      const next = logs.length;
      await call(client, 'delete_agent', { name: 'progress-delete', namespace: 'agents' });
      const deleted = logs.slice(next).map((l) => String(l.data));
      expect(deleted.slice(0, 2)).toEqual(['delete_agent agents/progress-delete: started: checking the request', 'delete_agent agents/progress-delete: checks passed: uninstalling the helm release agents/progress-delete (this can take a while)']);
      expect([...refused, ...deleted].join('\n')).not.toContain('applying');
    });

    it('filters log notifications by the level the client sets', async () => {
      await client.setLoggingLevel('error');
      const before = logs.length;
      await call(client, 'create_agent', { name: 'quiet', namespace: 'agents', modelConfig: 'm', toolset: ['preset:none'] });
      expect(logs.slice(before).map((l) => l.level)).toEqual(['error']);
    });
  });

  it('answers malformed JSON on /mcp with a JSON-RPC parse error, not the REST error model', async () => {
    const res = await fetch(`${service.base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc": "2.0", "id": 1, "method": ',
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { jsonrpc: string; id: null; error: { code: number; message: string } };
    expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    expect(body.error.message).toMatch(/^Parse error: the body is not a JSON object or array/);
  });

  describe('DNS rebinding protection', () => {
    it.each<[string, Record<string, string>]>([
      ['a foreign Host', { host: 'evil.example.com' }],
      ['a foreign Origin', { origin: 'http://evil.example.com' }],
    ])('refuses %s with 403', async (_, headers) => {
      const res = await post(`${service.base}/mcp`, headers, initialize);
      expect(res.status).toBe(403);
      expect(JSON.parse(res.body).error.message).toContain('more hosts with ALLOWED_HOSTS');
    });

    it('refuses a Host that is no host[:port] with 400 naming it (it was a 500), before any session is read', async () => {
      for (const body of [initialize, { jsonrpc: '2.0', id: 2, method: 'tools/list' }]) {
        const res = await post(`${service.base}/mcp`, { host: 'localhost:99999' }, body);
        expect(res.status).toBe(400);
        expect(JSON.parse(res.body).error.message).toContain('the Host header "localhost:99999" is not a host name');
      }
    });

    it('answers a localhost Host', async () => {
      const port = new URL(service.base).port;
      const res = await post(`${service.base}/mcp`, { host: `localhost:${port}`, origin: `http://localhost:${port}` }, initialize);
      expect(res.status).toBe(200);
    });

    it('refuses a foreign Host on /mcp/toolsets too', async () => {
      const res = await new Promise<number>((resolve, reject) => {
        request(`${service.base}/mcp/toolsets`, { headers: { host: 'evil.example.com' } }, (r) => {
          r.resume();
          resolve(r.statusCode ?? 0);
        })
          .on('error', reject)
          .end();
      });
      expect(res).toBe(403);
    });
  });
});

describe('MCP deployment settings', () => {
  let service: McpTestApp;

  afterAll(async () => {
    await service?.close();
  });

  it('gives a bare /mcp MCP_DEFAULT_TOOLSETS, lets MCP_IGNORED_QUERY_KEYS through and answers MCP_ALLOWED_HOSTS', async () => {
    service = await startApp({ MCP_DEFAULT_TOOLSETS: 'only=revisions', MCP_IGNORED_QUERY_KEYS: 'tenant', MCP_ALLOWED_HOSTS: 'agent-manager.agents.svc' });
    const selection = async (query: string) =>
      new Promise<unknown>((resolve, reject) => {
        request(`${service.base}/mcp/toolsets${query}`, { headers: { host: 'agent-manager.agents.svc:8080' } }, (r) => {
          let data = '';
          r.on('data', (c) => (data += c));
          r.on('end', () => resolve(JSON.parse(data)));
        })
          .on('error', reject)
          .end();
      });
    expect(await selection('')).toEqual({ active: ['meta', 'revisions'], unknown: [] });
    expect(await selection('?tenant=a')).toEqual({ active: ['meta', 'revisions'], unknown: [] });
    expect(await selection('?agents')).toEqual({ active: ['meta', 'agents', 'blueprints'], unknown: [] });
    const local = await post(`${service.base}/mcp`, {}, initialize);
    expect(local.status).toBe(403);
  });

  it('refuses to start with an unknown name in MCP_DEFAULT_TOOLSETS, naming the variable', async () => {
    await expect(startApp({ MCP_DEFAULT_TOOLSETS: 'benchmrks' })).rejects.toThrow(/MCP_DEFAULT_TOOLSETS="benchmrks": no toolset is named benchmrks/);
  });
});
