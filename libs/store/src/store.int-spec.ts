// npm test: also on PostgreSQL — the store itself: connection, health and errors of each provider
import { copyFileSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { mapError } from '@app/common';
import { freshDatabaseUrl, testStoreProvider, type FreshDatabase } from '../../../test/support/test-app.js';
import { Store } from './store.js';

Logger.overrideLogger(false);

describe(`${Store.name}.check`, () => {
  let dir: string;
  let store: Store | undefined;

  afterEach(async () => {
    await store?.client.$disconnect();
    store = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(): Promise<string> {
    dir = mkdtempSync(join(tmpdir(), 'store-check-'));
    const file = join(dir, 'agent-manager.db');
    store = await Store.open(`file:${file}`);
    return file;
  }

  it('is healthy while the file it opened is in place and writable', async () => {
    await open();
    await expect(store!.check()).resolves.toEqual({ ok: true });
  });

  it('fails when the SQLite file was removed while the store ran, naming store rebuild', async () => {
    const file = await open();
    rmSync(file);
    const health = await store!.check();
    expect(health).toEqual({ ok: false, reason: expect.stringContaining('was removed') });
    expect(!health.ok && health.reason).toContain('agent-manager store rebuild');
  });

  it('fails when another file was put at its path', async () => {
    const file = await open();
    copyFileSync(file, `${file}.copy`);
    renameSync(`${file}.copy`, file);
    await expect(store!.check()).resolves.toEqual({ ok: false, reason: expect.stringContaining('was replaced') });
  });
});

describe(`${Store.name}: a transaction and a write outside it`, () => {
  let db: FreshDatabase;
  let store: Store;

  beforeAll(async () => {
    db = await freshDatabaseUrl();
    store = await Store.open(db.url);
  });

  afterAll(async () => {
    await store?.client.$disconnect();
    await db?.drop();
  });

  const lease = (key: string) => ({ key, owner: 'replica-a', operationId: key, expiresAt: new Date(Date.now() + 60_000), acquiredAt: new Date() });

  it('keeps a write made while another request\'s transaction is open, when that transaction rolls back', async () => {
    const rolledBack = store.client.$transaction(async (tx) => {
      await tx.agentLease.create({ data: lease('inside') });
      await sleep(100); // this request awaits something; another request writes meanwhile
      throw new Error('this transaction rolls back');
    });
    await sleep(20);
    await store.client.agentLease.create({ data: lease('outside') });
    await expect(rolledBack).rejects.toThrow('rolls back');
    expect(await store.client.agentLease.findUnique({ where: { key: 'outside' } })).not.toBeNull();
    expect(await store.client.agentLease.findUnique({ where: { key: 'inside' } })).toBeNull();
  });

  it('finds the store writable for two first writes at once (PostgreSQL raced them creating the probe table: the loser answered unavailable)', async () => {
    // A race: five rounds, each on a store that never checked (the probe table dropped first), four checks at once.
    for (let round = 0; round < 5; round++) {
      await store.client.$executeRawUnsafe('DROP TABLE IF EXISTS "_agent_manager_health"');
      const fresh = await Store.open(db.url);
      try {
        const checks = await Promise.all([fresh.check(), fresh.check(), fresh.check(), fresh.check()]);
        expect(checks).toEqual([{ ok: true }, { ok: true }, { ok: true }, { ok: true }]);
      } finally {
        await fresh.client.$disconnect();
      }
    }
  });

  // PostgreSQL gives each transaction a connection: the second one starts at once there.
  (testStoreProvider() === 'sqlite' ? it : it.skip)('answers a transaction that cannot start in time, behind another, as the store unavailable (503), not 500', async () => {
    const long = store.client.$transaction(async (tx) => {
      await tx.agentLease.create({ data: lease('long') });
      await sleep(400);
    });
    const late = await store.client.$transaction(async (tx) => tx.agentLease.count(), { maxWait: 50 }).then(() => null, (error: unknown) => error);
    await long;
    expect(mapError(late)).toMatchObject({ status: 503, body: { error: { code: 'unavailable' } } });
  });
});
