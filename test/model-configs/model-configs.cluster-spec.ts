import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { ApiextensionsV1Api, KubeConfig, RbacAuthorizationV1Api, type V1PolicyRule } from '@kubernetes/client-node';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { sha256Hex } from '@app/auth';
import { bearer, connectAs } from '../auth/auth-support.js';
import { TestCluster } from '../support/cluster.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';

/**
 * An agent's modelConfig names a kagent ModelConfig in its namespace. list_model_configs shows
 * them as the caller reads them (KUBE_IMPERSONATE, on with auth: the cluster's RBAC decides), and a
 * write naming one the namespace lacks is refused on both doors, the near-miss first. What cannot
 * be checked (the caller may not list them, the API is missing, the cluster cannot be read) lets
 * the write go ahead with a warning.
 */
// helm installs a few agents on 2 shared cores.
jest.setTimeout(240_000);

const TOKENS = { alice: 'am_alice_7c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f', bob: 'am_bob_0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c' };
/** What helm needs in a namespace to install an agent: the Agent, and Secrets for its release records. */
const AGENT_WRITER: V1PolicyRule[] = [
  { apiGroups: ['kagent.dev'], resources: ['agents'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
  { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
];
const MODEL_CONFIG_READER: V1PolicyRule[] = [{ apiGroups: ['kagent.dev'], resources: ['modelconfigs'], verbs: ['get', 'list'] }];
const OPERATIONS = 'get_info, list_agents, get_agent, validate_agent, create_agent, update_agent, list_model_configs';

const structured = (result: CallToolResult) => result.structuredContent as any;
const errorText = (result: CallToolResult) => (result.content as { text: string }[])[0].text;

describe('kagent ModelConfigs: listed as the caller, and writes checked against them', () => {
  let t: TestApp;
  let cluster: TestCluster;
  let dir: string;
  let ns: string;
  let alice: Client;
  let bob: Client;

  async function bind(namespace: string, role: string, rules: V1PolicyRule[], user: string): Promise<void> {
    const config = new KubeConfig();
    config.loadFromFile(cluster.kubeconfig);
    const rbac = config.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({ namespace, body: { metadata: { name: `${role}-${user.replace(/[^a-z0-9-]/g, '-')}` }, rules } });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: `${role}-${user.replace(/[^a-z0-9-]/g, '-')}` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: `${role}-${user.replace(/[^a-z0-9-]/g, '-')}` },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
      },
    });
  }

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    ns = await cluster.freshNamespace('mc');
    const now = new Date().toISOString();
    await cluster.createModelConfig(ns, 'gpt-5-prod', { provider: 'OpenAI', model: 'gpt-5' }, [
      { type: 'Accepted', status: 'True', reason: 'ModelConfigReconciled', message: 'ok', lastTransitionTime: now },
    ]);
    await cluster.createModelConfig(ns, 'claude-sonnet', { provider: 'Anthropic', model: 'claude-sonnet-4' }, [
      { type: 'Accepted', status: 'False', reason: 'SecretNotFound', message: 'secret claude-sonnet-key not found', lastTransitionTime: now },
    ]);
    // alice may list ModelConfigs and write agents; bob may write agents only.
    await bind(ns, 'agent-writer', AGENT_WRITER, 'token:alice');
    await bind(ns, 'model-config-reader', MODEL_CONFIG_READER, 'token:alice');
    await bind(ns, 'agent-writer', AGENT_WRITER, 'token:bob');

    dir = mkdtempSync(join(tmpdir(), 'agent-manager-model-configs-'));
    const tokens = join(dir, 'tokens.yaml');
    writeFileSync(tokens, `- {name: alice, sha256: ${sha256Hex(TOKENS.alice)}}\n- {name: bob, sha256: ${sha256Hex(TOKENS.bob)}}\n`);
    const policy = join(dir, 'policy.yaml');
    writeFileSync(policy, `roles:\n  editor: [${OPERATIONS}]\nbindings:\n  - {role: editor, subjects: ["token:alice", "token:bob"], namespaces: [${ns}]}\n`);
    t = await startTestApp({
      KUBECONFIG: cluster.kubeconfig,
      HELM_TIMEOUT_SECONDS: '60',
      API_TOKENS_FILE: tokens,
      AUTHZ_POLICY_FILE: policy,
      MCP_ALLOWED_HOSTS: '127.0.0.1,localhost',
      RECONCILE_AUTOMATIC: 'false',
    });
    ({ client: alice } = await connectAs(t.url, TOKENS.alice));
    ({ client: bob } = await connectAs(t.url, TOKENS.bob));
  });

  afterAll(async () => {
    await alice?.close();
    await bob?.close();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('lists name, provider, model and readiness on both doors, and nothing of the API key or its Secret', async () => {
    const rest = await call(t.url, 'GET', `/api/v1/namespaces/${ns}/model-configs`, undefined, bearer(TOKENS.alice));
    expect(rest.status).toBe(200);
    expect(rest.body.namespace).toBe(ns);
    const byName = Object.fromEntries(rest.body.items.map((item: { name: string }) => [item.name, item]));
    expect(byName['gpt-5-prod']).toEqual({ name: 'gpt-5-prod', provider: 'OpenAI', model: 'gpt-5', readiness: 'ready', reason: 'ModelConfigReconciled' });
    expect(byName['claude-sonnet']).toEqual({ name: 'claude-sonnet', provider: 'Anthropic', model: 'claude-sonnet-4', readiness: 'notReady', reason: 'SecretNotFound' });
    // No controller ran for the namespace's other ModelConfigs: no condition yet.
    expect(byName['default-model-config']).toMatchObject({ readiness: 'unknown', reason: null });
    expect(rest.text).not.toMatch(/-key|OPENAI_API_KEY|not found/);

    const viaMcp = (await alice.callTool({ name: 'list_model_configs', arguments: { namespace: ns } })) as CallToolResult;
    expect(viaMcp.isError).toBeFalsy();
    expect(structured(viaMcp)).toEqual(rest.body);
  });

  it('answers 403 on both doors when the cluster does not let the caller list ModelConfigs', async () => {
    const rest = await call(t.url, 'GET', `/api/v1/namespaces/${ns}/model-configs`, undefined, bearer(TOKENS.bob));
    expect(rest.status).toBe(403);
    expect(rest.body.error.message).toMatch(new RegExp(`refused listing ModelConfigs .* in namespace ${ns} for token:bob`));
    const viaMcp = (await bob.callTool({ name: 'list_model_configs', arguments: { namespace: ns } })) as CallToolResult;
    expect(viaMcp.isError).toBe(true);
    expect(errorText(viaMcp)).toMatch(/refused listing ModelConfigs/);
  });

  it('refuses a modelConfig the namespace lacks with 400 on both doors, the near-miss first, and writes nothing', async () => {
    const body = { name: 'typo', namespace: ns, modelConfig: 'gpt-5-prd', toolset: ['preset:none'] };
    const rest = await call(t.url, 'POST', '/api/v1/agents', body, bearer(TOKENS.alice));
    expect(rest.status).toBe(400);
    expect(rest.body.error.code).toBe('invalid_request');
    expect(rest.body.error.details).toEqual([{ path: 'modelConfig', message: rest.body.error.message }]);
    expect(rest.body.error.message).toMatch(new RegExp(`^modelConfig "gpt-5-prd" names no ModelConfig in namespace ${ns}: did you mean "gpt-5-prod"\\? ModelConfigs there: "gpt-5-prod", `));
    expect(rest.body.error.message).toContain('"claude-sonnet"');

    const dry = await call(t.url, 'POST', '/api/v1/agents', { ...body, dryRun: true }, bearer(TOKENS.alice));
    expect(dry.status).toBe(400);
    expect(dry.body.error.message).toBe(rest.body.error.message);

    const viaMcp = (await alice.callTool({ name: 'create_agent', arguments: body })) as CallToolResult;
    expect(viaMcp.isError).toBe(true);
    expect(errorText(viaMcp)).toContain('did you mean "gpt-5-prod"?');

    const validated = (await alice.callTool({ name: 'validate_agent', arguments: body })) as CallToolResult;
    expect(structured(validated)).toMatchObject({ valid: false, violations: [{ path: 'modelConfig', message: rest.body.error.message }], manifests: null });

    expect(await cluster.agent(ns, 'typo')).toBeNull();
    expect((await call(t.url, 'GET', `/api/v1/agents/${ns}/typo`, undefined, bearer(TOKENS.alice))).status).toBe(404);
  });

  it('creates with a ModelConfig the namespace has, and checks an update that names another', async () => {
    const created = await call(t.url, 'POST', '/api/v1/agents', { name: 'checked', namespace: ns, modelConfig: 'gpt-5-prod', toolset: ['preset:none'] }, bearer(TOKENS.alice));
    expect(created.status).toBe(201);
    expect(created.body.warnings).toEqual([]);
    expect((await cluster.agent(ns, 'checked')).spec.declarative.modelConfig).toBe('gpt-5-prod');

    const refused = await call(t.url, 'PATCH', `/api/v1/agents/${ns}/checked`, { modelConfig: 'claude-sonet' }, bearer(TOKENS.alice));
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/did you mean "claude-sonnet"\?/);
    const viaMcp = (await alice.callTool({ name: 'update_agent', arguments: { namespace: ns, name: 'checked', modelConfig: 'claude-sonet', dryRun: true } })) as CallToolResult;
    expect(viaMcp.isError).toBe(true);

    // A ModelConfig kagent has not accepted yet is still one the agent may name: readiness is list_model_configs's to show.
    const moved = await call(t.url, 'PATCH', `/api/v1/agents/${ns}/checked`, { modelConfig: 'claude-sonnet' }, bearer(TOKENS.alice));
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ changed: true, warnings: [] });
    expect((await cluster.agent(ns, 'checked')).spec.declarative.modelConfig).toBe('claude-sonnet');
  });

  it('lets the write go ahead with a warning when the caller may not list ModelConfigs', async () => {
    const created = await call(t.url, 'POST', '/api/v1/agents', { name: 'unchecked', namespace: ns, modelConfig: 'default-model-config', toolset: ['preset:none'] }, bearer(TOKENS.bob));
    expect(created.status).toBe(201);
    expect(created.body.warnings).toEqual([
      {
        path: 'modelConfig',
        message: `modelConfig "default-model-config" was not checked: the cluster does not let the caller list ModelConfigs in namespace ${ns}. kagent runs the agent only if a ModelConfig of that name exists in ${ns} (list_model_configs shows them)`,
      },
    ]);
    const viaMcp = (await bob.callTool({ name: 'create_agent', arguments: { name: 'unchecked-dry', namespace: ns, modelConfig: 'not-there', toolset: ['preset:none'], dryRun: true } })) as CallToolResult;
    expect(viaMcp.isError).toBeFalsy();
    expect(structured(viaMcp).warnings).toEqual([expect.objectContaining({ path: 'modelConfig', message: expect.stringMatching(/^modelConfig "not-there" was not checked/) })]);
  });
});

describe('kagent ModelConfigs when the check cannot be made', () => {
  it('warns that the cluster could not be read (no cluster), and a dry run still answers', async () => {
    const t = await startTestApp();
    try {
      const dry = await call(t.url, 'POST', '/api/v1/agents', { name: 'offline', namespace: 'agents', modelConfig: 'gpt-5-prod', toolset: ['preset:none'], dryRun: true });
      expect(dry.status).toBe(200);
      expect(dry.body.warnings).toEqual([expect.objectContaining({ path: 'modelConfig', message: expect.stringContaining('was not checked: the cluster could not be read') })]);
      const listed = await call(t.url, 'GET', '/api/v1/namespaces/agents/model-configs');
      expect(listed.status).toBe(502);
    } finally {
      await t.close();
    }
  });

  it('warns that the cluster serves no ModelConfig API (its CRD removed from a control plane of its own), and list_model_configs answers 404', async () => {
    const own = await TestCluster.ownControlPlane();
    let t: TestApp | undefined;
    try {
      const config = new KubeConfig();
      config.loadFromFile(own.kubeconfig);
      await config.makeApiClient(ApiextensionsV1Api).deleteCustomResourceDefinition({ name: 'modelconfigs.kagent.dev' });
      // Not freshNamespace: it creates ModelConfigs too, and their API is gone.
      const ns = `no-api-${Date.now().toString(36)}`;
      await own.core.createNamespace({ body: { metadata: { name: ns } } });
      t = await startTestApp({ KUBECONFIG: own.kubeconfig, RECONCILE_AUTOMATIC: 'false' });
      // The API server stops serving the resource shortly after the CRD is deleted.
      let listed = await call(t.url, 'GET', `/api/v1/namespaces/${ns}/model-configs`);
      for (let i = 0; i < 100 && listed.status !== 404; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        listed = await call(t.url, 'GET', `/api/v1/namespaces/${ns}/model-configs`);
      }
      expect(listed.status).toBe(404);
      expect(listed.body.error.message).toMatch(/the cluster serves no kagent ModelConfig API \(modelconfigs\.kagent\.dev\/v1alpha2\)/);
      const dry = await call(t.url, 'POST', '/api/v1/agents', { name: 'no-api', namespace: ns, modelConfig: 'gpt-5-prod', toolset: ['preset:none'], dryRun: true });
      expect(dry.status).toBe(200);
      expect(dry.body.warnings).toEqual([
        {
          path: 'modelConfig',
          message: `modelConfig "gpt-5-prod" was not checked: the cluster serves no kagent ModelConfig API (modelconfigs.kagent.dev/v1alpha2). kagent runs the agent only if a ModelConfig of that name exists in ${ns} (list_model_configs shows them)`,
        },
      ]);
    } finally {
      await t?.close();
      await own.stop();
    }
  });
});
