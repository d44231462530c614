// Seeds a store with agents through the service's own store layer (the built dist/), not helm:
// the agents look to the service as if earlier creates had succeeded. The one place the
// benchmark knows the store's API: when the repository's signatures change, adjust here.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL, URLSearchParams } from 'node:url';
import { promisify } from 'node:util';
import { kubeApi } from './kube-api.mjs';

const ROOT = join(import.meta.dirname, '..', '..');
const dist = (path) => import(pathToFileURL(join(ROOT, 'dist', path)).href);

/** The chart values the service writes for a spec (its own toChartValues, from dist/). */
export async function chartValuesOf(spec) {
  const { toChartValues } = await dist('libs/agents/src/domain/agent-spec.js');
  return toChartValues(spec);
}

/** The helm command a create (`install`) or an update (`upgrade`) runs, as the service builds it (its own helm-commands, from dist/). */
export async function helmWriteArgs(kind, command) {
  const { installArgs, upgradeInstallArgs } = await dist('libs/helm/src/helm-commands.js');
  return kind === 'install' ? installArgs(command) : upgradeInstallArgs(command);
}

/** Namespaces the seeded agents spread over, and the label a fifth of them carry. */
export const SEED_NAMESPACES = Array.from({ length: 10 }, (_, i) => `team-${i}`);
export const SEED_LABEL = 'tier=gold';

/**
 * The spec of a scale-benchmark agent: as realistic as seedSpec's, but everything that differs
 * from one agent to the next is its name, so one agent's release and Agent, with the name and
 * namespace swapped, are exactly another's (seedCluster checks that against helm itself).
 */
export function scaleSpec(name) {
  return {
    modelConfig: 'default-model-config',
    toolset: ['preset:read-only', 'workflow:incident-triage'],
    description: `Seeded agent ${name} for the scale benchmark`,
    displayName: `Agent ${name}`,
    systemMessage: `You are agent ${name}. `.repeat(20) + 'Answer briefly and cite the tool you used.',
    labels: { team: 'sre' },
    annotations: { 'bench/seeded': 'true' },
  };
}

/** A realistic agent: a few hundred characters of system message, labels and annotations. */
export function seedSpec(i) {
  return {
    modelConfig: 'default-model-config',
    toolset: ['preset:read-only', `workflow:triage-${i % 7}`],
    description: `Seeded agent ${i} for the list benchmark`,
    displayName: `Agent ${i}`,
    systemMessage: `You are agent ${i}. `.repeat(20) + 'Answer briefly and cite the tool you used.',
    labels: { team: `t${i % 10}`, ...(i % 5 === 0 ? { tier: 'gold' } : {}) },
    annotations: { 'bench/seeded': 'true' },
  };
}

/** The name and namespace of seeded agent number `i`. */
export function seedRef(i) {
  return { namespace: SEED_NAMESPACES[i % SEED_NAMESPACES.length], name: `agent-${String(i).padStart(5, '0')}` };
}

/**
 * Opens the store at `databaseUrl` (migrating it, as the service does at start) and records
 * agents number `from` to `to - 1`, each as a journaled create (startOperation, then
 * recordCreate) of `spec(i, name)`. Returns how long it took (ms).
 */
export async function seedAgents(databaseUrl, { from = 0, to }, { chartRef = 'charts/agent', concurrency = 4, spec: specOf = seedSpec } = {}) {
  const { Logger } = await import('@nestjs/common');
  Logger.overrideLogger(['warn', 'error']); // not the store's "applied migrations" line
  const { Store } = await dist('libs/store/src/index.js');
  const { AgentsRepository } = await dist('libs/agents/src/persistence/agents.repository.js');
  const { toChartValues } = await dist('libs/agents/src/domain/agent-spec.js');
  const store = await Store.open(databaseUrl);
  const repository = new AgentsRepository(store);
  // Only this seeding connection skips the fsync per transaction; the service opens its own.
  if (store.provider === 'sqlite') await store.client.$queryRawUnsafe('PRAGMA synchronous = OFF');
  const started = performance.now();
  try {
    let next = from;
    const worker = async () => {
      for (let i = next++; i < to; i = next++) {
        const { namespace, name } = seedRef(i);
        const spec = specOf(i, name);
        const values = toChartValues(spec);
        const operationId = randomUUID();
        await repository.startOperation({ id: operationId, kind: 'create', namespace, name, request: { namespace, name, ...spec }, actor: 'bench-seed', owner: 'bench-seed' });
        await repository.recordCreate(namespace, name, { ref: chartRef }, { spec, values, helmRevision: 1, kind: 'create', actor: 'bench-seed', operationId });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    await store.client.$disconnect();
  }
  return performance.now() - started;
}

const run = promisify(execFile);
const KAGENT = '/apis/kagent.dev/v1alpha2';

/** JSON with sorted keys, to compare values whatever order their keys came in. */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  return JSON.stringify(value);
}

/**
 * Puts `count` agents (seedRef(0 … count-1), scaleSpec) into a cluster the way the service's
 * creates leave them, without running helm `count` times: agent 0 is a real `helm install` of
 * the chart with the values the service writes (its toChartValues) and the service's own flags
 * (its helm-commands) plus `--labels <MANAGED_RELEASE_LABEL>=true`; its release Secret and live
 * Agent are read back and cloned for every other agent, the release decoded and re-encoded in
 * helm's storage format (the service's release-storage) with that agent's name, namespace,
 * values and manifest. One agent's clone is checked against `helm template` of its own values.
 * Creates go through the API `concurrency` at a time. Answers the time it took and the size of
 * the objects as the API server returned them (what a list of them all would carry).
 */
export async function seedCluster(kubeconfig, count, { helmBin, chart = join(ROOT, 'charts', 'agent'), concurrency = 16, log = () => undefined } = {}) {
  const { toChartValues } = await dist('libs/agents/src/domain/agent-spec.js');
  const { decodeReleaseData, encodeReleaseData, releaseSecretName, MANAGED_RELEASE_LABEL } = await dist('libs/helm/src/release-storage.js');
  const api = kubeApi(kubeconfig, { maxSockets: concurrency });
  const dir = mkdtempSync(join(tmpdir(), 'agent-manager-seed-'));
  const helm = (args) => run(helmBin, args, { env: { ...process.env, KUBECONFIG: kubeconfig }, maxBuffer: 64 << 20 });
  const valuesFile = (ref) => {
    const file = join(dir, `${ref.name}.json`);
    writeFileSync(file, JSON.stringify(toChartValues(scaleSpec(ref.name))));
    return file;
  };
  const started = performance.now();
  const sizes = { secrets: 0, agents: 0 };
  try {
    for (const namespace of SEED_NAMESPACES) {
      const res = await api.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
      if (res.status !== 201 && res.status !== 409) throw new Error(`namespace ${namespace}: ${res.status} ${res.text.slice(0, 200)}`);
    }
    // agent 0: the real helm install the service runs
    const first = seedRef(0);
    const major = Number(/^v(\d+)/.exec((await helm(['version', '--template', '{{.Version}}'])).stdout.trim())?.[1] ?? 4);
    const install = await helmWriteArgs('install', { release: first, chart: { ref: chart }, valuesFile: valuesFile(first), major, wait: false, timeoutSeconds: 300 });
    await helm([...install, '--labels', `${MANAGED_RELEASE_LABEL}=true`]);
    const selector = new URLSearchParams({ labelSelector: `owner=helm,name=${first.name}` });
    const secrets = (await api.must('GET', `/api/v1/namespaces/${first.namespace}/secrets?${selector}`)).json.items;
    if (secrets.length !== 1) throw new Error(`helm install left ${secrets.length} release Secrets for ${first.name}, not 1`);
    const [secret] = secrets;
    if (secret.metadata.labels?.[MANAGED_RELEASE_LABEL] !== 'true') log(`WARNING: helm did not put ${MANAGED_RELEASE_LABEL}=true on the release Secret (helm < 3.13?)`);
    const agentRes = await api.must('GET', `${KAGENT}/namespaces/${first.namespace}/agents/${first.name}`);
    sizes.secrets += Buffer.byteLength(JSON.stringify(secret));
    sizes.agents += Buffer.byteLength(agentRes.text);
    const release = decodeReleaseData(secret.data.release);
    const live = agentRes.json;

    // the name and namespace swapped: the namespace only where it stands as a whole JSON string
    const swap = (text, ref) => text.replaceAll(first.name, ref.name).replaceAll(JSON.stringify(first.namespace), JSON.stringify(ref.namespace));
    // what the API server set on the object is not cloned
    const { managedFields } = live.metadata;
    const metadata = Object.fromEntries(Object.entries(live.metadata).filter(([key]) => !['uid', 'resourceVersion', 'creationTimestamp', 'generation', 'managedFields', 'selfLink'].includes(key)));
    const agentText = JSON.stringify({ apiVersion: live.apiVersion, kind: live.kind, metadata, spec: live.spec });
    // helm 4 applies server-side (an Apply by field manager "helm"); helm 3 creates
    const applied = managedFields?.find((f) => f.operation === 'Apply');
    const secretManager = secret.metadata.managedFields?.[0]?.manager ?? 'helm';
    const releaseOf = (ref) => ({ ...release, name: ref.name, namespace: ref.namespace, config: toChartValues(scaleSpec(ref.name)), manifest: swap(release.manifest, ref) });

    // the clone of one agent against what helm itself makes of that agent's values
    const probe = seedRef(Math.max(1, count - 1));
    if (canonical(JSON.parse(swap(JSON.stringify(release.config), probe))) !== canonical(toChartValues(scaleSpec(probe.name)))) {
      throw new Error('scaleSpec differs between agents in more than the name: the cloned values would not be the values the service writes');
    }
    const rendered = (await helm(['template', probe.name, chart, '--namespace', probe.namespace, '--values', valuesFile(probe)])).stdout;
    if (rendered.trim() !== releaseOf(probe).manifest.trim()) throw new Error(`the cloned manifest of ${probe.name} differs from helm template's:\n${rendered}\n---- cloned:\n${releaseOf(probe).manifest}`);

    let next = 1;
    let done = 1;
    const worker = async () => {
      for (let i = next++; i < count; i = next++) {
        const ref = seedRef(i);
        const body = {
          apiVersion: 'v1',
          kind: 'Secret',
          type: secret.type,
          metadata: { name: releaseSecretName(ref.name, release.version), namespace: ref.namespace, labels: { ...secret.metadata.labels, name: ref.name } },
          data: { release: encodeReleaseData(releaseOf(ref)) },
        };
        // awaited before the +=, which would otherwise add to the total as it was before the await (workers run meanwhile)
        const created = await api.must('POST', `/api/v1/namespaces/${ref.namespace}/secrets?fieldManager=${secretManager}`, body);
        sizes.secrets += Buffer.byteLength(created.text);
        const agent = swap(agentText, ref);
        const res = applied
          ? await api.must('PATCH', `${KAGENT}/namespaces/${ref.namespace}/agents/${ref.name}?fieldManager=${applied.manager}&force=true`, agent, 'application/apply-patch+yaml')
          : await api.must('POST', `${KAGENT}/namespaces/${ref.namespace}/agents?fieldManager=${managedFields?.[0]?.manager ?? 'helm'}`, agent);
        sizes.agents += Buffer.byteLength(res.text);
        if (++done % 1000 === 0) log(`cluster: ${done} of ${count} agents`);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    api.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return { ms: performance.now() - started, secretBytes: sizes.secrets, agentBytes: sizes.agents };
}

// `node bench/lib/seed.mjs scale '{"databaseUrl", "kubeconfig", "count", "helmBin"}'`: the scale
// benchmark's seeding in a process of its own (which the benchmark starts under `nice`): the store
// rows, then the cluster's objects. Prints one JSON line: the times and sizes.
if (process.argv[1] && resolve(process.argv[1]) === import.meta.filename && process.argv[2] === 'scale') {
  const { databaseUrl, kubeconfig, count, helmBin } = JSON.parse(process.argv[3]);
  const log = (message) => console.error(`[seed] ${message}`);
  const storeMs = await seedAgents(databaseUrl, { to: count }, { spec: (i, name) => scaleSpec(name) });
  log(`store: ${count} agents in ${(storeMs / 1000).toFixed(1)} s`);
  const cluster = await seedCluster(kubeconfig, count, { helmBin, log });
  log(`cluster: ${count} release Secrets and Agents in ${(cluster.ms / 1000).toFixed(1)} s`);
  process.stdout.write(`${JSON.stringify({ storeMs, clusterMs: cluster.ms, secretBytes: cluster.secretBytes, agentBytes: cluster.agentBytes })}\n`);
}
