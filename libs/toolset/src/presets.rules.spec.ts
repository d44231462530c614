import { describe, expect, it } from '@jest/globals';
import { checkMusterConfig, checkPresets, globProblem, knownPresets, presetNearMiss, unknownPresets } from './presets.rules.js';

const EXACTLY_ONE = 'must set exactly one of tool, pattern, server, workflow, readOnly, preset, label';

/** Muster's own start-up rules (internal/toolset/preset.go), one row per rule and message, in Muster's words. */
describe(checkPresets.name, () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ['redefining read-only', { 'read-only': { include: [{ pattern: '*' }] } }, ['toolsetPresets: preset "read-only" is built in and cannot be redefined']],
    ['redefining none', { none: {} }, ['toolsetPresets: preset "none" is built in and cannot be redefined']],
    ['redefining full', { full: { include: [{ tool: 'x' }] } }, ['toolsetPresets: preset "full" is built in and cannot be redefined']],
    ['a name outside letters, digits, . _ -', { 'has space': { include: [{ pattern: '*' }] } }, [`toolsetPresets: preset name "has space" is invalid; use letters, digits, '.', '_' or '-'`]],
    ['a rule with no key', { x: { include: [{}] } }, [`toolsetPresets: preset "x" include[0] ${EXACTLY_ONE}`]],
    ['a rule that is null', { x: { include: [{ server: 'a' }, { tool: 'b' }, null] } }, [`toolsetPresets: preset "x" include[2] ${EXACTLY_ONE}`]],
    ['a rule with two keys', { x: { include: [{ tool: 'a', server: 'b' }] } }, [`toolsetPresets: preset "x" include[0] ${EXACTLY_ONE}`]],
    ['a rule whose only key is unknown (or empty)', { x: { exclude: [{ tools: 'a', tool: '' }] } }, [`toolsetPresets: preset "x" exclude[0] ${EXACTLY_ONE}`]],
    ['a pattern that does not compile', { x: { include: [{ pattern: '[a' }] } }, ['toolsetPresets: preset "x" include[0] pattern "[a" is invalid: syntax error in pattern']],
    ['readOnly: false', { x: { include: [{ readOnly: false }] } }, ['toolsetPresets: preset "x" include[0] readOnly: false selects nothing; omit the rule']],
    ['exclude composing a preset', { x: { include: [{ pattern: '*' }], exclude: [{ preset: 'none' }] } }, ['toolsetPresets: preset "x" exclude[0] cannot compose a preset in exclude; only include may']],
    ['a label rule off its grammar', { x: { include: [{ label: 'team==a' }] } }, ['toolsetPresets: preset "x" include[0] label "team==a" is invalid; expected <key>=<value> or <key>']],
    ['composition naming an unknown preset', { x: { include: [{ preset: 'nope' }] } }, ['toolsetPresets: preset "x" includes unknown preset "nope"; known presets: read-only, none, full, x']],
    ['compositions that cycle', { a: { include: [{ preset: 'b' }] }, b: { include: [{ preset: 'a' }] } }, ['toolsetPresets: preset composition cycles: a -> b -> a']],
    ['a preset including itself', { a: { include: [{ preset: 'a' }] } }, ['toolsetPresets: preset composition cycles: a -> a']],
  ])('refuses %s in Muster\'s words', (_, config, errors) => {
    expect(checkPresets(config).errors).toEqual(errors);
  });

  it.each<[string, unknown, string]>([
    ['a list for toolsetPresets', [], 'toolsetPresets must be a map of preset names to presets, not []'],
    ['a preset that is a string', { x: 'server:a' }, 'toolsetPresets: preset "x" must be a map with description, include and exclude, not "server:a"'],
    ['include that is not a list', { x: { include: { server: 'a' } } }, 'toolsetPresets: preset "x" include must be a list of rules, e.g. [{server: <name>}], not {"server":"a"}'],
    ['a rule written as a selector', { x: { include: ['server:a'] } }, 'toolsetPresets: preset "x" include[0] must be a map with one key, e.g. {tool: <name>}, not "server:a"'],
    ['readOnly that is not a boolean', { x: { include: [{ readOnly: 'yes' }] } }, 'toolsetPresets: preset "x" include[0] readOnly must be true, not "yes"'],
    ['a rule key holding a list', { x: { include: [{ tool: ['a'] }] } }, 'toolsetPresets: preset "x" include[0] tool must be a string, not ["a"]'],
  ])('refuses %s (what Muster\'s YAML decoder refuses, in this project\'s words)', (_, config, error) => {
    expect(checkPresets(config).errors).toEqual([error]);
  });

  it('answers every error at once, where Muster stops at the first', () => {
    const { errors, presets } = checkPresets({
      'read-only': {},
      b: { include: [{ preset: 'c' }, { pattern: '[' }] },
      c: { include: [{ preset: 'b' }, { preset: 'ghost' }], exclude: [{ preset: 'none' }, {}] },
      d: { include: [{ readOnly: false }, { preset: 'ghost' }] },
    });
    expect(errors).toEqual([
      'toolsetPresets: preset "b" include[1] pattern "[" is invalid: syntax error in pattern',
      'toolsetPresets: preset "c" exclude[0] cannot compose a preset in exclude; only include may',
      `toolsetPresets: preset "c" exclude[1] ${EXACTLY_ONE}`,
      'toolsetPresets: preset "d" include[0] readOnly: false selects nothing; omit the rule',
      // in name order, as Muster checks them (Go's byte order)
      'toolsetPresets: preset "read-only" is built in and cannot be redefined',
      // the cycle once (from b, the first preset on it), each unknown preset once per preset including it
      'toolsetPresets: preset composition cycles: b -> c -> b',
      'toolsetPresets: preset "c" includes unknown preset "ghost"; known presets: read-only, none, full, b, c, d',
      'toolsetPresets: preset "d" includes unknown preset "ghost"; known presets: read-only, none, full, b, c, d',
    ]);
    expect(presets.map((preset) => preset.name)).toEqual(['b', 'c', 'd']);
  });

  it('accepts every rule shape Muster accepts, composition of built-ins included, and keeps the descriptions', () => {
    const check = checkPresets({
      infrastructure: {
        description: 'Every infrastructure server',
        include: [
          { server: 'mcp-kubernetes' },
          { pattern: 'x_mcp-prometheus_*' },
          { workflow: 'incident-triage' },
          { tool: 'core_workflow_list' },
          { readOnly: true },
          { preset: 'none' },
          { label: 'agent-platform.giantswarm.io/tool-group=infrastructure' },
          { label: 'team' },
        ],
        exclude: [{ tool: 'x_mcp-kubernetes_delete' }],
      },
      'agent-platform': { include: [{ preset: 'infrastructure' }, { pattern: 'core_[a-z]*' }] },
      empty: null,
    });
    expect(check).toEqual({
      errors: [],
      presets: [
        { name: 'agent-platform', description: null },
        { name: 'empty', description: null },
        { name: 'infrastructure', description: 'Every infrastructure server' },
      ],
    });
    expect(checkPresets(undefined)).toEqual({ errors: [], presets: [] });
  });
});

describe(globProblem.name, () => {
  it.each(['*', 'x_*', 'core_?', '[abc]*', '[^a-z]x', '[a\\]]', 'a]b', '\\*', '[*]'])('compiles %s as Go does', (pattern) => {
    expect(globProblem(pattern)).toBeUndefined();
  });

  it.each(['[', '[a', '[]', '[^]', '[a-', '[a-]', '[-a]', 'x\\', '*[z', '[\\'])('refuses %s as Go does', (pattern) => {
    expect(globProblem(pattern)).toBe('syntax error in pattern');
  });
});

describe(checkMusterConfig.name, () => {
  it('reads toolsetPresets at the top of a config.yaml and leaves the rest of it alone', () => {
    const text = ['aggregator:', '  port: 8090', 'toolsetPresets:', '  ops:', '    description: Ops', '    include:', '      - server: k8s', '      - {}', ''].join('\n');
    expect(checkMusterConfig(text)).toEqual({
      errors: [`toolsetPresets: preset "ops" include[1] ${EXACTLY_ONE}`],
      presets: [{ name: 'ops', description: 'Ops' }],
    });
  });

  it('answers a config without toolsetPresets (or an empty one) as only the built-ins', () => {
    expect(checkMusterConfig('aggregator: {}\n')).toEqual({ errors: [], presets: [] });
    expect(checkMusterConfig('')).toEqual({ errors: [], presets: [] });
  });

  it.each([
    ['text that is not YAML', 'toolsetPresets: [\n', /^the config is not valid YAML: /u],
    ['a key written twice', 'toolsetPresets:\n  a: {}\n  a: {}\n', /^the config is not valid YAML: .*unique/iu],
    ['a document that is not a map', '- toolsetPresets\n', /^the config must be a map with toolsetPresets: at its top, not \["toolsetPresets"\]$/u],
  ])('answers %s as its one error', (_, text, error) => {
    const { errors } = checkMusterConfig(text);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(error);
  });
});

describe(unknownPresets.name, () => {
  const known = ['read-only', 'none', 'full', 'infrastructure'];

  it("refuses a preset the installation lacks with Muster's message, the toolset as given", () => {
    expect(unknownPresets(['preset:read-only', 'preset:foo'], known)).toEqual([
      {
        path: 'toolset[1]',
        index: 1,
        selector: 'preset:foo',
        message: 'toolset [preset:read-only,preset:foo] names unknown preset "foo"; known presets: read-only, none, full, infrastructure',
      },
    ]);
  });

  it.each([
    ['readonly', 'read-only'],
    ['Read_Only', 'read-only'],
    ['infrastucture', 'infrastructure'],
  ])('adds the near miss of %s', (name, near) => {
    expect(unknownPresets([`preset:${name}`], known)[0].message).toBe(
      `toolset [preset:${name}] names unknown preset "${name}"; known presets: read-only, none, full, infrastructure; did you mean "preset:${near}"? Preset names are exact`,
    );
  });

  it('passes known presets and other kinds', () => {
    expect(unknownPresets(['preset:read-only', 'preset:infrastructure', 'preset:none', 'preset:full', 'server:foo', 'tool:preset'], known)).toEqual([]);
  });
});

describe(presetNearMiss.name, () => {
  it('finds nothing in a name far from every known one, or in a short one', () => {
    expect(presetNearMiss('team-observability', ['read-only', 'none', 'full'])).toBeUndefined();
    expect(presetNearMiss('ful', ['read-only', 'none', 'full'])).toBeUndefined();
  });
});

describe(knownPresets.name, () => {
  it("lists Muster's built-ins first, then the configured presets, or agent-platform's when none are configured", () => {
    expect(knownPresets([{ name: 'ops', description: 'Ops' }])).toEqual([
      { name: 'read-only', description: 'Every tool its server annotates read-only, plus every workflow whose step tools are all read-only', source: 'muster' },
      { name: 'none', description: 'No tools', source: 'muster' },
      { name: 'full', description: "The whole catalogue, including muster's core tools", source: 'muster' },
      { name: 'ops', description: 'Ops', source: 'configured' },
    ]);
    expect(knownPresets(undefined).map((preset) => `${preset.name}:${preset.source}`)).toEqual([
      'read-only:muster', 'none:muster', 'full:muster', 'infrastructure:platform', 'agent-platform:platform',
    ]);
  });
});
