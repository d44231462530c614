import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { HelmClient, resolveHelmBinary } from '@app/helm';
import { PROJECT_ROOT } from '@app/common';
import { join } from 'node:path';
import { TestCluster } from '../support/cluster.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';
import { connect } from '../mcp/mcp-support.js';

// Sized for 2 cores shared with other builds: a dozen helm runs (HELM_TIMEOUT_SECONDS 60 each).
jest.setTimeout(300_000);

/**
 * Issue 28 point 4, docs/contract.md §13: a release Flux or Argo CD manages is refused for live
 * writes (409 gitops_owned, naming the owner) and for adoption, on both doors; reads, status,
 * validate and dry runs still answer. Real helm, the real API server with Flux's HelmRelease and
 * Argo CD's Application CRDs installed (test/cluster/crds), the objects made as those tools make
 * them: a HelmRelease, and on the Agent helm-controller's origin labels
 * (`helm.toolkit.fluxcd.io/name`, `/namespace`, which its post-renderer puts on every object it
 * applies); an Application, and on the Agent Argo CD's tracking-id annotation
 * (`<app>:<group>/<kind>:<namespace>/<name>`, Argo CD 3's default tracking).
 */
describe('releases someone else owns', () => {
  let t: TestApp;
  let cluster: TestCluster;
  let helm: HelmClient;
  let mcp: Client;
  let ns: string;
  let gitopsNs: string;
  const spec = { modelConfig: 'default-model-config', toolset: ['preset:read-only'], systemMessage: 'You help.', description: 'Helps.' };

  const path = (name: string) => `/api/v1/agents/${ns}/${name}`;
  const create = async (name: string) => expect((await call(t.url, 'POST', '/api/v1/agents', { ...spec, namespace: ns, name })).status).toBe(201);
  const error = (result: CallToolResult) => (result.structuredContent as { error: { code: string; message: string } }).error;

  /** A Flux HelmRelease for the agent's release, as a user commits it to git and Flux applies it. */
  async function helmRelease(name: string): Promise<void> {
    await cluster.objects.createNamespacedCustomObject({
      group: 'helm.toolkit.fluxcd.io',
      version: 'v2',
      namespace: gitopsNs,
      plural: 'helmreleases',
      body: {
        apiVersion: 'helm.toolkit.fluxcd.io/v2',
        kind: 'HelmRelease',
        metadata: { name },
        spec: {
          interval: '10m',
          releaseName: name,
          targetNamespace: ns,
          storageNamespace: ns,
          chart: { spec: { chart: 'agent', version: '0.x', sourceRef: { kind: 'HelmRepository', name: 'giantswarm-agents' } } },
          values: { modelConfig: spec.modelConfig, toolset: spec.toolset },
        },
      },
    });
  }

  /** What helm-controller's origin-labels post-renderer puts on every object of a release it applies. */
  const fluxLabels = (name: string) => ({ 'helm.toolkit.fluxcd.io/name': name, 'helm.toolkit.fluxcd.io/namespace': gitopsNs });

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    t = await startTestApp({ KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '60', RECONCILE_AUTOMATIC: 'false' });
    helm = new HelmClient({ bin: process.env.HELM_BIN ?? resolveHelmBinary(), kubeconfig: cluster.kubeconfig, timeoutSeconds: 60 });
    ns = await cluster.freshNamespace('gitops');
    gitopsNs = await cluster.freshNamespace('flux-apps');
    mcp = await connect(t.url, '?toolsets=agents,revisions,admin');
  });

  afterAll(async () => {
    await mcp?.close();
    await t?.close();
  });

  describe('Flux: a HelmRelease took the release over after agent-manager created it', () => {
    const name = 'flux-owned';

    beforeAll(async () => {
      await create(name);
      // A write before Flux appears passes (and gives the agent a revision to roll back to).
      expect((await call(t.url, 'PATCH', path(name), { description: 'Before Flux.' })).status).toBe(200);
      await helmRelease(name);
      await cluster.editAgent(ns, name, (agent) => Object.assign(agent.metadata.labels, fluxLabels(name)));
    });

    it.each<[string, string, string, object | undefined]>([
      ['update', 'PATCH', '', { description: 'By hand.' }],
      ['rollback', 'POST', '/rollback', { revision: 1 }],
      ['delete', 'DELETE', '', undefined],
    ])('%s is refused with 409 gitops_owned naming the HelmRelease, and changes nothing', async (_write, method, suffix, body) => {
      const before = await call(t.url, 'GET', path(name));
      const refused = await call(t.url, method, path(name) + suffix, body);
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe('gitops_owned');
      expect(refused.body.error.message).toContain(`managed by Flux HelmRelease ${gitopsNs}/${name}`);
      expect(refused.body.error.message).toMatch(/in git instead/);
      expect(refused.body.error.details).toEqual([{ path: 'owner', message: expect.stringContaining(`HelmRelease ${gitopsNs}/${name} (helm.toolkit.fluxcd.io/v2)`) }]);
      const after = await call(t.url, 'GET', path(name));
      expect(after.body.version).toBe(before.body.version);
      expect((await cluster.agent(ns, name))?.spec.description).toBe('Before Flux.');
    });

    it('is refused on MCP with isError gitops_owned', async () => {
      const result = (await mcp.callTool({ name: 'update_agent', arguments: { namespace: ns, name, description: 'Over MCP.' } })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(error(result)).toMatchObject({ code: 'gitops_owned', message: expect.stringContaining(`Flux HelmRelease ${gitopsNs}/${name}`) });
      const rollback = (await mcp.callTool({ name: 'rollback_agent', arguments: { namespace: ns, name, revision: 1 } })) as CallToolResult;
      expect(error(rollback).code).toBe('gitops_owned');
    });

    it('reads, status, validate and dry runs still answer', async () => {
      expect((await call(t.url, 'GET', path(name))).status).toBe(200);
      expect((await call(t.url, 'GET', `${path(name)}/status`)).status).toBe(200);
      expect((await call(t.url, 'GET', `${path(name)}/revisions`)).status).toBe(200);
      expect((await call(t.url, 'POST', '/api/v1/agents/validate', { ...spec, namespace: ns, name })).status).toBe(200);
      const dryRun = await call(t.url, 'PATCH', path(name), { description: 'Just looking.', dryRun: true });
      expect(dryRun.status).toBe(200);
      expect(dryRun.body).toMatchObject({ dryRun: true, changed: true });
      expect(dryRun.body.warnings).toContainEqual({ path: 'owner', message: expect.stringContaining(`would be refused (gitops_owned): agent ${ns}/${name} is managed by Flux HelmRelease ${gitopsNs}/${name}`) });
    });

    it('once Flux lets go of the release (its labels removed), the next write passes', async () => {
      await cluster.editAgent(ns, name, (agent) => {
        for (const key of Object.keys(fluxLabels(name))) delete agent.metadata.labels[key];
      });
      const updated = await call(t.url, 'PATCH', path(name), { description: 'After Flux.' });
      expect(updated.status).toBe(200);
      expect((await cluster.agent(ns, name))?.spec.description).toBe('After Flux.');
    });
  });

  describe('Argo CD: an Application tracks the live Agent', () => {
    const name = 'argo-owned';
    const application = 'agents-app';

    beforeAll(async () => {
      await create(name);
      expect((await call(t.url, 'PATCH', path(name), { description: 'Before Argo CD.' })).status).toBe(200);
      await cluster.objects.createNamespacedCustomObject({
        group: 'argoproj.io',
        version: 'v1alpha1',
        namespace: gitopsNs,
        plural: 'applications',
        body: {
          apiVersion: 'argoproj.io/v1alpha1',
          kind: 'Application',
          metadata: { name: application },
          spec: {
            project: 'default',
            source: { repoURL: 'https://git.example.com/platform/agents.git', path: `agents/${name}`, targetRevision: 'main', helm: { releaseName: name } },
            destination: { server: 'https://kubernetes.default.svc', namespace: ns },
            syncPolicy: { automated: { prune: true, selfHeal: true } },
          },
        },
      });
      // Argo CD in annotation tracking (its default since 3.0), the Application in Argo CD's own namespace: `<app>:<group>/<kind>:<namespace>/<name>`.
      await cluster.editAgent(ns, name, (agent) => {
        agent.metadata.annotations = { ...agent.metadata.annotations, 'argocd.argoproj.io/tracking-id': `${application}:kagent.dev/Agent:${ns}/${name}` };
      });
    });

    it.each<[string, string, string, object | undefined]>([
      ['update', 'PATCH', '', { description: 'By hand.' }],
      ['rollback', 'POST', '/rollback', { revision: 1 }],
      ['delete', 'DELETE', '', undefined],
    ])('%s is refused with 409 gitops_owned naming the Application', async (_write, method, suffix, body) => {
      const refused = await call(t.url, method, path(name) + suffix, body);
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe('gitops_owned');
      expect(refused.body.error.message).toContain(`managed by Argo CD Application ${application}`);
      expect(refused.body.error.message).toContain('annotation argocd.argoproj.io/tracking-id');
      expect((await cluster.agent(ns, name))?.spec.description).toBe('Before Argo CD.');
    });

    it('is refused on MCP with isError gitops_owned; status still answers', async () => {
      const result = (await mcp.callTool({ name: 'delete_agent', arguments: { namespace: ns, name } })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(error(result)).toMatchObject({ code: 'gitops_owned', message: expect.stringContaining(`Argo CD Application ${application}`) });
      const status = (await mcp.callTool({ name: 'get_agent_status', arguments: { namespace: ns, name } })) as CallToolResult;
      expect(status.isError).toBeFalsy();
    });
  });

  describe('adopt: a release Flux installed is not taken into the store', () => {
    const name = 'flux-installed';

    beforeAll(async () => {
      await helmRelease(name);
      // As helm-controller installs it: the chart's values, its origin labels on what it applies.
      await helm.install({ namespace: ns, name }, { ref: join(PROJECT_ROOT, 'charts', 'agent') }, { ...spec, labels: fluxLabels(name) });
    });

    it('is refused on REST and MCP with 409 gitops_owned naming the HelmRelease; its dry run answers', async () => {
      const refused = await call(t.url, 'POST', '/api/v1/agents/adopt', { namespace: ns, name });
      expect(refused.status).toBe(409);
      expect(refused.body.error).toMatchObject({ code: 'gitops_owned', message: expect.stringContaining(`Flux HelmRelease ${gitopsNs}/${name}`) });
      const result = (await mcp.callTool({ name: 'adopt_agent', arguments: { namespace: ns, name } })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(error(result).code).toBe('gitops_owned');
      expect((await call(t.url, 'GET', path(name))).status).toBe(404);
      expect((await call(t.url, 'POST', '/api/v1/agents/adopt', { namespace: ns, name, dryRun: true })).status).toBe(200);
    });
  });
});
