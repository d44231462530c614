import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { PROJECT_ROOT } from '@app/common';
import { toChartValues } from './agent-spec.js';
import { chartMajor, migrateValues, MUSTER_META_TOOLS, type MigrationContext, type ValuesMigration } from './chart-migrations.js';

const base = { modelConfig: 'default-model-config', toolset: ['preset:read-only'] };
const shared = { musterServer: { url: 'http://muster.muster.svc:8090/mcp' } };

/** What a row expects besides `base`'s own rows (modelConfig and toolset, always carried as they are). */
interface Row {
  values: Record<string, unknown>;
  context?: MigrationContext;
  expected: Record<string, unknown>;
}

function migrated(values: Record<string, unknown>, context: MigrationContext = shared): ValuesMigration {
  return migrateValues('0', '1', { ...base, ...values }, context);
}

const carriedAsIs = (field: string, renders: RegExp) => expect.objectContaining({ field, to: field, renders: expect.stringMatching(renders) });

const musterServerRow = (to: string) => expect.objectContaining({ field: 'muster.name (default "muster")', to });

// One row per 0.x field (and per way a field can go): where it goes in 1.x, or why it cannot.
const rows: [string, Row][] = [
  ['description → description (spec.description)', { values: { description: 'Answers about the fleet' }, expected: { values: expect.objectContaining({ description: 'Answers about the fleet' }), carried: expect.arrayContaining([carriedAsIs('description', /AgentTemplate spec.description/)]) } }],
  ['displayName → displayName (the display-name annotation)', { values: { displayName: 'Ops bot ✨' }, expected: { values: expect.objectContaining({ displayName: 'Ops bot ✨' }), carried: expect.arrayContaining([carriedAsIs('displayName', /display-name on the AgentTemplate and the RemoteMCPServer/)]) } }],
  ['systemMessage → systemMessage (spec.systemPrompt)', { values: { systemMessage: 'Be brief.\n' }, expected: { values: expect.objectContaining({ systemMessage: 'Be brief.\n' }), carried: expect.arrayContaining([carriedAsIs('systemMessage', /AgentTemplate spec.systemPrompt/)]) } }],
  ['modelConfig → modelConfig (spec.modelConfig.name)', { values: { modelConfig: 'gpt' }, expected: { values: expect.objectContaining({ modelConfig: 'gpt' }), carried: expect.arrayContaining([carriedAsIs('modelConfig', /spec.modelConfig.name/)]) } }],
  ['labels → labels (both objects)', { values: { labels: { team: 'ops' } }, expected: { values: expect.objectContaining({ labels: { team: 'ops' } }), carried: expect.arrayContaining([carriedAsIs('labels', /AgentTemplate and the RemoteMCPServer/)]) } }],
  ['annotations → annotations (both objects)', { values: { annotations: { 'example.com/owner': 'ops' } }, expected: { values: expect.objectContaining({ annotations: { 'example.com/owner': 'ops' } }), carried: expect.arrayContaining([carriedAsIs('annotations', /AgentTemplate and the RemoteMCPServer/)]) } }],
  ['toolset → toolset (the RemoteMCPServer’s X-Muster-Toolset)', { values: { toolset: ['preset:read-only', 'tool:x'] }, expected: { values: expect.objectContaining({ toolset: ['preset:read-only', 'tool:x'] }), carried: expect.arrayContaining([carriedAsIs('toolset', /X-Muster-Toolset header of the agent's own RemoteMCPServer/)]) } }],
  ['a null toolset (legacy, no header) → null', { values: { toolset: null }, expected: { values: expect.objectContaining({ toolset: null }), notCarried: [] } }],
  ['muster.enabled: true → muster.enabled', { values: { muster: { enabled: true } }, expected: { values: expect.objectContaining({ muster: expect.objectContaining({ enabled: true }) }), carried: expect.arrayContaining([expect.objectContaining({ field: 'muster.enabled', to: 'muster.enabled' })]) } }],
  ['muster.enabled: false → muster.enabled, no server needed', { values: { muster: { enabled: false } }, context: {}, expected: { values: expect.objectContaining({ muster: { enabled: false } }), missing: [], notCarried: [] } }],
  [
    'the shared server (muster.name) → muster.url, protocol, timeout, headersFrom of the agent’s own server',
    {
      values: { muster: { name: 'muster-gw' } },
      context: { musterServer: { url: 'https://muster.example/mcp', protocol: 'SSE', timeout: '45s', headersFrom: [{ name: 'Authorization', valueFrom: { type: 'Secret', name: 'muster-token', key: 'header' } }] } },
      expected: {
        values: expect.objectContaining({ muster: { url: 'https://muster.example/mcp', protocol: 'SSE', timeout: '45s', headersFrom: [{ name: 'Authorization', valueFrom: { type: 'Secret', name: 'muster-token', key: 'header' } }] } }),
        carried: expect.arrayContaining([expect.objectContaining({ field: 'muster.name', to: 'muster.url, muster.protocol, muster.timeout, muster.headersFrom', renders: expect.stringContaining('"muster-gw"') })]),
        notCarried: [],
        missing: [],
      },
    },
  ],
  ['the default shared server "muster" → muster.url', { values: {}, expected: { values: expect.objectContaining({ muster: { url: 'http://muster.muster.svc:8090/mcp' } }), carried: expect.arrayContaining([musterServerRow('muster.url')]), missing: [] } }],
  [
    'muster.name without the shared server’s spec → muster.url missing, muster.name not carried',
    {
      values: { muster: { name: 'muster-gw' } },
      context: {},
      expected: {
        missing: [{ field: 'muster.url', reason: expect.stringContaining('the shared RemoteMCPServer "muster-gw": read its spec and pass it as context.musterServer') }],
        notCarried: [{ field: 'muster.name', reason: expect.stringContaining('set muster.url') }],
      },
    },
  ],
  ['no muster values and no shared server’s spec → muster.url missing', { values: {}, context: { musterServer: null }, expected: { missing: [expect.objectContaining({ field: 'muster.url' })], notCarried: [] } }],
  [
    'the shared server’s own X-Muster-Toolset header → not carried (the toolset value is sent)',
    {
      values: {},
      context: { musterServer: { url: 'http://m/mcp', headersFrom: [{ name: 'x-muster-toolset', value: 'preset:full' }, { name: 'X-Team', value: 'ops' }] } },
      expected: {
        values: expect.objectContaining({ muster: { url: 'http://m/mcp', headersFrom: [{ name: 'X-Team', value: 'ops' }] } }),
        notCarried: [{ field: 'RemoteMCPServer muster spec.headersFrom[0]', reason: expect.stringContaining('sets X-Muster-Toolset') }],
      },
    },
  ],
  ['the shared server’s unknown protocol → not carried (the default is rendered)', { values: {}, context: { musterServer: { url: 'http://m/mcp', protocol: 'WEBSOCKET' } }, expected: { values: expect.objectContaining({ muster: { url: 'http://m/mcp' } }), notCarried: [{ field: 'RemoteMCPServer muster spec.protocol', reason: expect.stringContaining('not WEBSOCKET') }] } }],
  ['muster.kind: RemoteMCPServer → fixed in 1.x', { values: { muster: { kind: 'RemoteMCPServer' } }, expected: { carried: expect.arrayContaining([{ field: 'muster.kind', to: null, renders: expect.stringContaining('fixed in 1.x') }]), notCarried: [] } }],
  [
    'muster.kind: MCPServer → not carried; the binding is off',
    {
      values: { muster: { kind: 'MCPServer' } },
      expected: { values: expect.objectContaining({ muster: { enabled: false } }), notCarried: [{ field: 'muster.kind', reason: expect.stringContaining('kind RemoteMCPServer only') }], missing: [] },
    },
  ],
  ['muster.apiGroup: kagent.dev → implied in 1.x', { values: { muster: { apiGroup: 'kagent.dev' } }, expected: { carried: expect.arrayContaining([{ field: 'muster.apiGroup', to: null, renders: expect.stringContaining('kagent.dev is implied') }]), notCarried: [] } }],
  ['muster.apiGroup: "" → implied in 1.x', { values: { muster: { apiGroup: '' } }, expected: { carried: expect.arrayContaining([expect.objectContaining({ field: 'muster.apiGroup', to: null })]), notCarried: [] } }],
  ['muster.apiGroup: another group → not carried; the binding is off', { values: { muster: { apiGroup: 'example.com' } }, expected: { values: expect.objectContaining({ muster: { enabled: false } }), notCarried: [{ field: 'muster.apiGroup', reason: expect.stringContaining('not example.com') }] } }],
  ['muster.enabled with an unbindable kind → not carried (rendered false)', { values: { muster: { enabled: true, kind: 'Service', apiGroup: '' } }, expected: { values: expect.objectContaining({ muster: { enabled: false } }), notCarried: expect.arrayContaining([expect.objectContaining({ field: 'muster.enabled' }), expect.objectContaining({ field: 'muster.kind' })]) } }],
  ['muster.toolNames → muster.toolNames (the binding’s tools)', { values: { muster: { toolNames: ['list_tools', 'call_tool'] } }, expected: { values: expect.objectContaining({ muster: expect.objectContaining({ toolNames: ['list_tools', 'call_tool'] }) }), carried: expect.arrayContaining([expect.objectContaining({ field: 'muster.toolNames', to: 'muster.toolNames', renders: expect.stringContaining('spec.tools[0].mcp.tools') })]) } }],
  ['an empty muster.toolNames → Muster’s meta-tools, said in a note', { values: { muster: { toolNames: [] } }, expected: { values: expect.objectContaining({ muster: expect.objectContaining({ toolNames: MUSTER_META_TOOLS }) }), carried: expect.arrayContaining([expect.objectContaining({ field: 'muster.toolNames', note: expect.stringContaining('needs at least one name') })]) } }],
  ['repeated muster.toolNames → once each, said in a note', { values: { muster: { toolNames: ['call_tool', 'list_tools', 'call_tool'] } }, expected: { values: expect.objectContaining({ muster: expect.objectContaining({ toolNames: ['call_tool', 'list_tools'] }) }), carried: expect.arrayContaining([expect.objectContaining({ field: 'muster.toolNames', note: expect.stringContaining('bound once') })]) } }],
  [
    '51 muster.toolNames → the first 50; the 51st not carried, by name',
    {
      values: { muster: { toolNames: Array.from({ length: 51 }, (_, i) => `t${i + 1}`) } },
      expected: { values: expect.objectContaining({ muster: expect.objectContaining({ toolNames: Array.from({ length: 50 }, (_, i) => `t${i + 1}`) }) }), notCarried: [{ field: 'muster.toolNames', reason: expect.stringMatching(/at most 50 tools .*not carried: t51$/) }] },
    },
  ],
  ['muster.toolNames that are not names → not carried (the default stays)', { values: { muster: { toolNames: ['list_tools', 7] } }, expected: { values: expect.objectContaining({ muster: { url: 'http://muster.muster.svc:8090/mcp' } }), notCarried: [{ field: 'muster.toolNames', reason: expect.stringContaining('not a list of non-empty names') }] } }],
  ['an undeclared top-level value → not carried', { values: { toolNames: ['list_tools'] }, expected: { values: expect.not.objectContaining({ toolNames: expect.anything() }), notCarried: [{ field: 'toolNames', reason: expect.stringContaining('not a value of the Generic agent chart 0.x') }] } }],
  ['an undeclared muster value → not carried', { values: { muster: { url: 'http://x' } }, expected: { notCarried: [{ field: 'muster.url', reason: expect.stringContaining('not a value of the Generic agent chart 0.x') }] } }],
  ['muster that is not an object → not carried', { values: { muster: 'muster' }, expected: { notCarried: [{ field: 'muster', reason: expect.stringContaining('not an object') }] } }],
  ['a chat-only agent (["preset:none"]) → no server, nothing missing', { values: { toolset: ['preset:none'], muster: { name: 'muster' } }, context: {}, expected: { values: { modelConfig: 'default-model-config', toolset: ['preset:none'] }, carried: expect.arrayContaining([{ field: 'muster.name', to: null, renders: expect.stringContaining('binds no Muster server') }]), missing: [], notCarried: [] } }],
];

describe(migrateValues.name, () => {
  it.each(rows)('%s', (_case, { values, context, expected }) => {
    expect(migrated(values, context)).toEqual(expect.objectContaining(expected));
  });

  it('answers every field it was given: carried or not carried, never dropped', () => {
    const values = { ...toChartValues({ modelConfig: 'm', toolset: ['tool:x'], description: 'd', displayName: 'D', systemMessage: 's', labels: { a: 'b' }, annotations: { c: 'd' } }), muster: { enabled: true, name: 'muster', kind: 'RemoteMCPServer', apiGroup: 'kagent.dev', toolNames: ['call_tool'] }, extra: 1 };
    const result = migrateValues('0', '1', values, shared);
    const answered = new Set([...result.carried, ...result.notCarried].map((row) => row.field));
    const fields = [...Object.keys(values).filter((f) => f !== 'muster'), ...Object.keys(values.muster).map((f) => `muster.${f}`)];

    expect(fields.filter((field) => !answered.has(field))).toEqual([]);
  });

  it('leaves the values it was given untouched', () => {
    const values = { ...base, labels: { a: 'b' }, muster: { toolNames: ['x', 'x'] } };
    const before = structuredClone(values);
    const result = migrateValues('0', '1', values, shared);
    (result.values.labels as Record<string, string>).a = 'changed';

    expect(values).toEqual(before);
  });

  it('refuses a pair of majors no chart declares, naming the declared ones', () => {
    expect(() => migrateValues('1' as '0', '0' as '1', base)).toThrow('no values migration from chart major 1 to 0: declared are 0 → 1');
  });
});

describe('migrated values against charts/agent-v1/values.schema.json', () => {
  const schema = JSON.parse(readFileSync(join(PROJECT_ROOT, 'charts', 'agent-v1', 'values.schema.json'), 'utf8')) as object;
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);

  it.each(rows)('%s: valid 1.x values', (_case, { values, context }) => {
    const result = migrated(values, context);
    expect(validate(result.values) ? [] : validate.errors).toEqual([]);
  });

  it('the values agent-manager writes migrate with nothing lost', () => {
    const values = toChartValues({ modelConfig: 'm', toolset: ['preset:read-only'], description: 'd', displayName: 'D', systemMessage: 's', labels: { a: 'b' }, annotations: { c: 'd' } });
    const result = migrateValues('0', '1', { ...values }, shared);

    expect(result).toEqual({ values: { ...values, muster: { url: shared.musterServer.url } }, carried: expect.any(Array), notCarried: [], missing: [] });
    expect(validate(result.values) ? [] : validate.errors).toEqual([]);
  });
});

describe(chartMajor.name, () => {
  it.each([
    ['0.6.0', '0'],
    ['1.0.0', '1'],
    ['1.2.3-rc.1', '1'],
    ['v2.0.0', '2'],
  ])('%s is major %s', (version, major) => {
    expect(chartMajor(version)).toBe(major);
  });
});
