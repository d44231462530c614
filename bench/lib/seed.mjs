// Seeds a store with agents through the service's own store layer (the built dist/), not helm:
// the agents look to the service as if earlier creates had succeeded. The one place the
// benchmark knows the store's API: when the repository's signatures change, adjust here.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const ROOT = join(import.meta.dirname, '..', '..');
const dist = (path) => import(pathToFileURL(join(ROOT, 'dist', path)).href);

/** The chart values the service writes for a spec (its own toChartValues, from dist/). */
export async function chartValuesOf(spec) {
  const { toChartValues } = await dist('libs/agents/src/agents.types.js');
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

/**
 * Opens the store at `databaseUrl` (migrating it, as the service does at start) and records
 * agents number `from` to `to - 1`, each as a journaled create (startOperation, then
 * recordCreate). Returns how long it took (ms).
 */
export async function seedAgents(databaseUrl, { from = 0, to }, { chartRef = 'charts/agent', concurrency = 4 } = {}) {
  const { Logger } = await import('@nestjs/common');
  Logger.overrideLogger(['warn', 'error']); // not the store's "applied migrations" line
  const { Store } = await dist('libs/store/src/index.js');
  const { AgentsRepository } = await dist('libs/agents/src/agents.repository.js');
  const { toChartValues } = await dist('libs/agents/src/agents.types.js');
  const store = await Store.open(databaseUrl);
  const repository = new AgentsRepository(store);
  // Only this seeding connection skips the fsync per transaction; the service opens its own.
  if (store.provider === 'sqlite') await store.client.$queryRawUnsafe('PRAGMA synchronous = OFF');
  const started = performance.now();
  try {
    let next = from;
    const worker = async () => {
      for (let i = next++; i < to; i = next++) {
        const namespace = SEED_NAMESPACES[i % SEED_NAMESPACES.length];
        const name = `agent-${String(i).padStart(5, '0')}`;
        const spec = seedSpec(i);
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
