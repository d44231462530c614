import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call as rest, startTestApp, type TestApp } from '../support/test-app.js';
import { call as tool, connect } from '../mcp/mcp-support.js';

jest.setTimeout(60_000);

const CONFIG = [
  'aggregator:',
  '  port: 8090',
  'toolsetPresets:',
  '  infrastructure:',
  '    description: Every infrastructure server',
  '    include:',
  '      - label: agent-platform.giantswarm.io/tool-group=infrastructure',
  '  team-observability:',
  '    description: Dashboards and alerts',
  '    include:',
  '      - server: grafana',
  '      - preset: read-only',
  '',
].join('\n');

const BUILT_INS = [
  { name: 'read-only', description: 'Every tool its server annotates read-only, plus every workflow whose step tools are all read-only', source: 'muster' },
  { name: 'none', description: 'No tools', source: 'muster' },
  { name: 'full', description: "The whole catalogue, including muster's core tools", source: 'muster' },
];

const EXACTLY_ONE = 'must set exactly one of tool, pattern, server, workflow, readOnly, preset, label';

/** Waits until `check` holds (a ceiling for a hang, not a timing target). */
async function until<T>(what: string, read: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  for (const deadline = Date.now() + 20_000; ; await new Promise((resolve) => setTimeout(resolve, 100))) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`never saw ${what}: ${JSON.stringify(value)}`);
  }
}

const agent = (name: string, toolset: string[]) => ({ namespace: 'agents', name, modelConfig: 'default-model-config', toolset });

/**
 * MUSTER_PRESETS as a file in Muster's config.yaml shape: the presets listed and a proposed config
 * checked on both doors, a write naming an unknown preset refused in Muster's words with the near
 * miss, the file re-read when it changes and a bad edit logged while the last good presets stay.
 */
describe('toolset presets from MUSTER_PRESETS (a config.yaml file)', () => {
  let service: TestApp;
  let client: Client;
  let file: string;
  let folder: string;

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'muster-presets-'));
    file = join(folder, 'config.yaml');
    writeFileSync(file, CONFIG);
    service = await startTestApp({ MUSTER_PRESETS: file });
    client = await connect(service.url);
  });

  afterAll(async () => {
    await client?.close();
    await service?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('lists the built-ins and the configured presets with their descriptions, the same on both doors', async () => {
    const res = await rest(service.url, 'GET', '/api/v1/toolset-presets');
    expect(res.status).toBe(200);
    expect(res.body.presets).toEqual([
      ...BUILT_INS,
      { name: 'infrastructure', description: 'Every infrastructure server', source: 'configured' },
      { name: 'team-observability', description: 'Dashboards and alerts', source: 'configured' },
    ]);
    expect(res.body.source).toMatchObject({ configured: true, location: file, loaded: true, errors: [], problem: null });
    const result = await tool(client, 'list_toolset_presets');
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual(res.body);
    const info = await rest(service.url, 'GET', '/api/v1/info');
    expect(info.body.presets.map((p: { name: string; source: string }) => `${p.name}:${p.source}`)).toEqual([
      'read-only:muster', 'none:muster', 'full:muster', 'infrastructure:configured', 'team-observability:configured',
    ]);
  });

  it("answers every error of a proposed config at once, in Muster's words, as an object or as config.yaml text, on both doors", async () => {
    const toolsetPresets = {
      full: {},
      ops: { include: [{ server: 'k8s' }, { pattern: '[' }, { tool: 'a', server: 'b' }], exclude: [{ preset: 'none' }] },
      sre: { include: [{ readOnly: false }, { preset: 'opz' }] },
    };
    const errors = [
      'toolsetPresets: preset "full" is built in and cannot be redefined',
      'toolsetPresets: preset "ops" include[1] pattern "[" is invalid: syntax error in pattern',
      `toolsetPresets: preset "ops" include[2] ${EXACTLY_ONE}`,
      'toolsetPresets: preset "ops" exclude[0] cannot compose a preset in exclude; only include may',
      'toolsetPresets: preset "sre" include[0] readOnly: false selects nothing; omit the rule',
      'toolsetPresets: preset "sre" includes unknown preset "opz"; known presets: read-only, none, full, ops, sre',
    ];
    const byObject = await rest(service.url, 'POST', '/api/v1/toolset-presets/validate', { toolsetPresets });
    expect(byObject.status).toBe(200);
    expect(byObject.body).toEqual({ valid: false, errors, presets: [{ name: 'ops', description: null }, { name: 'sre', description: null }] });

    const text = 'toolsetPresets:\n  a:\n    include: [{preset: b}]\n  b:\n    include: [{preset: a}, {}]\n';
    const byText = await tool(client, 'validate_toolset_presets', { config: text });
    expect(byText.isError).toBeFalsy();
    expect(byText.structuredContent).toMatchObject({
      valid: false,
      errors: [`toolsetPresets: preset "b" include[1] ${EXACTLY_ONE}`, 'toolsetPresets: preset composition cycles: a -> b -> a'],
    });
    expect((await tool(client, 'validate_toolset_presets', { toolsetPresets })).structuredContent).toEqual(byObject.body);
    expect((await rest(service.url, 'POST', '/api/v1/toolset-presets/validate', { config: CONFIG })).body).toMatchObject({ valid: true, errors: [] });
    expect((await rest(service.url, 'POST', '/api/v1/toolset-presets/validate', { config: 'toolsetPresets: [' })).body).toMatchObject({
      valid: false,
      errors: [expect.stringMatching(/^the config is not valid YAML: /u)],
    });
    const both = await rest(service.url, 'POST', '/api/v1/toolset-presets/validate', { config: CONFIG, toolsetPresets });
    expect(both.status).toBe(400);
    expect(both.body.error.message).toBe('send one of toolsetPresets and config, not both: they are two ways of giving the same block');
  });

  it('refuses a write naming an unknown preset with the known ones and the near miss, the same on both doors, validate_agent included', async () => {
    const message =
      'toolset [server:grafana,preset:infrastucture] names unknown preset "infrastucture"; known presets: read-only, none, full, infrastructure, team-observability; ' +
      'did you mean "preset:infrastructure"? Preset names are exact';
    const toolset = ['server:grafana', 'preset:infrastucture'];
    const created = await rest(service.url, 'POST', '/api/v1/agents', { ...agent('typo', toolset), dryRun: true });
    expect(created.status).toBe(400);
    expect(created.body.error).toMatchObject({ code: 'invalid_request', message, details: [{ path: 'toolset[1]', message }] });
    const byTool = await tool(client, 'create_agent', agent('typo', toolset));
    expect(byTool.isError).toBe(true);
    expect(byTool.structuredContent).toEqual(created.body);
    const validated = await tool(client, 'validate_agent', agent('typo', toolset));
    expect(validated.structuredContent).toMatchObject({ valid: false, violations: [{ path: 'toolset[1]', message }] });
    const known = await rest(service.url, 'POST', '/api/v1/agents', { ...agent('known', ['preset:team-observability', 'preset:read-only']), dryRun: true });
    expect(known.status).toBe(200);
    // The toolset's presets are all known (the modelConfig is not checked here: no cluster).
    expect(known.body.warnings.filter((w: { path: string }) => w.path.startsWith('toolset'))).toEqual([]);
  });

  it('re-reads the file when it changes, and keeps the last good presets (logging every error) when a change breaks the rules', async () => {
    writeFileSync(file, `${CONFIG}  release:\n    description: Release tools\n    include:\n      - workflow: release\n`);
    const changed = await until('the new preset', () => rest(service.url, 'GET', '/api/v1/toolset-presets'), (res) => res.body.presets.some((p: { name: string }) => p.name === 'release'));
    const before = changed.body.presets;
    writeFileSync(file, 'toolsetPresets:\n  broken:\n    include: [{}, {readOnly: false}]\n');
    const refused = await until('the refused read', () => rest(service.url, 'GET', '/api/v1/toolset-presets'), (res) => res.body.source.errors.length > 0);
    expect(refused.body.source.errors).toEqual([`toolsetPresets: preset "broken" include[0] ${EXACTLY_ONE}`, 'toolsetPresets: preset "broken" include[1] readOnly: false selects nothing; omit the rule']);
    expect(refused.body.presets).toEqual(before);
    expect(refused.body.source.loaded).toBe(true);
  });
});

/** Without MUSTER_PRESETS, preset names cannot be checked: a write passes with a warning naming each one not built in. */
describe('toolset presets without MUSTER_PRESETS', () => {
  let service: TestApp;

  beforeAll(async () => {
    service = await startTestApp();
  });

  afterAll(async () => {
    await service?.close();
  });

  it('lists the built-ins and the platform presets, and lets a write name any preset with a warning that it was not checked', async () => {
    const list = await rest(service.url, 'GET', '/api/v1/toolset-presets');
    expect(list.body.source).toEqual({ configured: false, location: null, loaded: false, loadedAt: null, errors: [], problem: null });
    expect(list.body.presets.map((p: { name: string; source: string }) => `${p.name}:${p.source}`)).toEqual([
      'read-only:muster', 'none:muster', 'full:muster', 'infrastructure:platform', 'agent-platform:platform',
    ]);
    const created = await rest(service.url, 'POST', '/api/v1/agents', { ...agent('unchecked', ['preset:read-only', 'preset:team-observability']), dryRun: true });
    expect(created.status).toBe(200);
    expect(created.body.warnings.filter((w: { path: string }) => w.path.startsWith('toolset'))).toEqual([
      {
        path: 'toolset[1]',
        message:
          'toolset [preset:read-only,preset:team-observability]: preset "team-observability" at index 1 was not checked: no preset source is configured (MUSTER_PRESETS); ' +
          'Muster refuses every call of this agent if its toolsetPresets lack it (list_toolset_presets lists the known ones)',
      },
    ]);
  });
});
