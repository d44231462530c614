// npm test: also on PostgreSQL — the lease: conditional updates and expiry in SQL
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Store } from '@app/store';
import { freshDatabaseUrl, type FreshDatabase } from '../../../../test/support/test-app.js';
import { AgentLeaseRepository } from './lease.repository.js';

describe(AgentLeaseRepository.name, () => {
  let db: FreshDatabase;
  let stores: Store[];
  let leases: AgentLeaseRepository[];

  beforeAll(async () => {
    db = await freshDatabaseUrl();
    // Two clients on one PostgreSQL database stand for two replicas. SQLite gets one client:
    // better-sqlite3 is synchronous, so two connections in one thread would wait on each other.
    stores = db.provider === 'postgresql' ? [await Store.open(db.url), await Store.open(db.url)] : [await Store.open(db.url)];
    const repositories = stores.map((s) => new AgentLeaseRepository(s));
    leases = [repositories[0], repositories.at(-1)!];
  });

  afterAll(async () => {
    for (const store of stores ?? []) await store.client.$disconnect();
    await db?.drop();
  });

  it('lets exactly one of many concurrent writers take a free lease', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => leases[i % 2].acquire('ns/a', `replica-${i}`, `op-${i}`, 30_000)));
    expect(results.filter((r) => r.acquired)).toHaveLength(1);
    const refused = results.filter((r) => !r.acquired);
    const winner = results.findIndex((r) => r.acquired);
    for (const r of refused) expect(r).toMatchObject({ acquired: false, holder: { operationId: `op-${winner}` } });
  });

  it('hands an expired lease to exactly one contender and names the operation it took over', async () => {
    expect((await leases[0].acquire('ns/b', 'dead', 'op-dead', 1)).acquired).toBe(true);
    await new Promise((r) => setTimeout(r, 20));
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => leases[i % 2].acquire('ns/b', `replica-${i}`, `op-${i}`, 30_000)));
    const won = results.filter((r) => r.acquired);
    expect(won).toHaveLength(1);
    expect(won[0]).toMatchObject({ takenOverFrom: { owner: 'dead', operationId: 'op-dead' } });
  });

  it('renews only the holder\'s lease and frees it on release', async () => {
    expect((await leases[0].acquire('ns/c', 'r1', 'op-1', 30_000)).acquired).toBe(true);
    expect(await leases[1].renew('ns/c', 'r2', 'op-2', 30_000)).toBe(false);
    expect(await leases[0].renew('ns/c', 'r1', 'op-1', 30_000)).toBe(true);
    await leases[1].release('ns/c', 'r2', 'op-2');
    expect((await leases[1].acquire('ns/c', 'r2', 'op-2', 30_000)).acquired).toBe(false);
    await leases[0].release('ns/c', 'r1', 'op-1');
    expect((await leases[1].acquire('ns/c', 'r2', 'op-2', 30_000)).acquired).toBe(true);
  });
});
