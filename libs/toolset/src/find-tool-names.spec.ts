import { describe, expect, it } from '@jest/globals';
import { findToolNames, toolNamesViolations } from './find-tool-names.js';

const REMOVED =
  'toolNames never narrowed anything against muster (kagent filters muster\'s meta-tools only); declare a toolset instead, e.g. toolset: ["preset:read-only"]';

describe(findToolNames.name, () => {
  it.each<[string, unknown, string[]]>([
    ['at the top level', { name: 'a', toolNames: ['list_tools'] }, ['toolNames']],
    ['under muster', { muster: { name: 'muster', toolNames: ['call_tool'] } }, ['muster.toolNames']],
    ['as null', { toolNames: null }, ['toolNames']],
    ['as an empty list', { toolNames: [] }, ['toolNames']],
    ['as a key holding undefined', { muster: { toolNames: undefined } }, ['muster.toolNames']],
    ['in both places', { toolNames: [], muster: { toolNames: null } }, ['toolNames', 'muster.toolNames']],
    ['nowhere', { name: 'a', toolset: ['preset:read-only'], muster: { name: 'muster' } }, []],
    ['nowhere, in a body that is not an object', ['toolNames'], []],
    ['nowhere, in no body', undefined, []],
    ['nowhere, when muster is not an object', { muster: 'toolNames' }, []],
  ])('finds toolNames %s', (_, body, paths) => {
    expect(findToolNames(body)).toEqual(paths);
  });
});

describe(toolNamesViolations.name, () => {
  it.each<[string, unknown]>([
    ['top level', { toolNames: ['list_tools'] }],
    ['muster', { muster: { toolNames: ['call_tool'] } }],
    ['null', { toolNames: null }],
    ['[]', { muster: { toolNames: [] } }],
  ])('refuses toolNames (%s) with exactly the removal message', (_, body) => {
    const violations = toolNamesViolations(body);
    expect(violations).toHaveLength(1);
    expect(violations[0]?.message).toBe(REMOVED);
  });

  it('refuses each place it appears', () => {
    expect(toolNamesViolations({ toolNames: null, muster: { toolNames: [] } })).toEqual([
      { path: 'toolNames', message: REMOVED },
      { path: 'muster.toolNames', message: REMOVED },
    ]);
  });
});
