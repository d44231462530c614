import { describe, expect, it } from '@jest/globals';
import type { AppConfig } from '@app/common';
import { McpRegistry } from './mcp.registry.js';
import type { ToolSpec } from './tool-spec.js';
import type { ToolsetDeclaration } from './toolset-selection.js';

const config = (defaults = '') => ({ MCP_DEFAULT_TOOLSETS: defaults, MCP_IGNORED_QUERY_KEYS: [] }) as unknown as AppConfig;

const toolset = (name: string, flags: Partial<ToolsetDeclaration> = {}): ToolsetDeclaration => ({
  name,
  title: name,
  description: '',
  instructions: `use ${name}`,
  default: false,
  always: false,
  ...flags,
});

class Out {}

const tool = (name: string, set: string): ToolSpec => ({
  name,
  title: name,
  toolset: set,
  description: '',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: [],
  output: Out,
  run: async () => ({}),
});

describe(McpRegistry.name, () => {
  it('lists the transport\'s own tool, then contributed tools by toolset, and tells listeners of every change', () => {
    const registry = new McpRegistry(config());
    let changes = 0;
    registry.onChange(() => changes++);
    registry.addToolset(toolset('agents', { default: true }));
    const remove = registry.addTools([tool('get_agent', 'agents'), tool('get_info', 'meta')]);
    const all = registry.select('');
    expect(registry.specsFor(all).map((s) => s.name)).toEqual(['get_info', 'list_server_toolsets', 'get_agent']);
    remove();
    expect(registry.specsFor(all).map((s) => s.name)).toEqual(['list_server_toolsets']);
    expect(changes).toBe(3);
  });

  it.each<[string, (r: McpRegistry) => void, RegExp]>([
    ['a tool of a toolset nobody added', (r) => r.addTools([tool('x', 'nowhere')]), /no toolset named nowhere \(add it first\)/],
    ['a tool name twice', (r) => r.addTools([tool('list_server_toolsets', 'meta')]), /list_server_toolsets is already registered/],
    ['a toolset name twice', (r) => r.addToolset(toolset('meta')), /meta is already registered/],
    ['removing the transport\'s own toolset', (r) => r.removeToolset('meta'), /meta is the transport's own/],
  ])('refuses %s', (_, act, message) => {
    expect(() => act(new McpRegistry(config()))).toThrow(message);
  });

  it('removes a toolset with its tools; a session that selected it resolves without it', () => {
    const registry = new McpRegistry(config());
    registry.addToolset(toolset('blueprints'));
    registry.addTools([tool('run_blueprint', 'blueprints')]);
    const selection = registry.parse('blueprints');
    expect(registry.resolve(selection)).toEqual({ active: ['meta', 'blueprints'], unknown: [] });
    expect(registry.instructions(registry.resolve(selection))).toContain('use blueprints');
    registry.removeToolset('blueprints');
    expect(registry.resolve(selection)).toEqual({ active: ['meta'], unknown: ['blueprints'] });
    expect(registry.find('run_blueprint', registry.resolve(selection))).toBeUndefined();
  });

  it('says how to select toolsets in the words of the door', () => {
    const registry = new McpRegistry(config());
    const toolsets = registry.select('');
    expect(registry.report(toolsets, 'mcp-http').how_to_select).toMatch(/^Reconnect with the toolset in the URL/);
    expect(registry.report(toolsets, 'mcp-stdio').how_to_select).toMatch(/^Restart agent-manager mcp with --toolsets/);
  });

  it('stops the start when MCP_DEFAULT_TOOLSETS names a toolset no module added', () => {
    const registry = new McpRegistry(config('revisions'));
    expect(() => registry.onApplicationBootstrap()).toThrow('MCP_DEFAULT_TOOLSETS="revisions": no toolset is named revisions; the toolsets are meta');
    registry.addToolset(toolset('revisions'));
    expect(() => registry.onApplicationBootstrap()).not.toThrow();
  });
});
