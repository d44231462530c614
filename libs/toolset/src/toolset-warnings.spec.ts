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
    ['shipped presets', ['preset:read-only', 'preset:none', 'preset:full', 'preset:infrastructure', 'preset:agent-platform']],
    ['an installation preset', ['preset:team-observability']],
    ['other kinds named like a preset', ['server:read_only', 'tool:Read-Only']],
    ['selectors that fail the grammar (validateToolset reports those)', ['preset: read_only', 'Preset:read_only']],
  ])('has nothing to say about %s', (_, toolset) => {
    expect(toolsetWarnings(toolset)).toEqual([]);
  });
});
