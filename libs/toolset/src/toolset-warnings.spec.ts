import { describe, expect, it } from '@jest/globals';
import { toolsetWarnings } from './toolset-warnings.js';

describe(toolsetWarnings.name, () => {
  it.each<[string, string]>([
    ['preset:read_only', 'read-only'],
    ['preset:Read-Only', 'read-only'],
    ['preset:readonly', 'read-only'],
    ['preset:NONE', 'none'],
    ['preset:agent_platform', 'agent-platform'],
    ['preset:Infrastructure', 'infrastructure'],
  ])('warns that %s is not a shipped preset', (selector, shipped) => {
    const name = selector.slice('preset:'.length);
    expect(toolsetWarnings(['tool:x', selector])).toEqual([
      {
        path: 'toolset[1]',
        index: 1,
        selector,
        message: `toolset ["tool:x","${selector}"]: preset "${name}" at index 1 is not a shipped preset; did you mean "preset:${shipped}"? Preset names are exact`,
      },
    ]);
  });

  it.each<[string, string[]]>([
    ['shipped presets', ['preset:read-only', 'preset:full', 'preset:infrastructure', 'preset:agent-platform']],
    ['preset:none alone', ['preset:none']],
    ['an installation preset', ['preset:team-observability']],
    ['other kinds named like a preset', ['server:read_only', 'tool:Read-Only']],
    ['selectors that fail the grammar (validateToolset reports those)', ['preset: read_only', 'Preset:read_only']],
  ])('has nothing to say about %s', (_, toolset) => {
    expect(toolsetWarnings(toolset)).toEqual([]);
  });

  it('warns about a selector written twice, naming both indexes, and keeps the list as written', () => {
    const toolset = ['tool:a', 'server:github', 'tool:a'];
    expect(toolsetWarnings(toolset)).toEqual([
      {
        path: 'toolset[2]',
        index: 2,
        selector: 'tool:a',
        message: 'toolset ["tool:a","server:github","tool:a"]: selector "tool:a" at index 2 repeats index 0 and adds nothing; remove it',
      },
    ]);
    expect(toolset).toEqual(['tool:a', 'server:github', 'tool:a']);
  });

  it('warns about preset:none beside other selectors', () => {
    expect(toolsetWarnings(['server:github', 'preset:none'])).toEqual([
      {
        path: 'toolset[1]',
        index: 1,
        selector: 'preset:none',
        message:
          'toolset ["server:github","preset:none"]: "preset:none" (no tools) at index 1 stands beside other selectors, which contradicts it: ' +
          'send ["preset:none"] alone for a chat-only agent, or remove it',
      },
    ]);
  });
});
