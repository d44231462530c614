// npm test: also with helm 3 — the service's own chart installed by each major (the APIs it asks the server for)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { AuthorizationV1Api, CoreV1Api, KubeConfig, KubernetesObjectApi, RbacAuthorizationV1Api, type KubernetesObject } from '@kubernetes/client-node';
import { execa } from 'execa';
import { parseAllDocuments, stringify } from 'yaml';
import { sha256Hex } from '@app/auth';
import { resolveHelmBinary } from '@app/helm';
import { TestCluster } from '../support/cluster.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { call, freshDatabaseUrl, type FreshDatabase } from '../support/test-app.js';

// helm runs against the API server, and the service process starts and runs helm: on 2 busy cores.
jest.setTimeout(300_000);

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const chartDir = join(repoRoot, 'deploy', 'charts', 'agent-manager');
const helmBin = process.env.HELM_BIN ?? resolveHelmBinary();

/**
 * agent-manager's own chart installed into the test API server (objects accepted; no kubelet runs
 * the pods), then the service run here with the chart's ServiceAccount token: every write and read
 * works on an agent in the namespace the chart grants, and nothing beyond it is granted.
 */
describe('deploy/charts/agent-manager in a real API server', () => {
  let cluster: TestCluster;
  let dir: string;
  let platform: string;
  let agents: string;
  let db: FreshDatabase | undefined;
  let service: ServiceProcess | undefined;
  let objects: KubernetesObject[] = [];
  let saKubeconfig: string;

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    dir = mkdtempSync(join(tmpdir(), 'agent-manager-chart-'));
    platform = await cluster.freshNamespace('platform');
    agents = await cluster.freshNamespace('agents');
  });

  let impersonating: ServiceProcess | undefined;

  afterAll(async () => {
    for (const s of [service, impersonating]) if (s && s.child.exitCode === null && s.child.signalCode === null) await s.stop();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('installs: every object the chart renders is accepted by the API server', async () => {
    await cluster.core.createNamespacedSecret({
      namespace: platform,
      body: { metadata: { name: 'agent-manager-database' }, stringData: { DATABASE_URL: 'postgresql://agent-manager@postgres.platform.svc:5432/agent_manager' } },
    });
    await cluster.core.createNamespacedSecret({ namespace: platform, body: { metadata: { name: 'agent-manager-tokens' }, stringData: { 'tokens.yaml': '[]\n' } } });
    const values = join(dir, 'values.yaml');
    writeFileSync(
      values,
      stringify({
        replicaCount: 2,
        database: { existingSecret: 'agent-manager-database' },
        auth: { apiTokens: { existingSecret: 'agent-manager-tokens' }, policy: { inline: { roles: { viewer: ['list_agents'] }, bindings: [{ role: 'viewer', groups: ['ops'], namespaces: ['*'] }] } } },
        rbac: { namespaces: [agents] },
        config: { reconcileAutomatic: false },
        autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 4 },
        metrics: { port: 9090 },
      }),
    );
    const install = await execa(helmBin, ['install', 'am', chartDir, '--namespace', platform, '--values', values, '--kubeconfig', cluster.kubeconfig], { reject: false, stdin: 'ignore' });
    expect({ code: install.exitCode, stderr: String(install.stderr) }).toEqual({ code: 0, stderr: '' });
    const manifest = await execa(helmBin, ['get', 'manifest', 'am', '--namespace', platform, '--kubeconfig', cluster.kubeconfig], { stdin: 'ignore' });
    objects = parseAllDocuments(String(manifest.stdout))
      .map((d) => d.toJSON() as KubernetesObject | null)
      .filter((o): o is KubernetesObject => o !== null);
    expect(objects.map((o) => o.kind).sort()).toEqual(
      ['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'NetworkPolicy', 'PodDisruptionBudget', 'Role', 'RoleBinding', 'Service', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding'].sort(),
    );
    // The 1.20 API server serves no policy/v1 nor autoscaling/v2: helm install asks it and renders what it serves.
    const apiVersions = Object.fromEntries(objects.map((o) => [o.kind, o.apiVersion]));
    expect([apiVersions.PodDisruptionBudget, apiVersions.HorizontalPodAutoscaler]).toEqual(['policy/v1beta1', 'autoscaling/v2beta2']);
    const api = KubernetesObjectApi.makeApiClient(adminConfig(cluster.kubeconfig));
    for (const object of objects) {
      const live = await api.read({ apiVersion: object.apiVersion!, kind: object.kind!, metadata: { name: object.metadata!.name!, namespace: object.metadata!.namespace } });
      expect(live.metadata?.labels?.['app.kubernetes.io/instance']).toBe('am');
    }
  });

  it('installs with only authentication decided: one replica whose SQLite claim the API server accepts and helm uninstall keeps', async () => {
    const namespace = await cluster.freshNamespace('plain');
    const kube = ['--namespace', namespace, '--kubeconfig', cluster.kubeconfig];
    const install = await execa(helmBin, ['install', 'plain', chartDir, ...kube, '--set', 'auth.disabled=true'], { reject: false, stdin: 'ignore' });
    expect({ code: install.exitCode, stderr: String(install.stderr) }).toEqual({ code: 0, stderr: '' });
    const claim = await cluster.core.readNamespacedPersistentVolumeClaim({ name: 'plain-agent-manager-data', namespace });
    expect(claim.spec?.resources?.requests).toEqual({ storage: '1Gi' });
    const deployment = await KubernetesObjectApi.makeApiClient(adminConfig(cluster.kubeconfig)).read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'plain-agent-manager', namespace } });
    expect((deployment as { spec?: { replicas?: number } }).spec?.replicas).toBe(1);
    const uninstall = await execa(helmBin, ['uninstall', 'plain', ...kube], { reject: false, stdin: 'ignore' });
    expect(uninstall.exitCode).toBe(0);
    // The store's claim outlives the release (helm.sh/resource-policy: keep).
    expect((await cluster.core.readNamespacedPersistentVolumeClaim({ name: 'plain-agent-manager-data', namespace })).metadata?.name).toBe('plain-agent-manager-data');
  });

  it('runs the service with the ServiceAccount token: create, get, status, update, rollback and delete all work', async () => {
    saKubeconfig = await serviceAccountKubeconfig(cluster.kubeconfig, platform, 'am-agent-manager', join(dir, 'sa-kubeconfig'));
    db = await freshDatabaseUrl();
    // The settings the chart gives the pod, but on loopback with authentication off and a store of its own.
    service = await startServiceProcess({ DATABASE_URL: db.url, KUBECONFIG: saKubeconfig, RECONCILE_AUTOMATIC: 'false', HELM_TIMEOUT_SECONDS: '60', HELM_BIN: helmBin });
    const path = `/api/v1/agents/${agents}/rbac-probe`;
    const created = await call(service.url, 'POST', '/api/v1/agents', { name: 'rbac-probe', namespace: agents, modelConfig: 'default-model-config', toolset: ['preset:read-only'] });
    expect({ status: created.status, error: created.body?.error }).toEqual({ status: 201, error: undefined });
    expect(await cluster.agent(agents, 'rbac-probe')).not.toBeNull();

    expect((await call(service.url, 'GET', path)).status).toBe(200);
    const status = await call(service.url, 'GET', `${path}/status`);
    // Read from the release and the live Agent (no controller sets its conditions here): nothing refused on the way.
    expect({ status: status.status, verdict: status.body?.verdict, drift: status.body?.drift }).toEqual({ status: 200, verdict: 'progressing', drift: [] });
    const updated = await call(service.url, 'PATCH', path, { toolset: ['preset:none'] });
    expect({ status: updated.status, error: updated.body?.error }).toEqual({ status: 200, error: undefined });
    const rolledBack = await call(service.url, 'POST', `${path}/rollback`, { revision: 1 });
    expect({ status: rolledBack.status, error: rolledBack.body?.error }).toEqual({ status: 200, error: undefined });
    const deleted = await call(service.url, 'DELETE', path);
    expect({ status: deleted.status, error: deleted.body?.error }).toEqual({ status: 200, error: undefined });
    expect(await cluster.agent(agents, 'rbac-probe')).toBeNull();
  });

  it('grants nothing beyond the agents namespace: a write elsewhere is refused by the cluster, Secrets elsewhere stay unreadable', async () => {
    const elsewhere = await call(service!.url, 'POST', '/api/v1/agents', { name: 'rbac-probe', namespace: platform, modelConfig: 'default-model-config', toolset: ['preset:read-only'] });
    expect(elsewhere.status).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(elsewhere.body)).toMatch(/forbidden/i);
    expect(await cluster.agent(platform, 'rbac-probe')).toBeNull();

    const review = adminConfig(saKubeconfig).makeApiClient(AuthorizationV1Api);
    const can = async (namespace: string, verb: string, group: string, resource: string) =>
      (await review.createSelfSubjectAccessReview({ body: { spec: { resourceAttributes: { namespace, verb, group, resource } } } })).status?.allowed === true;
    expect(await can(agents, 'list', '', 'secrets')).toBe(true);
    expect(await can(agents, 'patch', 'kagent.dev', 'agents')).toBe(true);
    expect(await can(platform, 'get', '', 'secrets')).toBe(false);
    expect(await can('kube-system', 'list', '', 'secrets')).toBe(false);
    expect(await can(agents, 'create', '', 'pods')).toBe(false);
    // Authentication is on (API tokens), so writes impersonate the caller (KUBE_IMPERSONATE's default): granted.
    expect(await can('', 'impersonate', '', 'users')).toBe(true);
    expect(await can('', 'impersonate', '', 'groups')).toBe(true);
    expect(await can('', 'impersonate', '', 'serviceaccounts')).toBe(false);
  });

  it("writes as the caller with KUBE_IMPERSONATE: the chart's impersonate grant is enough (helm --kube-as-user/--kube-as-group, reads with Impersonate-* headers)", async () => {
    const token = 'am_deployer_5f4e3d2c1b0a99887766554433221100';
    writeFileSync(join(dir, 'tokens.yaml'), stringify([{ name: 'deployer', sha256: sha256Hex(token), groups: ['deployers'] }]));
    writeFileSync(join(dir, 'policy.yaml'), stringify({ roles: { admin: ['*'] }, bindings: [{ role: 'admin', subjects: ['token:deployer'], namespaces: ['*'] }] }));
    const rbac = adminConfig(cluster.kubeconfig).makeApiClient(RbacAuthorizationV1Api);
    const rules = [
      { apiGroups: ['kagent.dev'], resources: ['agents'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
    ];
    await rbac.createNamespacedRole({ namespace: agents, body: { metadata: { name: 'deployers' }, rules } });
    await rbac.createNamespacedRoleBinding({
      namespace: agents,
      body: { metadata: { name: 'deployers' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'deployers' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'deployers' }] },
    });
    impersonating = await startServiceProcess({
      DATABASE_URL: db!.url,
      KUBECONFIG: saKubeconfig,
      RECONCILE_AUTOMATIC: 'false',
      HELM_TIMEOUT_SECONDS: '60',
      HELM_BIN: helmBin,
      API_TOKENS_FILE: join(dir, 'tokens.yaml'),
      AUTHZ_POLICY_FILE: join(dir, 'policy.yaml'),
      KUBE_IMPERSONATE: 'true',
    });
    const auth = { authorization: `Bearer ${token}` };
    const created = await call(impersonating.url, 'POST', '/api/v1/agents', { name: 'as-caller', namespace: agents, modelConfig: 'default-model-config', toolset: ['preset:none'] }, auth);
    expect({ status: created.status, error: created.body?.error }).toEqual({ status: 201, error: undefined });
    expect((await call(impersonating.url, 'GET', `/api/v1/agents/${agents}/as-caller/status`, undefined, auth)).status).toBe(200);
    const deleted = await call(impersonating.url, 'DELETE', `/api/v1/agents/${agents}/as-caller`, undefined, auth);
    expect({ status: deleted.status, error: deleted.body?.error }).toEqual({ status: 200, error: undefined });
    expect(await cluster.agent(agents, 'as-caller')).toBeNull();
  });
});

function adminConfig(kubeconfig: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfig);
  return config;
}

/** A kubeconfig for the ServiceAccount: a token from the TokenRequest API, the API server and CA of `admin`. */
async function serviceAccountKubeconfig(admin: string, namespace: string, name: string, file: string): Promise<string> {
  const config = adminConfig(admin);
  const answer = await config
    .makeApiClient(CoreV1Api)
    .createNamespacedServiceAccountToken({ name, namespace, body: { spec: { audiences: ['https://kubernetes.default.svc'], expirationSeconds: 3600 } } });
  const cluster = config.getCurrentCluster()!;
  const ca = cluster.caData ? { 'certificate-authority-data': cluster.caData } : { 'certificate-authority': cluster.caFile };
  writeFileSync(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: { server: cluster.server, ...ca } }],
      users: [{ name, user: { token: answer.status!.token } }],
      contexts: [{ name, context: { cluster: 'test', user: name, namespace } }],
      'current-context': name,
    }),
    { mode: 0o600 },
  );
  return file;
}
