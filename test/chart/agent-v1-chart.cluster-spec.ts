// npm test: also with helm 3 — chart major 1 installed and upgraded into from 0.x by each major (helm 4's server-side apply, helm 3's three-way merge and its keep policy)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { execa } from 'execa';
import { parseAllDocuments } from 'yaml';
import { resolveHelmBinary } from '@app/helm';
import { migrateValues } from '../../libs/agents/src/domain/chart-migrations.js';
import { TestCluster } from '../support/cluster.js';

// helm runs against the API server on 2 busy cores.
jest.setTimeout(120_000);

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const chart1 = join(repoRoot, 'charts', 'agent-v1');
const chart0 = join(repoRoot, 'charts', 'agent');
const helmBin = process.env.HELM_BIN ?? resolveHelmBinary();
const MUSTER_URL = 'http://muster.muster.svc:8090/mcp';

type Json = Record<string, any>;

/**
 * charts/agent-v1 installed with the real helm into the test API server, which serves upstream
 * kagent's AgentTemplate and RemoteMCPServer v1alpha3 schemas (test/cluster/crds): the objects are
 * accepted and stored as rendered, and live beside a 0.x release's Agent of the same agent.
 */
describe('charts/agent-v1 in a real API server', () => {
  let cluster: TestCluster;
  let dir: string;
  let files = 0;

  beforeAll(() => {
    cluster = TestCluster.fromEnv();
    dir = mkdtempSync(join(tmpdir(), 'agent-v1-cluster-'));
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  async function helm(args: string[], namespace: string, values?: Record<string, unknown>) {
    const extra: string[] = [];
    if (values) {
      files += 1;
      const file = join(dir, `values-${files}.yaml`);
      writeFileSync(file, JSON.stringify(values));
      extra.push('--values', file);
    }
    const result = await execa(helmBin, [...args, '--namespace', namespace, '--kubeconfig', cluster.kubeconfig, ...extra], { reject: false, stdin: 'ignore' });
    return { code: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr) };
  }

  async function get(namespace: string, plural: string, version: string, name: string): Promise<Json | null> {
    try {
      return (await cluster.objects.getNamespacedCustomObject({ group: 'kagent.dev', version, namespace, plural, name })) as Json;
    } catch (error) {
      if ((error as { code?: number }).code === 404) return null;
      throw error;
    }
  }

  async function manifest(release: string, namespace: string): Promise<Json[]> {
    const { stdout } = await helm(['get', 'manifest', release], namespace);
    return parseAllDocuments(stdout)
      .map((d) => d.toJS() as Json | null)
      .filter((o): o is Json => o !== null);
  }

  it('installs: the AgentTemplate and the RemoteMCPServer are stored exactly as rendered', async () => {
    const namespace = await cluster.freshNamespace('agent-v1');
    const values = {
      modelConfig: 'default-model-config',
      description: 'Answers questions about the fleet',
      displayName: 'Ops bot ✨',
      systemMessage: 'Be brief.',
      labels: { team: 'ops' },
      toolset: ['preset:read-only', 'workflow:incident-triage'],
      muster: { url: MUSTER_URL, timeout: '45s', headersFrom: [{ name: 'Authorization', valueFrom: { type: 'Secret', name: 'muster-token', key: 'header' } }] },
    };

    expect(await helm(['install', 'ops-bot', chart1], namespace, values)).toEqual(expect.objectContaining({ code: 0, stderr: '' }));
    const rendered = await manifest('ops-bot', namespace);
    expect(rendered.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['AgentTemplate/ops-bot', 'RemoteMCPServer/ops-bot-muster']);

    const agentTemplate = await get(namespace, 'agenttemplates', 'v1alpha3', 'ops-bot');
    const server = await get(namespace, 'remotemcpservers', 'v1alpha3', 'ops-bot-muster');
    // Defaults the CRD applies (terminateOnClose) are the API server's, not the chart's.
    expect(agentTemplate?.spec).toEqual(rendered[0]!.spec);
    expect(server?.spec).toEqual({ ...rendered[1]!.spec, terminateOnClose: true });
    expect(agentTemplate?.metadata.labels).toEqual(rendered[0]!.metadata.labels);
    expect(server?.metadata.annotations).toEqual({ 'agent-manager.giantswarm.io/display-name': 'Ops bot ✨', 'meta.helm.sh/release-name': 'ops-bot', 'meta.helm.sh/release-namespace': namespace });
  });

  it('lives beside the 0.x release of the same agent: Agent, AgentTemplate and RemoteMCPServer at once, and outlives it', async () => {
    const namespace = await cluster.freshNamespace('agent-v1');
    const values0 = { modelConfig: 'default-model-config', toolset: ['preset:read-only'] };
    const { values } = migrateValues('0', '1', values0, { musterServer: { url: MUSTER_URL } });

    expect((await helm(['install', 'ops-bot', chart0], namespace, values0)).code).toBe(0);
    expect(await helm(['install', 'ops-bot-next', chart1], namespace, { ...values, name: 'ops-bot' })).toEqual(expect.objectContaining({ code: 0, stderr: '' }));

    expect(await get(namespace, 'agents', 'v1alpha2', 'ops-bot')).not.toBeNull();
    expect((await get(namespace, 'agenttemplates', 'v1alpha3', 'ops-bot'))?.spec.tools[0].mcp.server.name).toBe('ops-bot-muster');
    expect((await get(namespace, 'remotemcpservers', 'v1alpha3', 'ops-bot-muster'))?.spec.headersFrom).toEqual([{ name: 'X-Muster-Toolset', value: 'preset:read-only' }]);

    expect((await helm(['uninstall', 'ops-bot', '--wait'], namespace)).code).toBe(0);
    expect(await get(namespace, 'agents', 'v1alpha2', 'ops-bot')).toBeNull();
    expect(await get(namespace, 'agenttemplates', 'v1alpha3', 'ops-bot')).not.toBeNull();
    expect(await get(namespace, 'remotemcpservers', 'v1alpha3', 'ops-bot-muster')).not.toBeNull();
  });

  it('upgrades a 0.x release in place to 1.x: an Agent marked helm.sh/resource-policy keep stays until it is deleted', async () => {
    const namespace = await cluster.freshNamespace('agent-v1');
    const values0 = { modelConfig: 'default-model-config', toolset: ['preset:read-only'], annotations: {} };
    expect((await helm(['install', 'ops-bot', chart0], namespace, values0)).code).toBe(0);
    expect((await helm(['upgrade', 'ops-bot', chart0], namespace, { ...values0, annotations: { 'helm.sh/resource-policy': 'keep' } })).code).toBe(0);

    const { values, notCarried, missing } = migrateValues('0', '1', values0, { musterServer: { url: MUSTER_URL } });
    expect({ notCarried, missing }).toEqual({ notCarried: [], missing: [] });
    expect(await helm(['upgrade', 'ops-bot', chart1], namespace, values)).toEqual(expect.objectContaining({ code: 0 }));

    expect(await get(namespace, 'agents', 'v1alpha2', 'ops-bot')).not.toBeNull();
    expect(await get(namespace, 'agenttemplates', 'v1alpha3', 'ops-bot')).not.toBeNull();
    expect((await manifest('ops-bot', namespace)).map((o) => o.kind)).toEqual(['AgentTemplate', 'RemoteMCPServer']);
  });

  it('stores the status kagent writes: per-Harness conditions on the AgentTemplate, conditions on the RemoteMCPServer', async () => {
    const namespace = await cluster.freshNamespace('agent-v1');
    expect((await helm(['install', 'ops-bot', chart1], namespace, { modelConfig: 'm', toolset: ['preset:read-only'], muster: { url: MUSTER_URL } })).code).toBe(0);
    const now = new Date().toISOString();
    const ready = { type: 'Ready', status: 'True', reason: 'Ready', message: 'ready', lastTransitionTime: now };

    for (const [plural, name, status] of [
      ['agenttemplates', 'ops-bot', { observedGeneration: 1, harnesses: [{ harness: 'kagent', desiredRevision: 'r1', conditions: [ready] }] }],
      ['remotemcpservers', 'ops-bot-muster', { observedGeneration: 1, conditions: [{ ...ready, type: 'Accepted' }] }],
    ] as const) {
      const current = await get(namespace, plural, 'v1alpha3', name);
      await cluster.objects.replaceNamespacedCustomObjectStatus({ group: 'kagent.dev', version: 'v1alpha3', namespace, plural, name, body: { ...current, status } });
      expect((await get(namespace, plural, 'v1alpha3', name))?.status).toEqual(status);
    }
  });
});
