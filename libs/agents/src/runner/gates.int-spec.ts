// npm test: also on PostgreSQL — the write protocol: rows written before and after helm, in transactions
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { AppError, type Caller, loadConfig } from '@app/common';
import { Store } from '@app/store';
import { freshDatabaseUrl, testStoreProvider, type FreshDatabase } from '../../../../test/support/test-app.js';
import { AgentLeaseRepository, recoveryOwner, type LeaseHolder } from '../persistence/lease.repository.js';
import { AgentsRepository } from '../persistence/agents.repository.js';
import { IdempotencyRepository } from '../persistence/idempotency.repository.js';
import { AgentLock, type HeldLease } from './agent-lock.js';
import { IdempotencyGate, type KeyHooks } from './idempotency-gate.js';
import { UncertainWrite } from './uncertain-write.js';

/** A caller's write to ns/<name> under the lock, as the write runner takes it. */
const writeOf = (lock: AgentLock) => <T>(name: string, work: (lease: HeldLease) => Promise<T>) => lock.hold({ namespace: 'ns', name }, 'write', work);

describe(AgentLock.name, () => {
  let db: FreshDatabase;
  let store: Store;
  let leases: AgentLeaseRepository;
  let write: ReturnType<typeof writeOf>;
  /** The same store and replica, waiting at most 1 s in line. */
  let impatient: ReturnType<typeof writeOf>;

  beforeAll(async () => {
    db = await freshDatabaseUrl();
    store = await Store.open(db.url);
    leases = new AgentLeaseRepository(store);
    const config = loadConfig({ DATABASE_URL: db.url, LEASE_TTL_SECONDS: '5', REPLICA_ID: 'replica-a' });
    write = writeOf(new AgentLock(config, leases, store));
    const short = loadConfig({ DATABASE_URL: db.url, LEASE_TTL_SECONDS: '5', REPLICA_ID: 'replica-a', WRITE_QUEUE_SECONDS: '1' });
    impatient = writeOf(new AgentLock(short, leases, store));
  });

  afterAll(async () => {
    await store?.client.$disconnect();
    await db?.drop();
  });

  it('waits out a recovery sweep holding the agent instead of refusing the write', async () => {
    expect((await leases.acquire('ns/swept', recoveryOwner('replica-b'), 'op-dead', 5_000)).acquired).toBe(true);
    setTimeout(() => void leases.release('ns/swept', recoveryOwner('replica-b'), 'op-dead'), 300);
    await expect(write('swept', async () => 'written')).resolves.toBe('written');
  });

  it('refuses a write that waited WRITE_QUEUE_SECONDS for another replica\'s write, naming its operation', async () => {
    expect((await leases.acquire('ns/busy', 'replica-b', 'op-live', 5_000)).acquired).toBe(true);
    let ran = false;
    const refusal = await impatient('busy', async () => {
        ran = true;
      })
      .catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ code: 'conflict', message: expect.stringContaining('op-live') });
    expect((refusal as AppError).message).toContain('WRITE_QUEUE_SECONDS');
    expect(ran).toBe(false);
  });

  it('queues a write behind another replica\'s write and runs it once that write released the agent', async () => {
    expect((await leases.acquire('ns/queued', 'replica-b', 'op-first', 5_000)).acquired).toBe(true);
    setTimeout(() => void leases.release('ns/queued', 'replica-b', 'op-first'), 400);
    await expect(write('queued', async () => 'written after')).resolves.toBe('written after');
  });

  it('runs the writes of one agent one at a time, in the order they arrived', async () => {
    const order: string[] = [];
    let inside = 0;
    let most = 0;
    const ordered = (label: string, ms: number) =>
      write('ordered', async () => {
        inside++;
        most = Math.max(most, inside);
        await new Promise((resolve) => setTimeout(resolve, ms));
        order.push(label);
        inside--;
        return label;
      });
    const results = await Promise.all([ordered('first', 150), ordered('second', 10), ordered('third', 50), ordered('fourth', 0)]);
    expect(results).toEqual(['first', 'second', 'third', 'fourth']);
    expect(order).toEqual(['first', 'second', 'third', 'fourth']);
    expect(most).toBe(1);
  });

  it('lets a write that gave up in line go without blocking the ones behind it', async () => {
    const slow = impatient('gave-up', () => new Promise((resolve) => setTimeout(() => resolve('slow'), 1_500)));
    const gaveUp = impatient('gave-up', async () => 'never').catch((error: unknown) => (error as AppError).code);
    await expect(gaveUp).resolves.toBe('conflict');
    await expect(slow).resolves.toBe('slow');
    await expect(impatient('gave-up', async () => 'after')).resolves.toBe('after');
  });

  it('frees the lease when the write is done, so the next write runs', async () => {
    await write('free', async () => 'first');
    await expect(write('free', async () => 'second')).resolves.toBe('second');
  });

  it('waits in line at its poll interval, without a busy loop, on a replica whose clock runs ahead of the store', async () => {
    // Named fake: the real lease rows as a replica whose clock is 10 s ahead of the store's sees them.
    class SkewedLeases extends AgentLeaseRepository {
      attempts = 0;
      override async acquire(...args: Parameters<AgentLeaseRepository['acquire']>) {
        this.attempts++;
        const lease = await super.acquire(...args);
        return lease.acquired ? lease : { ...lease, holder: ahead(lease.holder) };
      }
      override async holder(key: string) {
        const holder = await super.holder(key);
        return holder && ahead(holder);
      }
    }
    const ahead = (holder: LeaseHolder): LeaseHolder => ({ ...holder, expiresAt: new Date(holder.expiresAt.getTime() - 10_000) });
    const skewed = new SkewedLeases(store);
    const short = loadConfig({ DATABASE_URL: db.url, LEASE_TTL_SECONDS: '5', REPLICA_ID: 'replica-a', WRITE_QUEUE_SECONDS: '1' });
    expect((await leases.acquire('ns/skewed', 'replica-b', 'op-held', 5_000)).acquired).toBe(true);
    const refusal = await writeOf(new AgentLock(short, skewed, store))('skewed', async () => 'never').catch((error: unknown) => error);
    expect(refusal).toMatchObject({ code: 'conflict' });
    // One second in line at a 100 ms poll: about ten tries, not one after another as fast as the store answers.
    expect(skewed.attempts).toBeLessThanOrEqual(15);
  });
});

describe(`${IdempotencyGate.name}: idempotency keys across faults`, () => {
  let db: FreshDatabase;
  let store: Store;
  let gate: IdempotencyGate;
  const caller: Caller = { actor: 't', door: 'rest', requestId: 'r' };
  let repository: AgentsRepository;
  const quiet: KeyHooks<string> = { settle: async () => undefined, recorded: async () => 'never', replayed: async () => undefined };

  beforeAll(async () => {
    db = await freshDatabaseUrl();
    store = await Store.open(db.url);
    repository = new AgentsRepository(store);
    const config = loadConfig({ DATABASE_URL: db.url, LEASE_TTL_SECONDS: '5', REPLICA_ID: 'replica-a' });
    gate = new IdempotencyGate(config, new IdempotencyRepository(store));
  });

  afterAll(async () => {
    await store?.client.$disconnect();
    await db?.drop();
  });

  it('keeps a refusal of the request for the retry, but runs the retry again after a refusal the environment caused', async () => {
    let runs = 0;
    const refuse = (key: string, error: () => AppError) =>
      gate.once(caller, key, { same: 'body' }, async () => {
        runs++;
        throw error();
      }, quiet).catch((e: unknown) => e as AppError);
    const own = () => new AppError('invalid_request', 'the request itself is wrong');
    expect(await refuse('final', own)).toMatchObject({ code: 'invalid_request' });
    expect(await refuse('final', own)).toMatchObject({ code: 'invalid_request' });
    expect(runs).toBe(1);
    const environment = () => new AppError('invalid_request', 'namespace "later" does not exist in the cluster').fromEnvironment();
    runs = 0;
    await refuse('environment', environment);
    await refuse('environment', environment);
    expect(runs).toBe(2);
  });

  it('never runs a write twice that recorded its outcome and then failed: the retry answers from what it recorded', async () => {
    let runs = 0;
    const write = () =>
      gate.once(caller, 'recorded-then-failed', { same: 'body' }, async (claimed) => {
        runs++;
        const id = randomUUID();
        await repository.startOperation({ id, kind: 'create', namespace: 'ns', name: 'recorded-then-failed', request: {}, actor: 't', owner: 'replica-a', idempotencyKey: claimed!.key });
        const values = { modelConfig: 'm', toolset: ['preset:none'], description: '', displayName: '', systemMessage: '', labels: {}, annotations: {} };
        await repository.recordCreate('ns', 'recorded-then-failed', { ref: 'c' }, { spec: { modelConfig: 'm', toolset: ['preset:none'] }, values, helmRevision: 1, kind: 'create', actor: 't', operationId: id });
        // what the write runner throws for a step after the record that failed
        throw new UncertainWrite('backend_error', 'a step after the record failed');
      }, { ...quiet, recorded: async (id) => `landed as ${id}` });
    await expect(write()).rejects.toThrow('a step after the record failed');
    await expect(write()).resolves.toMatch(/^landed as /);
    expect(runs).toBe(1);
  });

  it('answers a retry of a run that stopped with its operation pending from what that operation recorded, without running it again', async () => {
    let runs = 0;
    let operationId = '';
    const first = await gate
      .once(caller, 'uncertain', { same: 'body' }, async (claimed) => {
        runs++;
        operationId = randomUUID();
        await repository.startOperation({ id: operationId, kind: 'create', namespace: 'ns', name: 'uncertain', request: {}, actor: 't', owner: 'replica-a', idempotencyKey: claimed!.key });
        throw new UncertainWrite('backend_error', 'helm applied it, but recording it failed');
      }, quiet)
      .catch((e: unknown) => e as AppError);
    expect(first).toMatchObject({ code: 'backend_error' });

    const settled: string[] = [];
    const hooks: KeyHooks<string> = {
      settle: async (id) => {
        settled.push(id);
        const values = { modelConfig: 'm', toolset: ['preset:none'], description: '', displayName: '', systemMessage: '', labels: {}, annotations: {} };
        await repository.recordCreate('ns', 'uncertain', { ref: 'c' }, { spec: { modelConfig: 'm', toolset: ['preset:none'] }, values, helmRevision: 1, kind: 'create', actor: 't', operationId: id });
      },
      recorded: async (id) => `answer of ${id}`,
      replayed: async () => undefined,
    };
    const run = async () => {
      runs++;
      return 'ran again';
    };
    await expect(gate.once(caller, 'uncertain', { same: 'body' }, run, hooks)).resolves.toBe(`answer of ${operationId}`);
    await expect(gate.once(caller, 'uncertain', { same: 'body' }, run, { ...hooks, recorded: async () => 'not asked again' })).resolves.toBe(`answer of ${operationId}`);
    expect(settled).toEqual([operationId]);
    expect(runs).toBe(1);
  });

  it('runs a retry once when the run it follows stopped and its operation did not land', async () => {
    let operationId = '';
    await gate
      .once(caller, 'did-not-land', { same: 'body' }, async (claimed) => {
        operationId = randomUUID();
        await repository.startOperation({ id: operationId, kind: 'create', namespace: 'ns', name: 'did-not-land', request: {}, actor: 't', owner: 'replica-a', idempotencyKey: claimed!.key });
        throw new UncertainWrite('backend_error', 'helm failed against the cluster');
      }, quiet)
      .catch(() => undefined);
    const hooks: KeyHooks<string> = { ...quiet, settle: async (id) => void (await repository.failOperation(id, 'backend_error', 'did not land')) };
    await expect(gate.once(caller, 'did-not-land', { same: 'body' }, async () => 'ran once', hooks)).resolves.toBe('ran once');
    await expect(gate.once(caller, 'did-not-land', { same: 'body' }, async () => 'ran twice', hooks)).resolves.toBe('ran once');
  });
});

describe(`${AgentLock.name} with a lost SQLite file`, () => {
  it('refuses writes with 503 unavailable and a retry hint instead of writing into the removed file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'writes-lost-'));
    const url = `file:${join(dir, 'agent-manager.db')}`;
    const store = await Store.open(url);
    try {
      const config = loadConfig({ DATABASE_URL: url, REPLICA_ID: 'replica-a' });
      const lock = new AgentLock(config, new AgentLeaseRepository(store), store);
      rmSync(join(dir, 'agent-manager.db'));
      let ran = false;
      const refused = await writeOf(lock)('lost', async () => (ran = true)).catch((error: unknown) => error as AppError);
      expect(refused).toMatchObject({ code: 'unavailable', status: 503, retryAfterSeconds: 5 });
      expect((refused as AppError).message).toContain('was removed');
      expect(ran).toBe(false);
    } finally {
      await store.client.$disconnect();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// SQLite serves one host: its store clock is the process's. Only PostgreSQL has replicas whose clocks can differ.
(testStoreProvider() === 'postgresql' ? describe : describe.skip)(`${IdempotencyRepository.name} on replicas whose clocks differ`, () => {
  let db: FreshDatabase;
  let store: Store;

  beforeAll(async () => {
    db = await freshDatabaseUrl();
    store = await Store.open(db.url);
  });

  afterAll(async () => {
    jest.useRealTimers();
    await store?.client.$disconnect();
    await db?.drop();
  });

  it("sees another replica's live claim as pending, not lapsed, from a replica whose clock runs an hour ahead", async () => {
    const keys = new IdempotencyRepository(store);
    expect(await keys.claim('skewed', 'same request', 30_000)).toEqual({ kind: 'claimed' });
    // Named fake: this process's clock (Date only; timers stay real for the database driver) an hour ahead of the store's.
    jest.useFakeTimers({ now: Date.now() + 3_600_000, doNotFake: ['hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] });
    try {
      expect(await keys.claim('skewed', 'same request', 30_000)).toMatchObject({ kind: 'pending', expired: false });
      expect(await keys.takeOver('skewed', null, 30_000)).toBe(false);
    } finally {
      jest.useRealTimers();
    }
  });
});
