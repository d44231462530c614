// npm test: also on PostgreSQL — the store side of the write runner, the same steps on the repository and its fake
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Store } from '@app/store';
import { FakeAgentStore } from '../../../../test/support/fake-agent-store.js';
import { freshDatabaseUrl, type FreshDatabase } from '../../../../test/support/test-app.js';
import { AgentsRepository, type AppliedChange } from '../persistence/agents.repository.js';
import { toChartValues, type AgentSpec } from '../domain/agent-spec.js';
import type { AgentWriteStore } from './ports.js';

/**
 * The unit suites trust FakeAgentStore to answer as AgentsRepository does: each step here runs on
 * both, and both must give the same answers (versions, revisions, operation states, refusals).
 */
describe('AgentWriteStore: the repository and its fake agree', () => {
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

  const spec = (description: string): AgentSpec => ({ modelConfig: 'm', toolset: ['preset:read-only'], description });
  const change = (description: string, operationId: string, kind: AppliedChange['kind'], helmRevision: number): AppliedChange => ({
    spec: spec(description), values: toChartValues(spec(description)), helmRevision, kind, actor: 'alice', operationId,
  });
  const chart = { ref: 'charts/agent' };

  /** One agent's life on `repo`, what a reader sees after each step. */
  async function life(repo: AgentWriteStore, name: string) {
    const seen: unknown[] = [];
    const start = async (kind: 'create' | 'update' | 'delete' | 'rollback', agentId?: string) => {
      const id = randomUUID();
      await repo.startOperation({ id, kind, namespace: 'ns', name, agentId, request: {}, actor: 'alice', owner: 'replica-a', baseHelmRevision: null });
      return id;
    };
    const agentOf = async () => {
      const agent = await repo.findActive('ns', name);
      return agent && { revision: agent.revision, version: agent.version, helmRevision: agent.helmRevision, origin: agent.origin, state: agent.state, last: agent.lastOperation?.state };
    };
    const refusal = (promise: Promise<unknown>) => promise.then(() => 'recorded', (error: Error) => error.message.replace(/operation \S+/, 'operation <id>'));

    const created = await start('create');
    expect(await repo.pendingOperations({ namespace: 'ns', name })).toHaveLength(1);
    const first = await repo.recordCreate('ns', name, chart, { ...change('v1', created, 'create', 1), origin: { blueprint: 'helper', version: 1 } });
    seen.push(await agentOf(), (await repo.operation(created))?.state);
    // Recording the same operation again is refused and changes nothing.
    seen.push(await refusal(repo.recordChange(first, change('again', created, 'update', 2))), await agentOf());

    const updated = await start('update', first.id);
    seen.push((await repo.lastOperation('ns', name, first.id))?.state);
    const second = await repo.recordChange(first, { ...change('v2', updated, 'update', 2), origin: { blueprint: 'helper', version: 2 } });
    seen.push(await agentOf(), (await repo.revision(first.id, 2))?.values.description, (await repo.revisionOfOperation(updated))?.revision);

    const moved = await start('update', first.id);
    await repo.recordOriginMove(second, { blueprint: 'helper', version: 3 }, moved);
    seen.push(await agentOf(), await repo.revisionOfOperation(moved));

    const failed = await start('update', first.id);
    seen.push(await repo.failOperation(failed, 'backend_error', 'helm failed'), await repo.failOperation(failed, 'backend_error', 'twice'));
    seen.push(await refusal(repo.succeedOperation(failed)), (await repo.operation(failed))?.errorMessage, await agentOf());

    const deleted = await start('delete', first.id);
    const gone = await repo.recordDelete(second, deleted, 'dave');
    seen.push({ state: gone.state, version: gone.version, updatedBy: gone.updatedBy }, await agentOf(), (await repo.agentById(first.id))?.state);

    const again = await start('create');
    await repo.recordCreate('ns', name, chart, change('v1', again, 'create', 1));
    seen.push(await agentOf(), await repo.pendingOperations({ namespace: 'ns', name }));
    return seen;
  }

  it('gives the same answers through one agent life: create, a refused second record, update, origin move, failure, delete, a new agent of the name', async () => {
    const real = await life(new AgentsRepository(store), 'lived');
    const fake = await life(new FakeAgentStore(), 'lived');
    expect(fake).toEqual(real);
    // …and the life is the one the unit rows assume.
    expect(real).toEqual([
      { revision: 1, version: 1, helmRevision: 1, origin: { blueprint: 'helper', version: 1 }, state: 'active', last: 'succeeded' },
      'succeeded',
      'operation <id> is no longer pending: it was recorded or closed elsewhere',
      expect.objectContaining({ revision: 1, version: 1 }),
      'pending',
      { revision: 2, version: 2, helmRevision: 2, origin: { blueprint: 'helper', version: 2 }, state: 'active', last: 'succeeded' },
      'v2',
      2,
      { revision: 2, version: 2, helmRevision: 2, origin: { blueprint: 'helper', version: 3 }, state: 'active', last: 'succeeded' },
      null,
      true,
      false,
      'operation <id> is no longer pending: it was recorded or closed elsewhere',
      'helm failed',
      expect.objectContaining({ revision: 2, version: 2, last: 'failed' }),
      { state: 'deleted', version: 3, updatedBy: 'dave' },
      null,
      'deleted',
      { revision: 1, version: 4, helmRevision: 1, origin: null, state: 'active', last: 'succeeded' },
      [],
    ]);
  });
});
