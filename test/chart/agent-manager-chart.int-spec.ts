import { describe, expect, it } from '@jest/globals';
import { execa } from 'execa';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { parse, parseAllDocuments } from 'yaml';

// agent-manager's own chart (deploy/charts/agent-manager) through the real helm: lint, the schema,
// and what `helm template` renders for a few value sets (the golden checks CI runs).
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const chartDir = join(repoRoot, 'deploy', 'charts', 'agent-manager');
const helmBin = process.env.HELM_BIN ?? join(repoRoot, 'node_modules', '.bin', 'helm');
const ciValues = (name: string) => join(chartDir, 'ci', name);

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  spec?: any;
  rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace: string }[];
  data?: Record<string, string>;
}

async function helm(args: string[], bin = helmBin) {
  return execa(bin, args, { reject: false, stdin: 'ignore' });
}

/** `helm template` of the chart as release `am` in namespace `platform`; throws with helm's message when it refuses. */
async function render(args: string[], bin = helmBin): Promise<K8sObject[]> {
  const result = await helm(['template', 'am', chartDir, '--namespace', 'platform', ...args], bin);
  if (result.exitCode !== 0) throw new Error(String(result.stderr));
  return parseAllDocuments(String(result.stdout))
    .map((doc) => doc.toJSON() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

async function refusal(args: string[]): Promise<string> {
  const result = await helm(['template', 'am', chartDir, '--namespace', 'platform', ...args]);
  expect(result.exitCode).not.toBe(0);
  return String(result.stderr);
}

/**
 * Type-checks rendered objects against the Kubernetes API types of one version (the npm package
 * kubernetes-types, installed as kubernetes-types-<version>): each object is an object literal of
 * its apiVersion's and kind's type, so a removed API version (no such module), an unknown field
 * (excess property), a missing required field or a wrong type is an error naming the object.
 */
function typeCheck(version: string, rendered: { source: string; objects: K8sObject[] }[]): string[] {
  const lines: string[] = [];
  const names: string[] = [];
  for (const { source, objects } of rendered) {
    for (const o of objects) {
      const [group, apiVersion] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['core', o.apiVersion];
      const i = names.length;
      names.push(`${source}: ${o.apiVersion} ${o.kind} ${o.metadata.name}`);
      lines.push(`import type { ${o.kind} as T${i} } from 'kubernetes-types-${version}/${group.split('.')[0]}/${apiVersion}';`);
      lines.push(`export const o${i}: T${i} = ${JSON.stringify(o)};`);
    }
  }
  const file = join(repoRoot, 'test', 'chart', `rendered-${version}.ts`);
  const text = lines.join('\n');
  const options: ts.CompilerOptions = {
    strict: true, noEmit: true, skipLibCheck: true, types: [], target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler,
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, language, ...rest) => (name === file ? ts.createSourceFile(name, text, language) : getSourceFile(name, language, ...rest));
  host.fileExists = (name) => name === file || fileExists(name);
  host.readFile = (name) => (name === file ? text : readFile(name));
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((d) => {
    const line = d.start === undefined ? 0 : d.file!.getLineAndCharacterOfPosition(d.start).line;
    return `${names[Math.floor(line / 2)]}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}

const one = (objects: K8sObject[], kind: string) => {
  const found = objects.filter((o) => o.kind === kind);
  expect(found).toHaveLength(1);
  return found[0];
};
const container = (objects: K8sObject[]) => one(objects, 'Deployment').spec.template.spec.containers[0];
const env = (objects: K8sObject[]) => Object.fromEntries(container(objects).env.map((e: { name: string; value?: string; valueFrom?: unknown }) => [e.name, e.value ?? e.valueFrom]));

describe('deploy/charts/agent-manager', () => {
  it.each(readdirSync(join(chartDir, 'ci')))('passes helm lint with ci/%s', async (file) => {
    const result = await helm(['lint', chartDir, '-f', ciValues(file)]);
    expect({ code: result.exitCode, out: String(result.stdout) }).toEqual({ code: 0, out: expect.stringContaining('0 chart(s) failed') });
  });

  it('asks a plain install only for authentication, the one thing it cannot default safely', async () => {
    const plain = await refusal([]);
    expect(plain).toContain('auth: authentication is off');
    expect(plain).not.toContain('database.existingSecret');
    expect(plain.match(/Error:/g)).toHaveLength(1);
  });

  it('refuses what the service would refuse at start, naming the value to set, every problem in one message', async () => {
    const both = await refusal(['--set', 'replicaCount=3']);
    expect(both).toContain('database.existingSecret: more than one replica');
    expect(both).toContain('auth: authentication is off');
    expect(both.match(/Error:/g)).toHaveLength(1);
    expect(await refusal(['--set', 'auth.oidc.issuerUrl=https://dex.example.com'])).toContain('auth.oidc.audience: required');
    const base = ['-f', ciValues('single-sqlite-values.yaml')];
    expect(await refusal([...base, '--set', 'metrics.port=8080'])).toContain("metrics.port: 8080 is the service's own port");
    expect(await refusal([...base, '--set', 'auth.kubeImpersonate=true'])).toContain('auth.kubeImpersonate: impersonation needs authenticated callers');
  });

  it('sets ALLOWED_HOSTS (not the deprecated MCP_ALLOWED_HOSTS) from allowedHosts and its old key mcp.allowedHosts', async () => {
    const objects = await render(['-f', ciValues('single-sqlite-values.yaml'), '--set', 'allowedHosts={ops.example.com}', '--set', 'mcp.allowedHosts={old.example.com}']);
    expect(env(objects).MCP_ALLOWED_HOSTS).toBeUndefined();
    expect(String(env(objects).ALLOWED_HOSTS).split(',')).toEqual(expect.arrayContaining(['am-agent-manager.platform.svc', 'ops.example.com', 'old.example.com']));
  });

  it("refuses in the schema the settings the service would stop at (its own bounds and host names)", async () => {
    const base = ['-f', ciValues('single-sqlite-values.yaml')];
    for (const [value, place] of [
      ['config.helmTimeoutSeconds=7200', /config[./]helmTimeoutSeconds/],
      ['config.leaseTtlSeconds=7200', /config[./]leaseTtlSeconds/],
      ['config.writeQueueSeconds=7200', /config[./]writeQueueSeconds/],
      ['config.idempotencyTtlSeconds=2592001', /config[./]idempotencyTtlSeconds/],
      ['config.helmConcurrency=2000', /config[./]helmConcurrency/],
      ['mcp.allowedHosts={*.example.com}', /mcp[./]allowedHosts[./]0/],
      ['allowedHosts={*.example.com}', /allowedHosts[./]0/],
    ] as const) {
      expect(await refusal([...base, '--set', value])).toMatch(place);
    }
  });

  it('mounts extra volumes, e.g. the blueprints file the installation ships', async () => {
    const objects = await render([
      '-f', ciValues('single-sqlite-values.yaml'),
      '--set-json', 'extraVolumes=[{"name":"blueprints","configMap":{"name":"am-blueprints"}}]',
      '--set-json', 'extraVolumeMounts=[{"name":"blueprints","mountPath":"/etc/agent-manager/blueprints","readOnly":true}]',
      '--set-json', 'extraEnv=[{"name":"BLUEPRINTS_FILE","value":"/etc/agent-manager/blueprints/blueprints.yaml"}]',
    ]);
    expect(one(objects, 'Deployment').spec.template.spec.volumes).toEqual(expect.arrayContaining([{ name: 'blueprints', configMap: { name: 'am-blueprints' } }]));
    expect(container(objects).volumeMounts).toEqual(expect.arrayContaining([{ name: 'blueprints', mountPath: '/etc/agent-manager/blueprints', readOnly: true }]));
    expect(env(objects).BLUEPRINTS_FILE).toBe('/etc/agent-manager/blueprints/blueprints.yaml');
  });

  it('refuses values the schema does not know or allow', async () => {
    const base = ['-f', ciValues('single-sqlite-values.yaml')];
    expect(await refusal([...base, '--set', 'replicas=2'])).toMatch(/schema[\s\S]*replicas/);
    // helm 4 names the place as a JSON pointer (/config/logLevel), helm 3 with dots (config.logLevel).
    expect(await refusal([...base, '--set', 'config.logLevel=loud'])).toMatch(/config[./]logLevel/);
    expect(await refusal([...base, '--set', 'rbac.namespaces={Not_A_Namespace}'])).toMatch(/rbac[./]namespaces[./]0/);
  });

  describe('replicas on PostgreSQL with authentication (ci/production-values.yaml)', () => {
    let objects: K8sObject[];
    const values = ['-f', ciValues('production-values.yaml')];

    it('renders a non-root pod with a read-only root, a writable /tmp for helm, probes and a drain long enough', async () => {
      objects = await render(values);
      const pod = one(objects, 'Deployment').spec.template.spec;
      const c = container(objects);
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: expect.any(Number) });
      expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
      expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
      expect(c.volumeMounts).toEqual(expect.arrayContaining([{ name: 'tmp', mountPath: '/tmp' }]));
      expect(c.volumeMounts.map((m: { mountPath: string }) => m.mountPath)).not.toContain('/data');
      const vars = env(objects);
      for (const name of ['HOME', 'HELM_CACHE_HOME', 'HELM_CONFIG_HOME', 'HELM_DATA_HOME']) expect(vars[name]).toMatch(/^\/tmp(\/|$)/);
      expect(c.livenessProbe.httpGet.path).toBe('/healthz');
      expect(c.readinessProbe.httpGet.path).toBe('/readyz');
      expect(c.lifecycle.preStop.exec.command[0]).toBe('sleep');
      expect(c.resources.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
      const shutdown = Number(vars.SHUTDOWN_TIMEOUT_SECONDS);
      expect(shutdown).toBe(120);
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(shutdown + Number(c.lifecycle.preStop.exec.command[1]));
      expect(vars.HOST).toBe('0.0.0.0');
      expect(vars.REPLICA_ID).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    });

    it('takes DATABASE_URL from the Secret and the auth files from their Secret and ConfigMap', async () => {
      const vars = env(objects);
      expect(vars.DATABASE_URL).toEqual({ secretKeyRef: { name: 'agent-manager-database', key: 'DATABASE_URL' } });
      expect(vars).toMatchObject({ OIDC_ISSUER_URL: 'https://dex.example.com', OIDC_AUDIENCE: 'agent-manager', PUBLIC_URL: 'https://agent-manager.example.com' });
      const pod = one(objects, 'Deployment').spec.template.spec;
      const mounts = Object.fromEntries(container(objects).volumeMounts.map((m: { name: string; mountPath: string }) => [m.name, m.mountPath]));
      const volumes = Object.fromEntries(pod.volumes.map((v: { name: string }) => [v.name, v]));
      expect(vars.API_TOKENS_FILE).toBe(`${mounts['api-tokens']}/tokens.yaml`);
      expect(volumes['api-tokens'].secret.secretName).toBe('agent-manager-tokens');
      expect(vars.AUTHZ_POLICY_FILE).toBe(`${mounts.policy}/policy.yaml`);
      const policy = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === volumes.policy.configMap.name);
      expect(parse(policy!.data!['policy.yaml'])).toEqual({
        roles: { viewer: ['get_info', 'list_agents', 'get_agent', 'get_agent_status'] },
        bindings: [{ role: 'viewer', groups: ['platform'], namespaces: ['*'] }],
      });
      expect(one(objects, 'Deployment').spec.template.metadata.annotations['checksum/policy']).toMatch(/^[0-9a-f]{64}$/);
    });

    it('accepts the Service DNS names and the public host on /mcp, and serves metrics on their own port', async () => {
      const hosts = String(env(objects).ALLOWED_HOSTS).split(',');
      expect(hosts).toEqual(expect.arrayContaining(['am-agent-manager', 'am-agent-manager.platform.svc', 'am-agent-manager.platform.svc.cluster.local', 'agent-manager.example.com', 'agents.internal.example.com']));
      expect(env(objects).METRICS_PORT).toBe('9090');
      const service = one(objects, 'Service');
      expect(service.spec.sessionAffinity).toBe('None');
      expect(service.spec.ports.map((p: { name: string }) => p.name)).toEqual(['http', 'metrics']);
    });

    it('grants the ServiceAccount agents and release Secrets (watched, labelled) in the listed namespaces only, watches only those, and impersonation', async () => {
      const sa = one(objects, 'ServiceAccount').metadata.name;
      const roles = objects.filter((o) => o.kind === 'Role');
      expect(roles.map((r) => r.metadata.namespace).sort()).toEqual(['agents', 'team-payments']);
      // The service watches releases and Agents where it may: the same namespaces.
      expect(String(env(objects).WATCH_NAMESPACES).split(',').sort()).toEqual(['agents', 'team-payments']);
      for (const role of roles) {
        expect(role.rules).toEqual([
          { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
          { apiGroups: ['kagent.dev'], resources: ['agents'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
          { apiGroups: ['kagent.dev'], resources: ['modelconfigs'], verbs: ['get', 'list'] },
          { apiGroups: ['kagent.dev'], resources: ['agenttemplates', 'remotemcpservers'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
        ]);
      }
      const bindings = objects.filter((o) => o.kind === 'RoleBinding');
      expect(bindings.map((b) => [b.metadata.namespace, b.subjects])).toEqual(roles.map((r) => [r.metadata.namespace, [{ kind: 'ServiceAccount', name: sa, namespace: 'platform' }]]));
      const clusterRoles = objects.filter((o) => o.kind === 'ClusterRole');
      expect(clusterRoles.map((r) => r.rules)).toEqual([[{ apiGroups: [''], resources: ['users', 'groups'], verbs: ['impersonate'] }]]);
    });

    it('scales with an HPA instead of a fixed replica count, and keeps a PDB and a NetworkPolicy', async () => {
      expect(one(objects, 'Deployment').spec.replicas).toBeUndefined();
      expect(one(objects, 'HorizontalPodAutoscaler').spec).toMatchObject({ minReplicas: 2, maxReplicas: 6, scaleTargetRef: { kind: 'Deployment', name: 'am-agent-manager' } });
      expect(one(objects, 'PodDisruptionBudget').spec).toMatchObject({ maxUnavailable: 1 });
      const policy = one(objects, 'NetworkPolicy').spec;
      expect(policy.ingress[0].ports.map((p: { port: string }) => p.port)).toEqual(['http', 'metrics']);
    });

    it('renders current API versions without a cluster (helm template) and for a current cluster, the old ones for a 1.20 cluster', async () => {
      expect(one(objects, 'PodDisruptionBudget').apiVersion).toBe('policy/v1');
      expect(one(objects, 'HorizontalPodAutoscaler').apiVersion).toBe('autoscaling/v2');
      const current = await render([...values, '--kube-version', '1.30.0']);
      expect([one(current, 'PodDisruptionBudget').apiVersion, one(current, 'HorizontalPodAutoscaler').apiVersion]).toEqual(['policy/v1', 'autoscaling/v2']);
      const old = await render([...values, '--kube-version', '1.20.0']);
      expect([one(old, 'PodDisruptionBudget').apiVersion, one(old, 'HorizontalPodAutoscaler').apiVersion]).toEqual(['policy/v1beta1', 'autoscaling/v2beta2']);
    });

    it('renders a ServiceMonitor only when the cluster serves its API, and current API versions where they exist', async () => {
      expect(objects.some((o) => o.kind === 'ServiceMonitor')).toBe(false);
      const apis = ['monitoring.coreos.com/v1/ServiceMonitor', 'policy/v1/PodDisruptionBudget', 'autoscaling/v2/HorizontalPodAutoscaler'];
      const withApis = await render([...values, ...apis.flatMap((api) => ['--api-versions', api])]);
      expect(one(withApis, 'ServiceMonitor').spec.endpoints).toEqual([{ port: 'metrics', path: '/metrics', interval: '30s', scrapeTimeout: '10s' }]);
      expect(one(withApis, 'PodDisruptionBudget').apiVersion).toBe('policy/v1');
      expect(one(withApis, 'HorizontalPodAutoscaler').apiVersion).toBe('autoscaling/v2');
    });
  });

  it('runs one replica on SQLite on a PersistentVolumeClaim, with cluster-wide RBAC and no impersonation (ci/single-sqlite-values.yaml)', async () => {
    const objects = await render(['-f', ciValues('single-sqlite-values.yaml')]);
    const deployment = one(objects, 'Deployment');
    expect(deployment.spec.replicas).toBe(1);
    expect(env(objects)).toMatchObject({ DATABASE_URL: 'file:/data/agent-manager.db', AUTH_DISABLED: 'true' });
    expect(container(objects).volumeMounts).toEqual(expect.arrayContaining([{ name: 'data', mountPath: '/data' }]));
    const claim = one(objects, 'PersistentVolumeClaim');
    expect(claim.metadata.annotations).toEqual({ 'helm.sh/resource-policy': 'keep' });
    expect(claim.spec).toEqual({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } });
    expect(deployment.spec.template.spec.volumes).toEqual(expect.arrayContaining([{ name: 'data', persistentVolumeClaim: { claimName: claim.metadata.name } }]));
    // Two pods never hold the one SQLite file: the old one stops before the new one starts.
    expect(deployment.spec.strategy).toEqual({ type: 'Recreate' });
    expect(objects.filter((o) => o.kind === 'Role')).toEqual([]);
    expect(one(objects, 'ClusterRole').rules!.map((r) => r.resources)).toEqual([['secrets'], ['agents'], ['modelconfigs'], ['agenttemplates', 'remotemcpservers']]);
    expect(one(objects, 'ClusterRoleBinding').roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'am-agent-manager-platform' });
    expect(objects.some((o) => o.kind === 'PodDisruptionBudget' || o.kind === 'HorizontalPodAutoscaler')).toBe(false);
  });

  it('keeps SQLite on an emptyDir only when asked for, and on a claim the installation names', async () => {
    const base = ['-f', ciValues('single-sqlite-values.yaml')];
    const scratch = await render([...base, '--set', 'database.sqlite.volume=emptyDir']);
    expect(scratch.some((o) => o.kind === 'PersistentVolumeClaim')).toBe(false);
    expect(one(scratch, 'Deployment').spec.template.spec.volumes).toEqual(expect.arrayContaining([{ name: 'data', emptyDir: {} }]));
    const named = await render([...base, '--set', 'database.sqlite.existingClaim=am-store', '--set', 'database.sqlite.storageClassName=fast']);
    expect(named.some((o) => o.kind === 'PersistentVolumeClaim')).toBe(false);
    expect(one(named, 'Deployment').spec.template.spec.volumes).toEqual(expect.arrayContaining([{ name: 'data', persistentVolumeClaim: { claimName: 'am-store' } }]));
    const postgres = await render(['-f', ciValues('production-values.yaml')]);
    expect(postgres.some((o) => o.kind === 'PersistentVolumeClaim')).toBe(false);
    expect(one(postgres, 'Deployment').spec.strategy.type).toBe('RollingUpdate');
    expect(await refusal([...base, '--set', 'database.sqlite.volume=hostPath'])).toMatch(/database[./]sqlite[./]volume/);
  });

  // kubernetes-types on npm has 1.29 and 1.30 (its newest); helm template without a cluster, as a
  // render-only pipeline does, with helm 3 and helm 4.
  it.each(['1.29', '1.30'])('renders manifests that are valid Kubernetes %s objects, with helm 3 and helm 4', async (version) => {
    const helms = { helm3: join(repoRoot, 'node_modules', '.cache', 'agent-manager', 'helm3', 'helm'), helm4: join(repoRoot, 'node_modules', '.cache', 'agent-manager', 'helm4', 'helm') };
    const valueSets: Record<string, string[]> = {
      'a plain install (auth.disabled)': ['--set', 'auth.disabled=true'],
      'ci/single-sqlite-values.yaml': ['-f', ciValues('single-sqlite-values.yaml')],
      'ci/production-values.yaml': ['-f', ciValues('production-values.yaml')],
    };
    const rendered = [];
    for (const [helmName, bin] of Object.entries(helms)) {
      for (const [setName, args] of Object.entries(valueSets)) rendered.push({ source: `${helmName}, ${setName}`, objects: await render(args, bin) });
    }
    const kinds = new Set(rendered.flatMap((r) => r.objects.map((o) => o.kind)));
    expect([...kinds].sort()).toEqual(expect.arrayContaining(['Deployment', 'HorizontalPodAutoscaler', 'PersistentVolumeClaim', 'PodDisruptionBudget', 'NetworkPolicy', 'ClusterRole']));
    expect(typeCheck(version, rendered)).toEqual([]);
  });
});
