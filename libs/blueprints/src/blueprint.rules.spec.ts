import { describe, expect, it } from '@jest/globals';
import { TOOLNAMES_REMOVED_MESSAGE } from '@app/toolset';
import {
  bodyProblems,
  callProblems,
  conflictOf,
  invalidBody,
  mergeArguments,
  nameProblems,
  normalizeBody,
  upgradePatch,
  type BlueprintBody,
} from './blueprint.rules.js';
import { toolInputSchema } from './blueprint.schema.js';

const SERVED = ['create_agent', 'list_agents', 'get_info', 'list_blueprints'];

const HELPER: BlueprintBody = {
  description: 'An incident helper for one team',
  fixed: { modelConfig: 'secret-model', toolset: ['preset:read-only', 'workflow:incident-triage'], systemMessage: 'SECRET PROMPT', labels: { tier: 'gold' } },
  open: ['displayName', 'annotations'],
  defaults: { annotations: { 'example.com/team': 'sre' }, namespace: 'agents' },
};

describe('blueprint names', () => {
  it.each([
    ['incident_helper', true],
    ['a', true],
    ['a'.repeat(63), true],
    ['a'.repeat(64), false],
    ['Incident', false],
    ['incident-helper', false],
    ['_x', false],
    ['1x', false],
    ['', false],
  ])('%s → allowed: %s', (name, ok) => {
    expect(nameProblems(name, SERVED).length === 0).toBe(ok);
  });

  it.each(SERVED)('refuses %s: another tool the service serves', (name) => {
    expect(nameProblems(name, SERVED)).toEqual([{ path: 'name', message: expect.stringContaining('is the name of a tool agent-manager serves') }]);
  });
});

describe('the fixed/open partition', () => {
  const base = { description: 'd', fixed: { modelConfig: 'm' }, open: ['toolset'] };

  it.each<[string, object, string[]]>([
    ['a healthy body', base, []],
    ['name fixed', { ...base, fixed: { modelConfig: 'm', name: 'x' } }, ['fixed.name']],
    ['namespace fixed', { ...base, fixed: { modelConfig: 'm', namespace: 'x' } }, ['fixed.namespace']],
    ['both fixed and open', { ...base, open: ['toolset', 'modelConfig'] }, ['open']],
    ['toolset neither fixed nor open', { ...base, open: [] }, ['open']],
    ['an unknown open argument', { ...base, open: ['toolset', 'colour'] }, ['open[1]']],
    ['an argument listed twice', { ...base, open: ['toolset', 'toolset'] }, ['open[1]']],
    ['a default for a fixed argument', { ...base, defaults: { modelConfig: 'x' } }, ['defaults.modelConfig']],
    ['a default for name', { ...base, defaults: { name: 'x' } }, ['defaults.name']],
    ['no description', { ...base, description: '' }, ['description']],
  ])('%s', (_case, body, paths) => {
    expect(bodyProblems(body).map((p) => p.path)).toEqual(paths);
  });

  it('keeps name and namespace open whether or not they are listed', () => {
    expect(bodyProblems({ ...base, open: ['name', 'namespace', 'toolset'] })).toEqual([]);
    expect(normalizeBody({ ...base, open: ['name', 'namespace', 'toolset'] }).open).toEqual(['toolset']);
  });
});

describe('the fixed arguments are checked by the create rules', () => {
  it('names every problem at once, each under fixed.', () => {
    const problems = bodyProblems({
      description: 'd',
      fixed: { modelConfig: '', toolset: ['label:x', 'bogus'], labels: { 'app.kubernetes.io/name': 'x' }, annotations: { 'helm.sh/hook': 'x' }, systemMessage: 'x'.repeat(20_001) },
      open: [],
    });
    const paths = problems.map((p) => p.path);
    expect(paths).toEqual(expect.arrayContaining(['fixed.modelConfig', 'fixed.toolset[0]', 'fixed.toolset[1]', 'fixed.labels', 'fixed.annotations', 'fixed.systemMessage']));
  });

  it('refuses toolNames with its SPEC text, as the one 400 message', () => {
    const problems = bodyProblems({ description: 'd', fixed: { modelConfig: 'm', toolset: ['preset:none'], toolNames: ['x'] }, open: [] });
    expect(problems.map((p) => p.message)).toContain(TOOLNAMES_REMOVED_MESSAGE);
    expect(invalidBody(problems).message).toBe(TOOLNAMES_REMOVED_MESSAGE);
  });

  it('checks defaults by the same rules', () => {
    expect(bodyProblems({ description: 'd', fixed: { modelConfig: 'm' }, open: ['toolset'], defaults: { toolset: [] } }).map((p) => p.path)).toEqual(['defaults.toolset']);
  });
});

describe('defaults merge', () => {
  it.each<[string, object, object, object]>([
    ['the caller wins on a scalar', { displayName: 'D' }, { displayName: 'C' }, { displayName: 'C' }],
    ['a default fills what the caller left out', { displayName: 'D' }, {}, { displayName: 'D' }],
    ['objects merge per key, the caller winning', { labels: { a: '1', b: '1' } }, { labels: { b: '2', c: '2' } }, { labels: { a: '1', b: '2', c: '2' } }],
    ['lists replace', { toolset: ['preset:read-only', 'server:a'] }, { toolset: ['server:b'] }, { toolset: ['server:b'] }],
  ])('%s', (_case, defaults, given, merged) => {
    expect(mergeArguments(defaults as never, given as never)).toEqual(merged);
  });
});

describe("a blueprint's tool", () => {
  it('takes only name, namespace, the open arguments, dryRun and requestId, with defaults', async () => {
    const schema = (await toolInputSchema(HELPER)) as { properties: Record<string, { default?: unknown }>; required: string[] };
    expect(Object.keys(schema.properties)).toEqual(['name', 'namespace', 'displayName', 'annotations', 'dryRun', 'requestId']);
    expect(schema.required).toEqual(['name']);
    expect(schema.properties.namespace.default).toBe('agents');
    expect(schema.properties.annotations.default).toEqual({ 'example.com/team': 'sre' });
  });

  it('never shows a fixed value in its schema', async () => {
    const text = JSON.stringify(await toolInputSchema(HELPER));
    for (const secret of ['secret-model', 'SECRET PROMPT', 'incident-triage', 'gold']) expect(text).not.toContain(secret);
  });

  it('composes create arguments: caller over defaults, fixed last', () => {
    const { input, violations } = callProblems(HELPER, { name: 'pay-helper', annotations: { 'example.com/owner': 'bob' } });
    expect(violations).toEqual([]);
    expect(input).toEqual({
      name: 'pay-helper',
      namespace: 'agents',
      annotations: { 'example.com/team': 'sre', 'example.com/owner': 'bob' },
      ...HELPER.fixed,
    });
  });

  it('refuses a fixed argument sent by the caller by name, never with its value', () => {
    const { violations } = callProblems(HELPER, { name: 'x', namespace: 'agents', toolset: ['server:evil'], systemMessage: 'mine' });
    expect(violations.map((v) => v.path)).toEqual(['toolset', 'systemMessage']);
    expect(JSON.stringify(violations)).not.toMatch(/secret-model|SECRET PROMPT|read-only|gold/);
  });

  it('redacts a fixed argument that no longer passes the create checks', () => {
    const stale: BlueprintBody = { ...HELPER, fixed: { ...HELPER.fixed, systemMessage: 'S'.repeat(20_001) } };
    const { violations } = callProblems(stale, { name: 'x' });
    expect(violations).toEqual([{ path: 'systemMessage', message: expect.stringContaining("the blueprint's fixed systemMessage does not pass") }]);
    expect(JSON.stringify(violations)).not.toContain('SSSS');
  });

  it('checks the open arguments by the create rules', () => {
    const { violations } = callProblems(HELPER, { name: 'Bad_Name', annotations: { 'helm.sh/hook': 'x' } });
    expect(violations.map((v) => v.path)).toEqual(expect.arrayContaining(['name', 'annotations']));
  });
});

describe('quarantine', () => {
  it.each<[string, string, unknown, boolean]>([
    ['a healthy blueprint', 'incident_helper', HELPER, false],
    ['a name now served by another tool', 'list_agents', HELPER, true],
    ['a body a tightened rule refuses', 'x', { ...HELPER, fixed: { ...HELPER.fixed, toolset: ['label:team=x'] } }, true],
    ['a malformed stored body', 'x', 'not a body', true],
    ['a stored body missing its toolset', 'x', { description: 'd', fixed: { modelConfig: 'm' }, open: [], defaults: {} }, true],
  ])('%s → conflicted: %s', (_case, name, body, conflicted) => {
    const reason = conflictOf(name, body, SERVED);
    expect(reason !== null).toBe(conflicted);
    if (reason) expect(reason).toMatch(/delete the blueprint/);
  });
});

describe('the upgrade of a holder', () => {
  const v1: BlueprintBody = { description: 'd', fixed: { modelConfig: 'm1', toolset: ['preset:none'], systemMessage: 'old', displayName: 'D' }, open: ['labels'], defaults: {} };

  it.each<[string, BlueprintBody, object]>([
    ['takes the new fixed values', { ...v1, fixed: { ...v1.fixed, modelConfig: 'm2' } }, { ...v1.fixed, modelConfig: 'm2' }],
    ['clears what is neither fixed nor open any more', { ...v1, fixed: { modelConfig: 'm1', toolset: ['preset:none'], displayName: 'D' } }, { modelConfig: 'm1', toolset: ['preset:none'], displayName: 'D', systemMessage: '' }],
    ['keeps the agent\'s value of what became open', { ...v1, fixed: { modelConfig: 'm1', toolset: ['preset:none'], systemMessage: 'old' }, open: ['labels', 'displayName'] }, { modelConfig: 'm1', toolset: ['preset:none'], systemMessage: 'old' }],
  ])('%s', (_case, to, patch) => {
    expect(upgradePatch(v1, to)).toEqual(patch);
  });
});
