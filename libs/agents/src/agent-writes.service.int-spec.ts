import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AppError, loadConfig } from '@app/common';
import { Store } from '@app/store';
import { freshDatabaseUrl, type FreshDatabase } from '../../../test/support/test-app.js';
import { AgentLeaseRepository, recoveryOwner } from './agent-lease.repository.js';
import { AgentWrites } from './agent-writes.service.js';
import { IdempotencyRepository } from './idempotency.repository.js';

describe(AgentWrites.name, () => {
  let db: FreshDatabase;
  let store: Store;
  let leases: AgentLeaseRepository;
  let writes: AgentWrites;
  const settled = async () => undefined;

  beforeAll(async () => {
    db = await freshDatabaseUrl();
    store = await Store.open(db.url);
    leases = new AgentLeaseRepository(store);
    const config = loadConfig({ DATABASE_URL: db.url, LEASE_TTL_SECONDS: '5', REPLICA_ID: 'replica-a' });
    writes = new AgentWrites(config, leases, new IdempotencyRepository(store));
  });

  afterAll(async () => {
    await store?.client.$disconnect();
    await db?.drop();
  });

  it('waits out a recovery sweep holding the agent instead of refusing the write', async () => {
    expect((await leases.acquire('ns/swept', recoveryOwner('replica-b'), 'op-dead', 5_000)).acquired).toBe(true);
    setTimeout(() => void leases.release('ns/swept', recoveryOwner('replica-b'), 'op-dead'), 300);
    await expect(writes.exclusive('ns', 'swept', settled, async () => 'written')).resolves.toBe('written');
  });

  it('refuses a write while another write holds the agent, naming its operation', async () => {
    expect((await leases.acquire('ns/busy', 'replica-b', 'op-live', 5_000)).acquired).toBe(true);
    const refusal = await writes.exclusive('ns', 'busy', settled, async () => 'written').catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ code: 'conflict', message: expect.stringContaining('op-live') });
  });

  it('frees the lease when the write is done, so the next write runs', async () => {
    await writes.exclusive('ns', 'free', settled, async () => 'first');
    await expect(writes.exclusive('ns', 'free', settled, async () => 'second')).resolves.toBe('second');
  });
});
