import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { freshDatabaseUrl, type FreshDatabase } from '../pg/fresh-database.js';
import { connectStdio, testEnv, text } from '../mcp/mcp-support.js';
import { authEnv } from './auth-support.js';


/** The local user of `agent-manager mcp` may read agents in team-a and validate there, but not create. */
const POLICY = `
roles:
  reader: [get_info, list_server_toolsets, list_agents, get_agent, validate_agent]
bindings:
  - role: reader
    subjects: ["local:ops"]
    namespaces: ["team-a"]
`;

/** stdio with authentication on: the local user (AUTH_STDIO_SUBJECT) goes through the same policy as every other caller. */
describe('MCP over stdio with authentication on', () => {
  let dir: string;
  let database: FreshDatabase;
  let client: Client;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agent-manager-stdio-auth-'));
    database = await freshDatabaseUrl();
    client = await connectStdio([], testEnv(dir, { ...authEnv(dir, undefined, POLICY), AUTH_STDIO_SUBJECT: 'local:ops', DATABASE_URL: database.url }));
  }, 180_000);

  afterAll(async () => {
    await client?.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists only the tools the policy grants the local user, and refuses another with the exact tool_not_allowed text', async () => {
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(['get_info', 'list_server_toolsets', 'list_agents', 'get_agent', 'validate_agent']);
    const refused = await client.callTool({ name: 'create_agent', arguments: { name: 'x', namespace: 'team-a', modelConfig: 'm', toolset: ['preset:none'], dryRun: true } });
    expect(refused.isError).toBe(true);
    expect(text(refused as CallToolResult)).toBe(
      `tool_not_allowed: "create_agent" is not in this session's allowed tool set. Allowed tools: get_info, list_server_toolsets, list_agents, get_agent, validate_agent`,
    );
  });

  it('applies namespaces and the write a validation stands for, naming the local user', async () => {
    const elsewhere = await client.callTool({ name: 'get_agent', arguments: { namespace: 'team-b', name: 'helper' } });
    expect(elsewhere.isError).toBe(true);
    expect(text(elsewhere as CallToolResult)).toMatch(/^get_agent in namespace "team-b" is not granted to local:ops/);

    const validate = await client.callTool({ name: 'validate_agent', arguments: { name: 'x', namespace: 'team-a', modelConfig: 'm', toolset: ['preset:none'] } });
    expect(validate.isError).toBe(true);
    expect(text(validate as CallToolResult)).toMatch(/^create_agent in namespace "team-a" is not granted to local:ops/);

    const listed = await client.callTool({ name: 'list_agents', arguments: { namespace: 'team-a' } });
    expect(listed.isError).toBeFalsy();
    expect(listed.structuredContent).toMatchObject({ items: [] });
  });
});
