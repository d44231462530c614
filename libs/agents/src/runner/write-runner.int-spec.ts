// npm test: also on PostgreSQL — the write runner: lease, journal and records in one transaction
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AppError, loadConfig, type AppConfig, type Caller } from '@app/common';
import { Store } from '@app/store';
import { FakeHelm } from '../../../../test/support/fake-helm.js';
import { freshDatabaseUrl, type FreshDatabase } from '../../../../test/support/test-app.js';
import { writeParts } from '../../../../test/support/write-parts.js';
import { CreateAgentDto, DeleteAgentDto, RollbackAgentDto, UpdateAgentDto } from '../api/requests.dto.js';
import { parseInput } from '@app/doors';
import { AgentsRepository } from '../persistence/agents.repository.js';
import { createAgent } from '../use-cases/create-agent.js';
import { deleteAgent } from '../use-cases/delete-agent.js';
import { rollbackAgent } from '../use-cases/rollback-agent.js';
import { updateAgent } from '../use-cases/update-agent.js';
import { WriteRunner } from './write-runner.js';

/** The real store, with a FAKE failure of its next closing of an operation as failed (a failure at that exact step cannot be timed from outside). */
class FlakyRepository extends AgentsRepository {
  failNextFail = false;

  override async failOperation(id: string, errorCode: string, errorMessage: string): Promise<boolean> {
    if (this.failNextFail) {
      this.failNextFail = false;
      throw new Error('SQLITE_IOERR: disk I/O error (a FAKE store failure)');
    }
    return super.failOperation(id, errorCode, errorMessage);
  }
}

describe(WriteRunner.name, () => {
  let db: FreshDatabase;
  let store: Store;
  let helm: FakeHelm;
  let repository: FlakyRepository;
  let runner: WriteRunner;
  let config: AppConfig;

  beforeAll(async () => {
    db = await freshDatabaseUrl();
    store = await Store.open(db.url);
    config = loadConfig({ DATABASE_URL: db.url, LEASE_TTL_SECONDS: '5', WRITE_QUEUE_SECONDS: '10', REPLICA_ID: 'replica-a' });
    helm = new FakeHelm();
    repository = new FlakyRepository(store);
    runner = writeParts(config, store, helm, { repository }).runner;
  });

  afterAll(async () => {
    await store?.client.$disconnect();
    await db?.drop();
  });

  const caller = (actor: string): Caller => ({ actor, door: 'rest', requestId: `request of ${actor}` });
  const create = (name: string, extra: object = {}) =>
    runner.run(caller('alice'), createAgent(parseInput(CreateAgentDto, { name, namespace: 'ns', modelConfig: 'm', toolset: ['preset:read-only'], ...extra })));
  const update = (name: string, body: object, actor = 'bob') =>
    runner.run(caller(actor), updateAgent({ namespace: 'ns', name }, parseInput(UpdateAgentDto, body)));
  const refusal = (promise: Promise<unknown>) => promise.then(() => 'no refusal', (error: AppError) => error.code);
  const callsFor = (name: string) => helm.calls.filter((call) => call.endsWith(` ${name}`));

  describe('create', () => {
    it('runs one helm process, records revision 1 and closes the journal entry as succeeded by the context\'s actor', async () => {
      const answer = await create('one');
      expect(callsFor('one')).toEqual(['install one']);
      expect(answer).toMatchObject({ dryRun: false, agent: { revision: 1, helmRevision: 1, createdBy: 'alice', lastOperation: { kind: 'create', state: 'succeeded', actor: 'alice' } } });
      expect(answer.manifests).toBe('kind: Agent # r1');
    });

    it('answers a dry run from helm template and writes nothing', async () => {
      const answer = await create('dry', { dryRun: true });
      expect(answer).toMatchObject({ dryRun: true, agent: null, manifests: expect.stringContaining('name: dry') });
      expect(callsFor('dry')).toEqual(['template dry']);
      expect(await repository.findActive('ns', 'dry')).toBeNull();
    });

    it('refuses an agent that exists with 409 before any helm run or journal entry', async () => {
      await create('twice');
      helm.calls.length = 0;
      await expect(refusal(create('twice'))).resolves.toBe('conflict');
      expect(callsFor('twice')).toEqual([]);
      expect((await repository.lastOperation('ns', 'twice'))?.kind).toBe('create');
    });

    it('journals a release helm refuses (name in use) as a failed create and records no agent', async () => {
      helm.releases.set('ns/foreign', { name: 'foreign', namespace: 'ns', revision: 1, status: 'deployed', description: '', values: {}, manifest: '' });
      await expect(refusal(create('foreign'))).resolves.toBe('conflict');
      expect(await repository.findActive('ns', 'foreign')).toBeNull();
      expect(await repository.lastOperation('ns', 'foreign')).toMatchObject({ kind: 'create', state: 'failed', errorCode: 'conflict' });
    });
  });

  describe('update', () => {
    it('answers changed: false without any helm run when nothing changes', async () => {
      await create('same');
      helm.calls.length = 0;
      await expect(update('same', { toolset: ['preset:read-only'] })).resolves.toMatchObject({ changed: false });
      expect(callsFor('same')).toEqual([]);
    });

    it('refuses a stale expectedVersion with 412 before any helm run', async () => {
      await create('stale');
      await update('stale', { description: 'v2' });
      helm.calls.length = 0;
      await expect(refusal(update('stale', { description: 'v3', expectedVersion: 1 }))).resolves.toBe('precondition_failed');
      expect(callsFor('stale')).toEqual([]);
    });

    it('queues concurrent updates: without a version they apply one after another in arrival order', async () => {
      await create('queue');
      helm.delayMs = 30;
      try {
        const answers = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((text) => update('queue', { description: text })));
        expect(answers.map((a) => a.agent.revision)).toEqual([2, 3, 4, 5, 6]);
      } finally {
        helm.delayMs = 0;
      }
      const revisions = await repository.revisions((await repository.findActive('ns', 'queue'))!.id);
      expect(revisions.map((r) => r.values.description)).toEqual(['', 'a', 'b', 'c', 'd', 'e']);
    });

    it('answers 412, not 409, to queued updates whose expectedVersion went stale while they waited', async () => {
      const created = await create('race');
      helm.delayMs = 30;
      try {
        const outcomes = await Promise.all(
          ['a', 'b', 'c', 'd'].map((text) => update('race', { description: text, expectedVersion: created.agent!.version }).then(() => 'applied', (error: AppError) => error.code)),
        );
        expect(outcomes.sort()).toEqual(['applied', 'precondition_failed', 'precondition_failed', 'precondition_failed']);
      } finally {
        helm.delayMs = 0;
      }
      expect(callsFor('race').filter((call) => call.startsWith('upgrade'))).toHaveLength(1);
    });

    it('closes the operation failed with helm\'s message and leaves the agent as it was when helm fails', async () => {
      await create('broken');
      helm.failNext = new AppError('backend_error', 'helm upgrade failed: the cluster is gone');
      await expect(refusal(update('broken', { description: 'never' }))).resolves.toBe('backend_error');
      const agent = await repository.findActive('ns', 'broken');
      expect(agent).toMatchObject({ revision: 1, values: { description: '' } });
      expect(agent?.lastOperation).toMatchObject({ kind: 'update', state: 'failed', errorMessage: 'helm upgrade failed: the cluster is gone' });
    });
  });

  describe('rollback and delete', () => {
    it('rolls back with one helm upgrade to the revision\'s values, recorded as a new revision', async () => {
      await create('back');
      await update('back', { description: 'v2' });
      helm.calls.length = 0;
      const answer = await runner.run(caller('carol'), rollbackAgent({ namespace: 'ns', name: 'back' }, parseInput(RollbackAgentDto, { revision: 1 })));
      expect(callsFor('back')).toEqual(['upgrade back']);
      expect(answer).toMatchObject({ rolledBackTo: 1, after: { description: '' }, agent: { revision: 3, updatedBy: 'carol' } });
    });

    it('answers a rollback that freed a stuck release as landed, and replays it to a retry, even when closing the freed operation fails', async () => {
      const created = await create('stuck');
      await update('stuck', { description: 'v2' });
      // A replica died mid-upgrade: its operation is pending and helm holds the release pending-upgrade.
      const agent = (await repository.findActive('ns', 'stuck'))!;
      const values = { ...agent.values, description: 'v3' };
      await repository.startOperation({
        id: 'op-of-a-dead-replica', kind: 'update', namespace: 'ns', name: 'stuck', agentId: agent.id, request: {}, actor: 'erin', owner: 'replica-gone',
        intent: { spec: { ...agent.spec, description: 'v3' }, values }, baseHelmRevision: agent.helmRevision,
      });
      helm.hold({ namespace: 'ns', name: 'stuck' }, 'pending-upgrade', values);
      helm.calls.length = 0;
      repository.failNextFail = true;
      const rollback = () =>
        runner.run(caller('carol'), rollbackAgent({ namespace: 'ns', name: 'stuck' }, parseInput(RollbackAgentDto, { revision: 2, freeStuckRelease: true, requestId: 'free-stuck-1' })));
      const answer = await rollback();
      expect(answer).toMatchObject({ dryRun: false, rolledBackTo: 2, agent: { revision: 3, version: created.agent!.version + 2 } });
      expect(callsFor('stuck').filter((call) => call.startsWith('rollback'))).toHaveLength(1);
      // The retry gets the first answer; helm is not run again.
      await expect(rollback()).resolves.toEqual(answer);
      expect(callsFor('stuck').filter((call) => call.startsWith('rollback'))).toHaveLength(1);
    });

    it('renders a rollback dry run through the chart, and records the chart a rollback applied', async () => {
      await create('chart-back');
      await update('chart-back', { description: 'v2' });
      helm.calls.length = 0;
      const dry = await runner.run(caller('carol'), rollbackAgent({ namespace: 'ns', name: 'chart-back' }, parseInput(RollbackAgentDto, { revision: 1, dryRun: true })));
      expect(dry).toMatchObject({ dryRun: true, rolledBackTo: 1 });
      expect(callsFor('chart-back')).toEqual(['template chart-back']);
      await store.client.agent.updateMany({ where: { name: 'chart-back' }, data: { chartRef: 'charts/an-older-agent-chart', chartName: 'an-older-agent-chart' } });
      await runner.run(caller('carol'), rollbackAgent({ namespace: 'ns', name: 'chart-back' }, parseInput(RollbackAgentDto, { revision: 1 })));
      expect((await store.client.agent.findFirst({ where: { name: 'chart-back', state: 'active' } }))?.chartRef).toBe(config.agentChart.ref);
      expect((await repository.findActive('ns', 'chart-back'))?.chart.name).toBe('agent');
    });

    it('refuses a dry run as the write would while helm holds the release pending from an interrupted write', async () => {
      await create('held');
      const agent = (await repository.findActive('ns', 'held'))!;
      const values = { ...agent.values, description: 'never landed' };
      await repository.startOperation({
        id: 'op-held-by-a-dead-replica', kind: 'update', namespace: 'ns', name: 'held', agentId: agent.id, request: {}, actor: 'erin', owner: 'replica-gone',
        intent: { spec: { ...agent.spec, description: 'never landed' }, values }, baseHelmRevision: agent.helmRevision,
      });
      helm.hold({ namespace: 'ns', name: 'held' }, 'pending-upgrade', values);
      expect(await refusal(update('held', { description: 'real' }))).toBe('conflict');
      expect(await refusal(update('held', { description: 'dry', dryRun: true }))).toBe('conflict');
      const dryRollback = runner.run(caller('carol'), rollbackAgent({ namespace: 'ns', name: 'held' }, parseInput(RollbackAgentDto, { revision: 1, dryRun: true })));
      expect(await refusal(dryRollback)).toBe('conflict');
      const freeing = runner.run(caller('carol'), rollbackAgent({ namespace: 'ns', name: 'held' }, parseInput(RollbackAgentDto, { revision: 1, dryRun: true, freeStuckRelease: true })));
      await expect(freeing).resolves.toMatchObject({ dryRun: true, rolledBackTo: 1 });
      expect((await repository.operation('op-held-by-a-dead-replica'))?.state).toBe('pending');
    });

    it('starts a new agent of a deleted name past the old one\'s version: an ETag kept from the old one is stale', async () => {
      await create('again');
      for (const description of ['v2', 'v3', 'v4']) await update('again', { description });
      const old = (await repository.findActive('ns', 'again'))!;
      await runner.run(caller('dave'), deleteAgent({ namespace: 'ns', name: 'again' }, parseInput(DeleteAgentDto, {})));
      const renewed = await create('again');
      expect(renewed.agent!.version).toBeGreaterThan(old.version);
      expect(await refusal(update('again', { description: 'with the old ETag', expectedVersion: old.version }))).toBe('precondition_failed');
    });

    it('deletes with one helm uninstall and keeps the record as deleted', async () => {
      await create('gone');
      helm.calls.length = 0;
      const answer = await runner.run(caller('dave'), deleteAgent({ namespace: 'ns', name: 'gone' }, parseInput(DeleteAgentDto, {})));
      expect(callsFor('gone')).toEqual(['uninstall gone']);
      expect(answer).toMatchObject({ releaseRemoved: true, deleted: { state: 'deleted', updatedBy: 'dave' } });
      expect(await repository.findActive('ns', 'gone')).toBeNull();
    });
  });
});
