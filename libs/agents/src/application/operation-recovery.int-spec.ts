// npm test: also on PostgreSQL — pending operations found and finished from the store
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '@app/common';
import { Store } from '@app/store';
import { FakeHelm } from '../../../../test/support/fake-helm.js';
import { freshDatabaseUrl, type FreshDatabase } from '../../../../test/support/test-app.js';
import { writeParts } from '../../../../test/support/write-parts.js';
import type { OperationRecord } from '../persistence/records.js';
import { AgentsRepository } from '../persistence/agents.repository.js';
import { toChartValues, type AgentSpec } from '../domain/agent-spec.js';
import { OperationRecovery } from './operation-recovery.service.js';

/**
 * The store, with a FAKE failure of its next reads of one operation: a store that fails between
 * the sweep's lease and its read cannot be timed from outside (SQLite serves reads under
 * another writer's lock). Everything else is the real store.
 */
class FlakyRepository extends AgentsRepository {
  failReads = 0;

  override async operation(id: string): Promise<OperationRecord | null> {
    if (this.failReads > 0) {
      this.failReads--;
      throw new Error('SQLITE_IOERR: disk I/O error (a FAKE store failure)');
    }
    return super.operation(id);
  }
}

describe(OperationRecovery.name, () => {
  let db: FreshDatabase;
  let store: Store;
  let helm: FakeHelm;
  let repository: FlakyRepository;
  let recovery: OperationRecovery;

  beforeAll(async () => {
    db = await freshDatabaseUrl();
    store = await Store.open(db.url);
    const config = loadConfig({ DATABASE_URL: db.url, LEASE_TTL_SECONDS: '5', REPLICA_ID: 'replica-a' });
    helm = new FakeHelm();
    repository = new FlakyRepository(store);
    recovery = writeParts(config, store, helm, { repository }).recovery;
  });

  afterAll(async () => {
    await store?.client.$disconnect();
    await db?.drop();
  });

  /** A create a replica that died journaled, and helm deployed: the sweep records it. */
  async function orphanedCreate(name: string): Promise<string> {
    const spec: AgentSpec = { modelConfig: 'm', toolset: ['preset:read-only'], description: `the ${name} agent` };
    const values = JSON.parse(JSON.stringify(toChartValues(spec))) as ReturnType<typeof toChartValues>; // as the store keeps them
    const id = randomUUID();
    await repository.startOperation({ id, kind: 'create', namespace: 'ns', name, request: spec, actor: 'alice', owner: 'replica-gone', intent: { spec, values }, baseHelmRevision: null });
    helm.releases.set(`ns/${name}`, { name, namespace: 'ns', revision: 1, status: 'deployed', description: '', values: JSON.parse(JSON.stringify(values)) as Record<string, unknown>, manifest: 'kind: Agent' });
    return id;
  }

  it('keeps sweeping when the store fails on one operation: that one stays pending for the next sweep, the process goes on', async () => {
    const first = await orphanedCreate('first');
    const second = await orphanedCreate('second');
    repository.failReads = 1;
    // A sweep runs from a timer: a rejection there would end the service.
    await expect(recovery.sweep()).resolves.toBeUndefined();
    expect((await repository.operation(first))?.state).toBe('pending');
    expect((await repository.operation(second))?.state).toBe('succeeded');
    expect(await repository.findActive('ns', 'first')).toBeNull();

    await recovery.sweep();
    expect((await repository.operation(first))?.state).toBe('succeeded');
    expect(await repository.findActive('ns', 'first')).toMatchObject({ revision: 1, createdBy: 'alice', values: { description: 'the first agent' } });
  });
});
