import { describe, expect, it } from '@jest/globals';
import { toolNotAllowed } from './tool-not-allowed.js';

describe(toolNotAllowed.name, () => {
  it.each([
    ['create_agent', ['get_info', 'list_agents'], 'tool_not_allowed: "create_agent" is not in this session\'s allowed tool set. Allowed tools: get_info, list_agents'],
    ['delete_agent', [], 'tool_not_allowed: "delete_agent" is not in this session\'s allowed tool set. Allowed tools: (none)'],
    ['evil"\n', ['get_info'], 'tool_not_allowed: "evil\\"\\n" is not in this session\'s allowed tool set. Allowed tools: get_info'],
  ])('%j with %j', (name, allowed, text) => {
    expect(toolNotAllowed(name, allowed)).toBe(text);
  });

  it('names no cause, and shortens a huge name', () => {
    const text = toolNotAllowed('x'.repeat(10_000), ['get_info']);
    expect(text.length).toBeLessThan(250);
    expect(text).not.toMatch(/mode|role|policy|permission/i);
  });
});
