// npm test: also with helm 3 — --kube-as-user / --kube-as-group and each major's Forbidden text
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { KubeConfig, RbacAuthorizationV1Api, type V1PolicyRule } from '@kubernetes/client-node';
import { sha256Hex } from '@app/auth';
import { HelmClient, resolveHelmBinary } from '@app/helm';
import { bearer } from '../auth/auth-support.js';
import { TestCluster } from '../support/cluster.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';

/**
 * Writes act as the caller (KUBE_IMPERSONATE, on by default with auth): the real API server runs
 * with RBAC, the test kubeconfig's own token is a cluster admin, and the callers are bound (or not)
 * by Roles in their namespaces. What the policy allows, the cluster's RBAC still decides.
 */
// helm runs a few times per step on 2 shared cores.
jest.setTimeout(240_000);

const TOKENS = { admin: 'am_admin_0f1e2d3c4b5a69788796a5b4c3d2e1f0', alice: 'am_alice_1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d', carol: 'am_carol_6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a', dave: 'am_dave_00112233445566778899aabbccddeeff' };
/** What helm needs in a namespace to install, read and remove an agent: the Agent, and Secrets for its release records. */
const AGENT_WRITER: V1PolicyRule[] = [
  { apiGroups: ['kagent.dev'], resources: ['agents'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
  { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
];
/** Enough for helm status (the release records), not for the Agent itself. */
const RELEASE_READER: V1PolicyRule[] = [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list'] }];

describe('writes and reads act as the caller on a cluster with RBAC', () => {
  let t: TestApp;
  let cluster: TestCluster;
  let rbac: RbacAuthorizationV1Api;
  let helm: HelmClient;
  let dir: string;
  let nsA: string;
  let nsB: string;
  let nsC: string;
  const agent = { name: 'rbac-helper', modelConfig: 'default-model-config', toolset: ['preset:none'] };

  async function bind(namespace: string, role: string, rules: V1PolicyRule[], subject: { kind: 'User' | 'Group'; name: string }): Promise<void> {
    await rbac.createNamespacedRole({ namespace, body: { metadata: { name: role }, rules } });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: { metadata: { name: `${role}-${subject.name.replace(/[^a-z0-9-]/g, '-')}` }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', ...subject }] },
    });
  }

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    const config = new KubeConfig();
    config.loadFromFile(cluster.kubeconfig);
    rbac = config.makeApiClient(RbacAuthorizationV1Api);
    helm = new HelmClient({ bin: process.env.HELM_BIN ?? resolveHelmBinary(), kubeconfig: cluster.kubeconfig, timeoutSeconds: 60 });
    [nsA, nsB, nsC] = [await cluster.freshNamespace('imp-a'), await cluster.freshNamespace('imp-b'), await cluster.freshNamespace('imp-c')];
    await bind(nsA, 'agent-writer', AGENT_WRITER, { kind: 'User', name: 'token:alice' });
    await bind(nsC, 'agent-writer', AGENT_WRITER, { kind: 'Group', name: 'team-c' });
    await bind(nsA, 'release-reader', RELEASE_READER, { kind: 'User', name: 'token:dave' });

    dir = mkdtempSync(join(tmpdir(), 'agent-manager-impersonation-'));
    const tokens = join(dir, 'tokens.yaml');
    writeFileSync(
      tokens,
      [
        `- {name: ci-platform, sha256: ${sha256Hex(TOKENS.admin)}}`,
        `- {name: alice, sha256: ${sha256Hex(TOKENS.alice)}}`,
        `- {name: carol, sha256: ${sha256Hex(TOKENS.carol)}, groups: [team-x, team-c]}`,
        `- {name: dave, sha256: ${sha256Hex(TOKENS.dave)}}`,
        '',
      ].join('\n'),
    );
    const policy = join(dir, 'policy.yaml');
    writeFileSync(
      policy,
      [
        'roles:',
        '  editor: [get_info, list_agents, get_agent, get_agent_status, list_agent_revisions, validate_agent, create_agent, update_agent, delete_agent, rollback_agent]',
        '  admin: ["*"]',
        'bindings:',
        '  - {role: admin, subjects: ["token:ci-platform"], namespaces: ["*"]}',
        // The policy lets alice into both namespaces: the cluster refuses her in the second.
        `  - {role: editor, subjects: ["token:alice"], namespaces: [${nsA}, ${nsB}]}`,
        `  - {role: editor, groups: [team-c], namespaces: [${nsC}]}`,
        `  - {role: editor, subjects: ["token:dave"], namespaces: [${nsA}]}`,
        '',
      ].join('\n'),
    );
    t = await startTestApp({ KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '60', API_TOKENS_FILE: tokens, AUTHZ_POLICY_FILE: policy, RECONCILE_AUTOMATIC: 'false' });
  });

  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('creates where the cluster binds the caller: 201 and the Agent exists', async () => {
    const res = await call(t.url, 'POST', '/api/v1/agents', { ...agent, namespace: nsA }, bearer(TOKENS.alice));
    expect(res.status).toBe(201);
    expect(res.body.agent).toMatchObject({ namespace: nsA, name: agent.name, createdBy: 'token:alice' });
    expect(await cluster.agent(nsA, agent.name)).not.toBeNull();
  });

  it("refuses where the policy allows but the cluster does not: 403 with the cluster's message, nothing written, the operation journaled failed", async () => {
    const res = await call(t.url, 'POST', '/api/v1/agents', { ...agent, namespace: nsB }, bearer(TOKENS.alice));
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
    expect(res.body.error.message).toMatch(new RegExp(`is forbidden: User "token:alice" cannot \\w+ resource "\\w+" in API group "[\\w.]*" in the namespace "${nsB}"`));

    expect((await call(t.url, 'GET', `/api/v1/agents/${nsB}/${agent.name}`, undefined, bearer(TOKENS.alice))).status).toBe(404);
    expect(await cluster.agent(nsB, agent.name)).toBeNull();
    expect(await helm.status({ namespace: nsB, name: agent.name })).toBeNull();

    const journal = await call(t.url, 'GET', `/api/v1/operations?namespace=${nsB}`, undefined, bearer(TOKENS.admin));
    expect(journal.body.items).toEqual([
      expect.objectContaining({ operation: 'create_agent', name: agent.name, outcome: 'failed', subject: 'token:alice', authMethod: 'token', errorCode: 'forbidden', errorMessage: res.body.error.message }),
    ]);
  });

  it('acts with every group of the caller, each its own group to the cluster: a write and a status read through a group binding', async () => {
    const res = await call(t.url, 'POST', '/api/v1/agents', { ...agent, namespace: nsC }, bearer(TOKENS.carol));
    expect(res.status).toBe(201);
    expect(await cluster.agent(nsC, agent.name)).not.toBeNull();

    const status = await call(t.url, 'GET', `/api/v1/agents/${nsC}/${agent.name}/status`, undefined, bearer(TOKENS.carol));
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ verdict: 'progressing', releaseStatus: 'deployed' });
  });

  it('reads the live Agent as the caller: one who may read the release but not the Agent is refused by the cluster', async () => {
    const allowed = await call(t.url, 'GET', `/api/v1/agents/${nsA}/${agent.name}/status`, undefined, bearer(TOKENS.alice));
    expect(allowed.status).toBe(200);
    expect(allowed.body.verdict).toBe('progressing');

    const refused = await call(t.url, 'GET', `/api/v1/agents/${nsA}/${agent.name}/status`, undefined, bearer(TOKENS.dave));
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain(`agents.kagent.dev "${agent.name}" is forbidden: User "token:dave" cannot get resource "agents" in API group "kagent.dev" in the namespace "${nsA}"`);
  });

  it('reconciles as the service itself, whoever asks (the admin token has no RBAC in the cluster)', async () => {
    const res = await call(t.url, 'POST', '/api/v1/reconcile', { namespace: nsA, dryRun: true }, bearer(TOKENS.admin));
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([expect.objectContaining({ namespace: nsA, name: agent.name, action: 'none' })]);
    expect(res.body.items[0].error).toBeUndefined();
  });

  it('deletes as the caller where the cluster binds them', async () => {
    const refused = await call(t.url, 'DELETE', `/api/v1/agents/${nsC}/${agent.name}`, undefined, bearer(TOKENS.alice));
    expect(refused.status).toBe(403); // the policy: alice is no editor in nsC
    const res = await call(t.url, 'DELETE', `/api/v1/agents/${nsA}/${agent.name}`, undefined, bearer(TOKENS.alice));
    expect(res.status).toBe(200);
    expect(await cluster.agent(nsA, agent.name)).toBeNull();
  });
});
