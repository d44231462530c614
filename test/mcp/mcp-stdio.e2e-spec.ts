import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { freshDatabaseUrl, type FreshDatabase } from '../pg/fresh-database.js';
import { call, connectStdio, OVER_CAP, testEnv, text, TOOLNAMES_MESSAGE } from './mcp-support.js';

const root = process.cwd();
const bin = join(root, 'bin', 'agent-manager.mjs');

/** A spawned `agent-manager mcp` starts in 4–5 s on a busy 2-core machine; these budgets leave room for that. */
const START_MS = 60_000;

/** `agent-manager mcp` as a client spawns it: the built CLI, one session over stdin/stdout. */
describe('MCP over stdio (agent-manager mcp)', () => {
  let dir: string;
  let database: FreshDatabase;
  let client: Client;
  let stderr = '';
  const errors: Error[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agent-manager-stdio-'));
    database = await freshDatabaseUrl();
    client = await connectStdio(['--toolsets', 'revisions,benchmrks'], testEnv(dir, { LOG_LEVEL: 'log', DATABASE_URL: database.url }), {
      onStderr: (text) => (stderr += text),
      onError: (error) => errors.push(error),
    });
  }, 180_000);

  afterAll(async () => {
    await client?.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the selected toolsets with their instructions', async () => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['get_info', 'list_server_toolsets', 'create_agent', 'list_agent_revisions', 'rollback_agent']));
    expect(client.getInstructions()).toContain('## Revisions');
    const toolsets = await call(client, 'list_server_toolsets');
    expect(toolsets.structuredContent).toMatchObject({ active: ['meta', 'agents', 'revisions', 'blueprints'], unknown: ['benchmrks'] });
  });

  it('speaks of --toolsets, not of a URL, when it tells how to select toolsets', async () => {
    const toolsets = await call(client, 'list_server_toolsets');
    const howTo = (toolsets.structuredContent as { how_to_select: string }).how_to_select;
    expect(howTo).toContain('--toolsets only=a,b');
    expect(howTo).not.toMatch(/URL|reconnect/i);
    const missing = await call(client, 'no_such_tool');
    expect(missing.structuredContent).toMatchObject({ error: { code: 'not_found' } });
    expect(text(missing)).toContain('--toolsets');
    expect(text(missing)).not.toContain('URL');
  });

  it('creates as a dry run with the rendered Agent', async () => {
    const result = await call(client, 'create_agent', { name: 'stdio-helper', namespace: 'agents', modelConfig: 'm', toolset: ['preset:read-only', 'server:github'], dryRun: true });
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { manifests: string }).manifests).toContain('preset:read-only,server:github');
  });

  it('reads arguments of more than one pipe read whole, whatever byte a read ends on (characters of 4 bytes)', async () => {
    // 80 KB of 4-byte characters take more than one read of stdin; the prefixes move where a read ends by one byte each.
    for (const prefix of ['', 'a', 'ab', 'abc']) {
      const systemMessage = prefix + '🦊'.repeat(19_990);
      const result = await call(client, 'create_agent', { name: 'stdio-fox', namespace: 'agents', modelConfig: 'm', toolset: ['preset:read-only'], systemMessage, dryRun: true });
      expect(result.isError).toBeFalsy();
      expect((result.structuredContent as { values: { systemMessage: string } }).values.systemMessage === systemMessage).toBe(true);
    }
  }, START_MS);

  it('refuses as the HTTP door does', async () => {
    const cap = await call(client, 'create_agent', { name: 'x', namespace: 'agents', modelConfig: 'm', toolset: OVER_CAP });
    expect(cap.structuredContent).toMatchObject({ error: { code: 'invalid_request' } });
    expect(text(cap)).toContain('32');
    const legacy = await call(client, 'update_agent', { namespace: 'agents', name: 'x', toolNames: ['a'] });
    expect(legacy.structuredContent).toMatchObject({ error: { code: 'invalid_request', message: TOOLNAMES_MESSAGE } });
  });

  it('validates, and fails a real write with backend_error when there is no cluster', async () => {
    const valid = await call(client, 'validate_agent', { name: 'stdio-helper', namespace: 'agents', modelConfig: 'm', toolset: ['preset:none'] });
    expect(valid.structuredContent).toMatchObject({ valid: true });
    const write = await call(client, 'create_agent', { name: 'stdio-helper', namespace: 'agents', modelConfig: 'm', toolset: ['preset:none'] });
    expect(write.structuredContent).toMatchObject({ error: { code: 'backend_error' } });
  }, START_MS);

  it('keeps stdout for MCP and stderr quiet: JSON lines, warnings and errors only, no REST routes, no colour on a pipe', () => {
    expect(errors).toEqual([]);
    // LOG_LEVEL=log, yet over stdio only the warning about the unknown toolset is written.
    expect(stderr).toContain('unknown toolset benchmrks asked for');
    expect(stderr).not.toMatch(/Mapped \{|RoutesResolver|RouterExplorer/);
    expect(stderr).not.toContain('serving MCP over stdio');
    expect(stderr).not.toContain('\u001b[');
    const lines = stderr.split('\n').filter((line) => line.length > 0).map((line) => JSON.parse(line) as { level: string; door?: string });
    expect(lines.filter((line) => line.level !== 'warn' && line.level !== 'error')).toEqual([]);
    // The failed write's warning names its call (the door, the operation), as on HTTP.
    expect(lines).toContainEqual(expect.objectContaining({ level: 'warn', door: 'mcp-stdio', operation: 'create_agent', agent: 'agents/stdio-helper' }));
  });

  it('answers a line that is not JSON with -32700 and one that is not JSON-RPC with -32600, then goes on serving, started from another directory', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'agent-manager-stdio-lines-'));
    try {
      const lines = await new Promise<string[]>((resolve, reject) => {
        // As an MCP client spawns it: from its own directory, not agent-manager's (the chart and helm are found anyway).
        const child = execFile(process.execPath, [bin, 'mcp'], { cwd: scratch, env: testEnv(scratch) }, (error, out) =>
          error ? reject(error) : resolve(out.split('\n').filter((l) => l.length > 0)),
        );
        let seen = '';
        child.stdout?.on('data', (chunk: Buffer) => {
          seen += chunk.toString();
          if (seen.split('\n').length > 4) child.stdin?.end(); // all four answered: close the session
        });
        child.stdin?.write('{"jsonrpc": "2.0", "id": 1, "method": \n');
        child.stdin?.write('{"hello": "world"}\n');
        child.stdin?.write('{"jsonrpc":"2.0","id":7,"method":"ping"}\n');
        const dryRun = { name: 'from-elsewhere', namespace: 'agents', modelConfig: 'm', toolset: ['preset:none'], dryRun: true };
        child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'create_agent', arguments: dryRun } })}\n`);
      });
      const answers = lines.map((l) => JSON.parse(l) as { id: unknown; error?: { code: number; message: string }; result?: unknown });
      expect(answers).toEqual([
        { jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringMatching(/^Parse error/) } },
        { jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/^Invalid Request/) } },
        { jsonrpc: '2.0', id: 7, result: {} },
        { jsonrpc: '2.0', id: 8, result: expect.objectContaining({ structuredContent: expect.objectContaining({ dryRun: true, manifests: expect.stringContaining('kind: Agent') }) }) },
      ]);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }, START_MS);

  it('stops at start on an unknown MCP_DEFAULT_TOOLSETS, naming the variable', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'agent-manager-stdio-bad-'));
    try {
      const outcome = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = execFile(process.execPath, [bin, 'mcp'], { cwd: root, env: testEnv(scratch, { MCP_DEFAULT_TOOLSETS: 'benchmrks' }) }, (error, _out, err) =>
          resolve({ code: error ? (error.code as number) : 0, stderr: err }),
        );
        child.stdin?.end();
      });
      expect(outcome.code).not.toBe(0);
      expect(outcome.stderr).toContain('MCP_DEFAULT_TOOLSETS="benchmrks": no toolset is named benchmrks');
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }, START_MS);
});
