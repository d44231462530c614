import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ApiProperty } from '@app/common';
import { ANONYMOUS } from '@app/auth';
import { McpRegistry, type ToolSpec } from '@app/mcp';
import { McpServerFactory } from '../../libs/mcp/src/mcp-server.factory.js';
import { call, connect, startApp, type McpTestApp } from './mcp-support.js';

class EchoInputDto {
  @ApiProperty({ description: 'What to say back' }) text: string;
}

class EchoResultDto {
  @ApiProperty() said: string;
}

const READ: ToolSpec['annotations'] = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/** A tool a module adds while the service runs (as blueprints will). */
function echoTool(toolset: string): ToolSpec {
  return {
    name: 'echo_blueprint',
    title: 'Echo',
    toolset,
    description: 'Says the text back.',
    annotations: READ,
    input: [EchoInputDto],
    output: EchoResultDto,
    run: async (args) => ({ said: String(args.text) }),
  };
}

/** Resolves with the number of tools/list_changed notifications seen once `count` have arrived. */
function listChanges(client: Client): { seen: () => number; next: () => Promise<void> } {
  let seen = 0;
  let waiters: (() => void)[] = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    seen++;
    const ready = waiters;
    waiters = [];
    ready.forEach((resolve) => resolve());
  });
  return { seen: () => seen, next: () => new Promise<void>((resolve) => waiters.push(resolve)) };
}

describe('MCP tool registry at run time (Streamable HTTP, real SDK client)', () => {
  let service: McpTestApp;
  let registry: McpRegistry;

  beforeAll(async () => {
    service = await startApp();
    registry = service.app.get(McpRegistry);
  }, 60_000);

  afterAll(async () => {
    await service?.close();
  });

  it('tells no registry change to a server closed before it was connected (its client left while the store was read)', async () => {
    const factory = service.app.get(McpServerFactory);
    const [left, stays] = await Promise.all([factory.create(registry.parse(''), 'mcp-http', ANONYMOUS), factory.create(registry.parse(''), 'mcp-http', ANONYMOUS)]);
    const told: string[] = [];
    left.sendToolListChanged = async () => void told.push('left');
    stays.sendToolListChanged = async () => void told.push('stays');
    await left.close();
    registry.addTools([echoTool('agents')])();
    expect(told.length).toBeGreaterThan(0);
    expect(told.filter((server) => server === 'left')).toEqual([]);
    await stays.close();
  });

  it('announces tools.listChanged', async () => {
    const client = await connect(service.base);
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
    await client.close();
  });

  it('shows a tool added to an active toolset in tools/list, with its schemas, after telling the session; removed, it is gone', async () => {
    const client = await connect(service.base);
    const changes = listChanges(client);
    const before = (await client.listTools()).tools.map((t) => t.name);
    expect(before).not.toContain('echo_blueprint');

    const added = changes.next();
    const remove = registry.addTools([echoTool('agents')]);
    await added;
    const tools = (await client.listTools()).tools;
    const echo = tools.find((t) => t.name === 'echo_blueprint');
    expect(echo?.inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false });
    // The agents toolset comes last in a default session: the new tool follows its tools.
    expect(tools.map((t) => t.name)).toEqual([...before, 'echo_blueprint']);
    expect((await call(client, 'echo_blueprint', { text: 'hello' })).structuredContent).toEqual({ said: 'hello' });

    const removed = changes.next();
    remove();
    await removed;
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(before);
    const gone = await call(client, 'echo_blueprint', { text: 'hello' });
    expect(gone.isError).toBe(true);
    expect(gone.structuredContent).toMatchObject({ error: { code: 'not_found' } });
    expect(changes.seen()).toBe(2);
    await client.close();
  });

  it('serves a toolset added at run time to the sessions that select it, and not to the others', async () => {
    const opted = await connect(service.base, '?extras');
    const plain = await connect(service.base);
    const optedChanges = listChanges(opted);
    const told = optedChanges.next();
    registry.addToolset({ name: 'extras', title: 'Extras', description: 'Run-time tools', instructions: '', default: false, always: false });
    registry.addTools([echoTool('extras')]);
    await told;
    try {
      expect((await opted.listTools()).tools.map((t) => t.name)).toContain('echo_blueprint');
      expect((await plain.listTools()).tools.map((t) => t.name)).not.toContain('echo_blueprint');
      expect((await call(opted, 'list_server_toolsets')).structuredContent).toMatchObject({ active: ['meta', 'agents', 'blueprints', 'extras'], unknown: [] });
    } finally {
      registry.removeToolset('extras');
    }
    expect((await opted.listTools()).tools.map((t) => t.name)).not.toContain('echo_blueprint');
    await Promise.all([opted.close(), plain.close()]);
  });
});
