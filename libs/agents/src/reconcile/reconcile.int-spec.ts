// npm test: also on PostgreSQL — the reconciler reads and writes records, operations and its own lease
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig, type Caller } from '@app/common';
import type { ListedRelease, ReleaseRef } from '@app/helm';
import type { LiveAgent } from '@app/kube';
import { Store } from '@app/store';
import { FakeHelm } from '../../../../test/support/fake-helm.js';
import { freshDatabaseUrl, type FreshDatabase } from '../../../../test/support/test-app.js';
import { writeParts } from '../../../../test/support/write-parts.js';
import { AgentLeaseRepository, recoveryOwner } from '../persistence/lease.repository.js';
import { AgentsRepository } from '../persistence/agents.repository.js';
import { toChartValues, type ChartValues } from '../domain/agent-spec.js';
import { ManifestReader } from '../cluster/manifest-reader.js';
import { Reconciler } from './reconcile.service.js';

/**
 * The reconciler's and adoption's own decisions on a real store, with a FAKE helm (named as such:
 * it keeps releases in memory and lists them as `helm list` would); the cluster suites run the
 * real helm. A slow history read stands in for the time a real `helm history` takes.
 */
class ListingHelm extends FakeHelm {
  historyDelayMs = 0;

  override async listAll() {
    return [...this.releases.values()].map((r) => ({ name: r.name, namespace: r.namespace, revision: String(r.revision), status: r.status, chart: 'agent-0.1.0', updated: '', app_version: '' }));
  }

  override async getValues(release: ReleaseRef, revision?: number): Promise<Record<string, unknown>> {
    const list = this.revisions.get(`${release.namespace}/${release.name}`) ?? [];
    return ((revision ? list.find((r) => r.revision === revision) : list.at(-1))?.values ?? {}) as Record<string, unknown>;
  }

  override async history(release: ReleaseRef) {
    if (this.historyDelayMs) await new Promise((resolve) => setTimeout(resolve, this.historyDelayMs));
    return super.history(release);
  }
}

/** Who asks, when a test does not care. */
const someone: Caller = { door: 'rest', actor: 'someone', requestId: 'request of someone' };

describe(Reconciler.name, () => {
  const manifests = new ManifestReader();
  let db: FreshDatabase;
  let store: Store;
  let helm: ListingHelm;
  let repository: AgentsRepository;
  let reconciler: Reconciler;
  const spec = { modelConfig: 'm', toolset: ['preset:read-only'] };
  const values = (): ChartValues => JSON.parse(JSON.stringify(toChartValues(spec))) as ChartValues;

  beforeAll(async () => {
    db = await freshDatabaseUrl();
    store = await Store.open(db.url);
    const config = loadConfig({ DATABASE_URL: db.url, LEASE_TTL_SECONDS: '5', REPLICA_ID: 'replica-a' });
    helm = new ListingHelm();
    repository = new AgentsRepository(store);
    const kube = { getAgent: async () => ({}) as LiveAgent };
    reconciler = writeParts(config, store, helm, { repository }).reconciler(kube, manifests);
  });

  afterAll(async () => {
    await manifests.close(); // the reconciler reads release manifests in its worker thread; in the service, AgentsModule closes it
    await store?.client.$disconnect();
    await db?.drop();
  });

  it('records a create helm deployed after all with the blueprint it came from, so the agent still holds its blueprint', async () => {
    const origin = { blueprint: 'incident_helper', version: 1 };
    const id = randomUUID();
    await repository.startOperation({ id, kind: 'create', namespace: 'ns', name: 'from-bp', request: spec, actor: 'alice', owner: 'replica-a', intent: { spec, values: values(), origin }, baseHelmRevision: null });
    await repository.failOperation(id, 'backend_error', 'helm timed out');
    await helm.install({ namespace: 'ns', name: 'from-bp' }, { ref: 'charts/agent' }, values());

    const result = await reconciler.reconcile(someone, { namespace: 'ns', name: 'from-bp' });
    expect(result.items).toEqual([expect.objectContaining({ action: 'record-create', done: true })]);
    expect((await repository.findActive('ns', 'from-bp'))?.origin).toEqual(origin);
    expect((await repository.blueprintHolders('incident_helper')).map((a) => a.name)).toEqual(['from-bp']);
  });

  it('adopts a release once when two adopts of it race: the other answers 409 and leaves no journal entry pending', async () => {
    await helm.install({ namespace: 'ns', name: 'orphan' }, { ref: 'charts/agent' }, values());
    helm.historyDelayMs = 300;
    const listed: ListedRelease = { name: 'orphan', namespace: 'ns', revision: 1, status: 'deployed', chart: 'agent-0.1.0' };
    const both = await Promise.allSettled([reconciler.adopt(someone, { namespace: 'ns', name: 'orphan' }, listed), reconciler.adopt(someone, { namespace: 'ns', name: 'orphan' }, listed)]);
    helm.historyDelayMs = 0;
    expect(both.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((both.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ code: 'conflict' });
    expect(await repository.pendingOperations({ namespace: 'ns', name: 'orphan' })).toEqual([]);
  });

  it('refuses to adopt a legacy release without a toolset (implicit full access), saying how to declare one, and records nothing', async () => {
    const { toolset: _none, ...legacy } = values();
    await helm.install({ namespace: 'ns', name: 'legacy' }, { ref: 'charts/agent' }, legacy);
    const refused = await reconciler.adopt(someone, { namespace: 'ns', name: 'legacy' }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'conflict', message: expect.stringContaining('declares no toolset: it is a legacy agent with implicit full access') });
    expect(await repository.findActive('ns', 'legacy')).toBeNull();
    const rebuilt = await reconciler.rebuild(someone);
    expect(rebuilt.skipped).toEqual(expect.arrayContaining([{ release: 'ns/legacy', why: expect.stringContaining('declares no toolset') }]));
  });

  it("waits out another replica's sweep on an agent by reading its lease, not by inserting again and again", async () => {
    class CountingLeases extends AgentLeaseRepository {
      inserts = 0;
      override async acquire(...args: Parameters<AgentLeaseRepository['acquire']>) {
        this.inserts++;
        return super.acquire(...args);
      }
    }
    const leases = new CountingLeases(store);
    const config = loadConfig({ DATABASE_URL: db.url, LEASE_TTL_SECONDS: '5', REPLICA_ID: 'replica-a' });
    const counted = writeParts(config, store, helm, { repository, leases }).reconciler({ getAgent: async () => ({}) as LiveAgent }, manifests);
    expect((await leases.acquire('ns/from-bp', recoveryOwner('replica-b'), 'sweep-b', 5_000)).acquired).toBe(true);
    leases.inserts = 0;
    setTimeout(() => void leases.release('ns/from-bp', recoveryOwner('replica-b'), 'sweep-b'), 800);
    await counted.reconcile(someone, { namespace: 'ns', name: 'from-bp' });
    // One refused try, then reads until the other sweep let go, then the try that takes it.
    expect(leases.inserts).toBeLessThanOrEqual(3);
  });

  it("journals an adoption as adopt_agent with who asked, through which door", async () => {
    await helm.install({ namespace: 'ns', name: 'audited' }, { ref: 'charts/agent' }, values());
    const asked = { door: 'rest' as const, actor: 'token:alice', principal: { subject: 'token:alice', groups: [], method: 'token' as const }, requestId: 'req-adopt-1' };
    await reconciler.adopt(asked, { namespace: 'ns', name: 'audited' });
    const page = await repository.operationsPage({ name: 'audited', limit: 10 });
    expect(page.items).toEqual([expect.objectContaining({ operation: 'adopt_agent', subject: 'token:alice', authMethod: 'token', door: 'rest', requestId: 'req-adopt-1', outcome: 'succeeded' })]);
  });
});
