import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execa } from 'execa';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import { chartIdentity } from '../../libs/agents/src/domain/chart-identity.js';
import { migrateValues } from '../../libs/agents/src/domain/chart-migrations.js';
import { crdErrors, upstreamCrd, withoutCel } from './kagent-crd-schema.js';

// Runs the real helm (HELM_BIN, else the one installed with the npm dependencies) against
// charts/agent-v1, the way agent-manager does: values in a file, never --set. Every object it
// renders is checked against upstream kagent's CRD (schema and CEL rules), offline.
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const chartDir = join(repoRoot, 'charts', 'agent-v1');
const chart0Dir = join(repoRoot, 'charts', 'agent');
const helmBin = process.env.HELM_BIN ?? join(repoRoot, 'node_modules', '.bin', 'helm');

const RELEASE = 'ops-bot';
const NAMESPACE = 'team-a';
const MUSTER_URL = 'http://muster.muster.svc:8090/mcp';
const MUSTER_META_TOOLS = ['list_tools', 'filter_tools', 'describe_tool', 'call_tool', 'list_core_tools', 'list_resources', 'get_resource', 'list_prompts', 'get_prompt'];
// helm 3 and helm 4 word schema violations differently but share this lead-in.
const SCHEMA_REFUSAL = "values don't meet the specifications of the schema(s)";

const AGENT_TEMPLATE = upstreamCrd('kagent.dev_agenttemplates.yaml', 'v1alpha3');
const REMOTE_MCP_SERVER = upstreamCrd('kagent.dev_remotemcpservers.yaml', 'v1alpha3');

type Json = Record<string, any>;

let workDir: string;
let fileCount = 0;

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'agent-v1-chart-'));
});

afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

/** JSON is YAML: writing values as JSON keeps every string byte for byte. */
async function valuesFile(values: Record<string, unknown>): Promise<string> {
  fileCount += 1;
  const path = join(workDir, `values-${fileCount}.yaml`);
  await writeFile(path, JSON.stringify(values, null, 2), 'utf8');
  return path;
}

async function helm(args: string[], values: Record<string, unknown>) {
  const file = await valuesFile(values);
  return execa(helmBin, [...args, '--values', file], { reject: false });
}

async function template(values: Record<string, unknown>, dir = chartDir) {
  return helm(['template', RELEASE, dir, '--namespace', NAMESPACE], values);
}

async function render(values: Record<string, unknown>, dir = chartDir): Promise<Json[]> {
  const result = await template(values, dir);
  if (result.exitCode !== 0) throw new Error(`helm template failed (${result.exitCode}): ${result.stderr}`);
  return parseAllDocuments(result.stdout)
    .map((doc) => doc.toJS() as Json | null)
    .filter((doc): doc is Json => doc !== null);
}

function named(objects: Json[], kind: string): Json | undefined {
  return objects.find((o) => o.kind === kind);
}

function selectors(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `tool:t${i + 1}`);
}

const base = { modelConfig: 'default-model-config', muster: { url: MUSTER_URL } };

describe('charts/agent-v1', () => {
  it('is chart agent 1.0.0 to agent-manager, as 0.x is agent 0.x: the releases of both majors are agents', () => {
    expect(chartIdentity({ ref: chartDir })).toEqual({ name: 'agent', version: '1.0.0' });
    expect(chartIdentity({ ref: chart0Dir }).name).toBe('agent');
  });

  it('renders the AgentTemplate named after the release and its own RemoteMCPServer <release>-muster', async () => {
    const objects = await render({
      ...base,
      description: 'Answers questions about the fleet',
      displayName: 'Ops bot ✨',
      systemMessage: 'You are "ops-bot".\nBe brief: <no> & ünïcödé 🚀',
      labels: { team: 'ops', 'app.kubernetes.io/managed-by': 'someone-else' },
      annotations: { 'example.com/owner': 'ops' },
      toolset: ['preset:read-only'],
    });

    expect(objects.map((o) => [o.apiVersion, o.kind, o.metadata.namespace, o.metadata.name])).toEqual([
      ['kagent.dev/v1alpha3', 'AgentTemplate', NAMESPACE, RELEASE],
      ['kagent.dev/v1alpha3', 'RemoteMCPServer', NAMESPACE, `${RELEASE}-muster`],
    ]);
    const [agentTemplate, server] = objects as [Json, Json];
    const labels = (component: string) => ({
      'app.kubernetes.io/name': 'agent',
      'app.kubernetes.io/instance': RELEASE,
      'app.kubernetes.io/version': '1.0.0',
      'app.kubernetes.io/managed-by': 'Helm',
      'app.kubernetes.io/component': component,
      'helm.sh/chart': 'agent-1.0.0',
      team: 'ops',
    });
    const annotations = { 'example.com/owner': 'ops', 'agent-manager.giantswarm.io/display-name': 'Ops bot ✨' };
    expect(agentTemplate.metadata).toEqual({ name: RELEASE, namespace: NAMESPACE, labels: labels('agent'), annotations });
    expect(agentTemplate.spec).toEqual({
      modelConfig: { name: 'default-model-config' },
      description: 'Answers questions about the fleet',
      systemPrompt: 'You are "ops-bot".\nBe brief: <no> & ünïcödé 🚀',
      tools: [{ mcp: { server: { kind: 'RemoteMCPServer', name: `${RELEASE}-muster` }, tools: MUSTER_META_TOOLS } }],
    });
    expect(server.metadata).toEqual({ name: `${RELEASE}-muster`, namespace: NAMESPACE, labels: labels('muster-server'), annotations });
    expect(server.spec).toEqual({
      description: `Muster MCP gateway for agent ${RELEASE}`,
      protocol: 'STREAMABLE_HTTP',
      url: MUSTER_URL,
      headersFrom: [{ name: 'X-Muster-Toolset', value: 'preset:read-only' }],
    });
  });

  // helm 4's server-side apply sends an empty string as null.
  it('omits an empty systemMessage, an empty description and the annotations when there are none', async () => {
    const agentTemplate = named(await render(base), 'AgentTemplate')!;

    expect(agentTemplate.spec).not.toHaveProperty('systemPrompt');
    expect(agentTemplate.spec).not.toHaveProperty('description');
    expect(agentTemplate.metadata).not.toHaveProperty('annotations');
  });

  it.each<[string, string[]]>([
    ['one preset', ['preset:read-only']],
    ['the four selector forms', ['preset:read-only', 'server:kubernetes', 'workflow:incident-triage', 'tool:core_workflow_list']],
    ['unicode names', ['tool:ünïcödé', 'server:日本語', 'workflow:🚀']],
    ['duplicates, in order', ['preset:read-only', 'tool:x', 'preset:read-only']],
    ['characters YAML and JSON care about', ['tool:a&b<c>', 'tool:"quoted"', "tool:it's", 'tool:#{x}:[y]', 'tool:back\\slash']],
    ['untrimmed selectors', [' preset:read-only', 'tool:x ']],
    ['preset:none beside other selectors', ['preset:none', 'tool:x']],
    ['32 selectors, the cap', selectors(32)],
  ])('sends %s as the RemoteMCPServer’s X-Muster-Toolset exactly as declared', async (_case, toolset) => {
    const server = named(await render({ ...base, toolset }), 'RemoteMCPServer')!;

    expect(server.spec.headersFrom).toEqual([{ name: 'X-Muster-Toolset', value: toolset.join(',') }]);
  });

  it.each<[string, Record<string, unknown>]>([
    ['absent', {}],
    ['null', { toolset: null }],
  ])('binds Muster without a toolset header when the toolset is %s (legacy implicit full access)', async (_case, toolset) => {
    const objects = await render({ ...base, ...toolset });

    expect(named(objects, 'AgentTemplate')!.spec.tools).toHaveLength(1);
    expect(named(objects, 'RemoteMCPServer')!.spec).not.toHaveProperty('headersFrom');
  });

  it.each<[string, Record<string, unknown>]>([
    ['the toolset is ["preset:none"] (chat-only agent)', { toolset: ['preset:none'] }],
    ['muster is disabled', { muster: { enabled: false }, toolset: ['preset:read-only'] }],
  ])('renders the AgentTemplate alone, with no tools and no muster.url needed, when %s', async (_case, values) => {
    const objects = await render({ modelConfig: 'default-model-config', ...values });

    expect(objects.map((o) => o.kind)).toEqual(['AgentTemplate']);
    expect(objects[0]!.spec).not.toHaveProperty('tools');
  });

  it('takes the server’s protocol, timeout, further headers and the binding’s tools from muster values', async () => {
    const objects = await render({
      ...base,
      muster: { url: 'https://muster.example/mcp', protocol: 'SSE', timeout: '45s', headersFrom: [{ name: 'Authorization', valueFrom: { type: 'Secret', name: 'muster-token', key: 'header' } }], toolNames: ['list_tools', 'call_tool'] },
      toolset: ['server:kubernetes'],
    });

    expect(named(objects, 'AgentTemplate')!.spec.tools).toEqual([{ mcp: { server: { kind: 'RemoteMCPServer', name: `${RELEASE}-muster` }, tools: ['list_tools', 'call_tool'] } }]);
    expect(named(objects, 'RemoteMCPServer')!.spec).toEqual({
      description: `Muster MCP gateway for agent ${RELEASE}`,
      protocol: 'SSE',
      url: 'https://muster.example/mcp',
      timeout: '45s',
      headersFrom: [
        { name: 'Authorization', valueFrom: { type: 'Secret', name: 'muster-token', key: 'header' } },
        { name: 'X-Muster-Toolset', value: 'server:kubernetes' },
      ],
    });
  });

  it('names both objects after the name value when it is set (another release can render the agent)', async () => {
    const objects = await render({ ...base, name: 'ops-bot-2', toolset: ['preset:read-only'] });

    expect(objects.map((o) => [o.kind, o.metadata.name, o.metadata.labels['app.kubernetes.io/instance']])).toEqual([
      ['AgentTemplate', 'ops-bot-2', RELEASE],
      ['RemoteMCPServer', 'ops-bot-2-muster', RELEASE],
    ]);
    expect(objects[0]!.spec.tools[0].mcp.server.name).toBe('ops-bot-2-muster');
  });

  it('shares no object (kind and name) with the 0.x chart’s render of the same agent, nor with the shared "muster" server', async () => {
    const values = { modelConfig: 'default-model-config', toolset: ['preset:read-only'] };
    const v0 = await render(values, chart0Dir);
    const v1 = await render({ ...values, muster: { url: MUSTER_URL } });
    const ids = (objects: Json[]) => objects.map((o) => `${o.kind}/${o.metadata.name}`);

    expect(ids(v0)).toEqual([`Agent/${RELEASE}`]);
    expect(ids(v1)).toEqual([`AgentTemplate/${RELEASE}`, `RemoteMCPServer/${RELEASE}-muster`]);
    expect(ids(v1).filter((id) => [...ids(v0), 'RemoteMCPServer/muster'].includes(id))).toEqual([]);
  });

  it.each<[string, Record<string, unknown>, string[]]>([
    ['an empty toolset', { ...base, toolset: [] }, ['toolset must not be empty', '["preset:none"]']],
    ['33 selectors', { ...base, toolset: selectors(33) }, ['toolset has 33 selectors', 'more than the 32 allowed inline', "define one in Muster's toolsetPresets"]],
    ['no muster.url for an agent that binds Muster', { modelConfig: 'm', toolset: ['preset:read-only'] }, ['muster.url is required when the agent binds Muster', 'toolset ["preset:none"] for a chat-only agent']],
    [
      'a further header named X-Muster-Toolset',
      { ...base, muster: { url: MUSTER_URL, headersFrom: [{ name: 'x-muster-toolset', value: 'preset:full' }] }, toolset: ['preset:read-only'] },
      ['muster.headersFrom[0] sets X-Muster-Toolset', 'declare the toolset instead'],
    ],
  ])('refuses %s with a message saying what to do instead', async (_case, values, fragments) => {
    const result = await template(values);

    expect(result.exitCode).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('execution error at');
    for (const fragment of fragments) expect(result.stderr).toContain(fragment);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a non-string selector', { ...base, toolset: ['preset:read-only', 7] }, 'toolset'],
    ['a toolset string instead of a list', { ...base, toolset: 'preset:read-only' }, 'toolset'],
    ['a missing modelConfig', { muster: { url: MUSTER_URL } }, 'modelConfig'],
    ['an empty modelConfig', { ...base, modelConfig: '' }, 'modelConfig'],
    ['a systemMessage over 20000 characters', { ...base, systemMessage: 'x'.repeat(20001) }, 'systemMessage'],
    ['a non-string label', { ...base, labels: { team: 1 } }, 'labels'],
    ['an undeclared value', { ...base, toolNames: ['list_tools'] }, 'toolNames'],
    ['the 0.x muster.name (the 1.x server is the agent’s own)', { ...base, muster: { url: MUSTER_URL, name: 'muster' } }, 'name'],
    ['an empty muster.toolNames (v1alpha3 binds 1 to 50)', { ...base, muster: { url: MUSTER_URL, toolNames: [] } }, 'toolNames'],
    ['51 muster.toolNames', { ...base, muster: { url: MUSTER_URL, toolNames: selectors(51) } }, 'toolNames'],
    ['repeated muster.toolNames (a set in v1alpha3)', { ...base, muster: { url: MUSTER_URL, toolNames: ['call_tool', 'call_tool'] } }, 'toolNames'],
    ['an unknown protocol', { ...base, muster: { url: MUSTER_URL, protocol: 'WEBSOCKET' } }, 'protocol'],
    ['a timeout that is no Go duration', { ...base, muster: { url: MUSTER_URL, timeout: '30 seconds' } }, 'timeout'],
    ['a URL with a space', { ...base, muster: { url: 'http://muster /mcp' } }, 'url'],
    ['a header with both value and valueFrom', { ...base, muster: { url: MUSTER_URL, headersFrom: [{ name: 'A', value: 'x', valueFrom: { type: 'Secret', name: 's', key: 'k' } }] } }, 'headersFrom'],
    ['a name that is no DNS label', { ...base, name: 'Ops_Bot' }, 'name'],
  ])('refuses %s through the values schema', async (_case, values, path) => {
    const result = await template(values);

    expect(result.exitCode).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(SCHEMA_REFUSAL);
    expect(result.stderr).toContain(path);
  });

  it('passes helm lint --strict with the values agent-manager writes and a Muster URL', async () => {
    const result = await helm(['lint', '--strict', chartDir], {
      ...base,
      description: 'Answers questions about the fleet',
      displayName: 'Ops bot',
      systemMessage: 'You are a helpful agent.',
      labels: { team: 'ops' },
      annotations: {},
      toolset: ['preset:read-only', 'workflow:incident-triage'],
    });

    expect(result.stdout).toContain('0 chart(s) failed');
    expect(result.exitCode).toBe(0);
  });
});

describe('charts/agent-v1 against upstream kagent v1alpha3 CRDs', () => {
  const crdOf: Record<string, typeof AGENT_TEMPLATE> = { AgentTemplate: AGENT_TEMPLATE, RemoteMCPServer: REMOTE_MCP_SERVER };

  it.each<[string, Record<string, unknown>]>([
    ['every value set', { ...base, description: 'd', displayName: 'D', systemMessage: 's', labels: { a: 'b' }, annotations: { c: 'd' }, toolset: ['preset:read-only', 'tool:x'], muster: { url: 'https://m/mcp', protocol: 'SSE', timeout: '1m30s', headersFrom: [{ name: 'Authorization', valueFrom: { type: 'Secret', name: 's', key: 'k' } }, { name: 'X-Team', value: 'ops' }], toolNames: ['call_tool'] } }],
    ['the fewest values', base],
    ['a legacy agent (no toolset)', { ...base, toolset: null }],
    ['a chat-only agent', { modelConfig: 'm', toolset: ['preset:none'] }],
    ['50 tool names', { ...base, muster: { url: MUSTER_URL, toolNames: selectors(50) } }],
  ])('renders objects upstream’s schema and CEL rules accept: %s', async (_case, values) => {
    const objects = await render(values);

    expect(objects.length).toBeGreaterThan(0);
    expect(objects.map((o) => ({ kind: o.kind, errors: crdErrors(crdOf[o.kind]!, o) }))).toEqual(objects.map((o) => ({ kind: o.kind, errors: [] })));
  });

  it.each<[string, 'AgentTemplate' | 'RemoteMCPServer', (o: Json) => void, string]>([
    ['a binding with no tools', 'AgentTemplate', (o) => (o.spec.tools[0].mcp.tools = []), 'must NOT have fewer than 1 items'],
    ['a binding with repeated tools', 'AgentTemplate', (o) => (o.spec.tools[0].mcp.tools = ['a', 'a']), 'x-kubernetes-list-type'],
    ['a binding of another kind', 'AgentTemplate', (o) => (o.spec.tools[0].mcp.server.kind = 'MCPServer'), 'must be equal to one of the allowed values'],
    ['a binding that is both mcp and agent', 'AgentTemplate', (o) => (o.spec.tools[0].agent = { name: 'x', description: 'x', templateRef: { name: 'y' } }), 'exactly one of mcp or agent must be specified'],
    ['a modelConfig as a string (the v1alpha2 shape)', 'AgentTemplate', (o) => (o.spec.modelConfig = 'm'), 'must be object'],
    ['a header with neither value nor valueFrom', 'RemoteMCPServer', (o) => (o.spec.headersFrom = [{ name: 'X' }]), 'Exactly one of value or valueFrom must be specified'],
    ['a server without description', 'RemoteMCPServer', (o) => delete o.spec.description, "must have required property 'description'"],
  ])('the check is not vacuous: refuses %s', async (_case, kind, breakIt, message) => {
    const object = named(await render({ ...base, toolset: ['preset:read-only'] }), kind)!;
    breakIt(object);

    expect(crdErrors(crdOf[kind]!, object).join('\n')).toContain(message);
  });

  it.each([
    ['kagent.dev_agenttemplates.yaml', 'v1alpha3'],
    ['kagent.dev_remotemcpservers.yaml', 'v1alpha3'],
  ])('the test API server’s %s %s is upstream’s less its CEL rules', (file, version) => {
    const cluster = parse(readFileSync(join(repoRoot, 'test', 'cluster', 'crds', file), 'utf8')) as Json;
    const served = (cluster.spec.versions as Json[]).find((v) => v.name === version)!;

    expect(served).toEqual({ ...(withoutCel(served) as Json) });
    expect(served.schema.openAPIV3Schema).toEqual(withoutCel(upstreamCrd(file, version).schema));
    expect(served.served).toBe(true);
  });

  it('renders 0.x values migrated by migrateValues into valid v1alpha3 objects', async () => {
    const values0 = { modelConfig: 'gpt', toolset: ['preset:read-only'], description: 'd', displayName: 'D', systemMessage: 's', labels: { team: 'ops' }, annotations: {}, muster: { name: 'muster', toolNames: ['call_tool', 'call_tool'] } };
    const { values, notCarried, missing } = migrateValues('0', '1', values0, { musterServer: { url: MUSTER_URL, headersFrom: [{ name: 'Authorization', value: 'Bearer x' }] } });
    const [agent] = await render(values0, chart0Dir);
    const objects = await render(values);

    expect({ notCarried, missing }).toEqual({ notCarried: [], missing: [] });
    expect(objects.map((o) => crdErrors(crdOf[o.kind]!, o))).toEqual([[], []]);
    const [agentTemplate, server] = objects as [Json, Json];
    expect(agentTemplate.spec).toEqual({
      modelConfig: { name: agent!.spec.declarative.modelConfig },
      description: agent!.spec.description,
      systemPrompt: agent!.spec.declarative.systemMessage,
      tools: [{ mcp: { server: { kind: 'RemoteMCPServer', name: server.metadata.name }, tools: ['call_tool'] } }],
    });
    expect(server.spec.headersFrom).toEqual([{ name: 'Authorization', value: 'Bearer x' }, ...agent!.spec.declarative.tools[0].headersFrom]);
    expect(agentTemplate.metadata.annotations).toEqual(agent!.metadata.annotations);
  });
});
