import { describe, expect, it } from '@jest/globals';
import { isEmptySelection, parseSelection, resolveSelection, type ToolsetDeclaration } from './toolset-selection.js';

const declare = (name: string, flags: Partial<ToolsetDeclaration> = {}): ToolsetDeclaration => ({
  name,
  title: name,
  description: '',
  instructions: '',
  default: false,
  always: false,
  ...flags,
});

/** As agent-manager declares them: meta always on, agents default, revisions opt-in. */
const TOOLSETS = [declare('meta', { default: true, always: true }), declare('agents', { default: true }), declare('revisions')];

describe(parseSelection.name, () => {
  it.each<[string, string, string[], { only: string[] | null; add: string[]; without: string[] }]>([
    ['nothing', '', [], { only: null, add: [], without: [] }],
    ['a bare flag', 'revisions', [], { only: null, add: ['revisions'], without: [] }],
    ['a leading ?', '?revisions', [], { only: null, add: ['revisions'], without: [] }],
    ['a name with a value', 'revisions=1', [], { only: null, add: ['revisions'], without: [] }],
    ['toolsets=a,b', 'toolsets=agents,revisions', [], { only: null, add: ['agents', 'revisions'], without: [] }],
    ['only=', 'only=revisions', [], { only: ['revisions'], add: [], without: [] }],
    ['only= twice', 'only=a&only=b,a', [], { only: ['a', 'b'], add: [], without: [] }],
    ['an empty only=', 'only=', [], { only: [], add: [], without: [] }],
    ['without=', 'without=agents', [], { only: null, add: [], without: ['agents'] }],
    ['comma-separated bare flags', 'a,b', [], { only: null, add: ['a', 'b'], without: [] }],
    ['spaces and empty names', 'toolsets=%20a%20,,b', [], { only: null, add: ['a', 'b'], without: [] }],
    ['duplicates once', 'a&a=1&toolsets=a', [], { only: null, add: ['a'], without: [] }],
    ['an ignored key', 'scopes=data:read&revisions', ['scopes'], { only: null, add: ['revisions'], without: [] }],
    ['an ignored key alone', 'scopes=x', ['scopes'], { only: null, add: [], without: [] }],
    ['everything together', 'revisions&without=agents&toolsets=x', [], { only: null, add: ['revisions', 'x'], without: ['agents'] }],
  ])('reads %s', (_, query, ignored, expected) => {
    expect(parseSelection(query, ignored)).toEqual(expected);
  });

  it('reads pairs as well as a string', () => {
    expect(parseSelection([['only', 'a'], ['b', '']])).toEqual({ only: ['a'], add: ['b'], without: [] });
  });
});

describe(resolveSelection.name, () => {
  it.each<[string, string, string[], string[]]>([
    ['the defaults for a bare /mcp', '', ['meta', 'agents'], []],
    ['a bare flag adding an opt-in toolset', 'revisions', ['meta', 'agents', 'revisions'], []],
    ['a name with a value', 'revisions=1', ['meta', 'agents', 'revisions'], []],
    ['toolsets=', 'toolsets=revisions', ['meta', 'agents', 'revisions'], []],
    ['only= plus the always toolsets', 'only=revisions', ['meta', 'revisions'], []],
    ['only= with a bare flag', 'only=revisions&agents', ['meta', 'agents', 'revisions'], []],
    ['an empty only=: the always toolsets alone', 'only=', ['meta'], []],
    ['without= a default', 'without=agents', ['meta'], []],
    ['without= cannot remove an always toolset', 'without=meta', ['meta', 'agents'], []],
    ['an unknown name: the defaults, reported', 'benchmrks', ['meta', 'agents'], ['benchmrks']],
    ['an unknown name with a value', 'benchmrks=1', ['meta', 'agents'], ['benchmrks']],
    ['unknown names anywhere, once each', 'only=nope,revisions&without=gone&nope', ['meta', 'revisions'], ['nope', 'gone']],
    ['names are case-sensitive', 'Revisions', ['meta', 'agents'], ['Revisions']],
  ])('gives %s', (_, query, active, unknown) => {
    expect(resolveSelection(parseSelection(query), TOOLSETS)).toEqual({ active, unknown });
  });

  it.each<[string, string, string, string[]]>([
    ['a bare /mcp the deployment default', '', 'revisions', ['meta', 'agents', 'revisions']],
    ['a bare /mcp a deployment only=', '', 'only=revisions', ['meta', 'revisions']],
    ['a URL that names anything what it says', 'without=agents', 'revisions', ['meta']],
    ['a URL with only ignored keys the deployment default', 'scopes=x', 'only=agents', ['meta', 'agents']],
  ])('gives %s', (_, query, fallback, active) => {
    const selection = resolveSelection(parseSelection(query, ['scopes']), TOOLSETS, parseSelection(fallback));
    expect(selection.active).toEqual(active);
  });

  it('lists active toolsets in declaration order, whatever the URL order', () => {
    expect(resolveSelection(parseSelection('only=revisions,agents'), TOOLSETS).active).toEqual(['meta', 'agents', 'revisions']);
  });
});

describe(isEmptySelection.name, () => {
  it.each<[string, boolean]>([
    ['', true],
    ['a', false],
    ['only=', false],
    ['without=a', false],
  ])('%j → %s', (query, empty) => {
    expect(isEmptySelection(parseSelection(query))).toBe(empty);
  });
});
