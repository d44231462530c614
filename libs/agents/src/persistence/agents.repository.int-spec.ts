// npm test: also on PostgreSQL — the repository's queries, paging, labels and revision numbering
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TestClock } from '@app/common';
import { Store } from '@app/store';
import { freshDatabaseUrl, type FreshDatabase } from '../../../../test/support/test-app.js';
import type { CursorKey } from '../api/cursors.js';
import { OPERATION_SUMMARY_COLUMNS, type AgentRecord } from './records.js';
import { AgentsRepository, type AgentListFilter } from './agents.repository.js';
import { toChartValues, type AgentSpec } from '../domain/agent-spec.js';

describe(AgentsRepository.name, () => {
  let db: FreshDatabase;
  let store: Store;
  let repository: AgentsRepository;
  const spec: AgentSpec = { modelConfig: 'm', toolset: ['preset:none'] };
  const values = toChartValues(spec);

  beforeAll(async () => {
    db = await freshDatabaseUrl();
    store = await Store.open(db.url);
    repository = new AgentsRepository(store);
  });

  afterAll(async () => {
    await store?.client.$disconnect();
    await db?.drop();
  });

  const withLabels = (labels?: Record<string, string>): AgentSpec => (labels ? { ...spec, labels } : spec);

  async function create(namespace: string, name: string, labels?: Record<string, string>): Promise<AgentRecord> {
    const id = randomUUID();
    await repository.startOperation({ id, kind: 'create', namespace, name, request: {}, actor: 't', owner: 'r' });
    const change = { spec: withLabels(labels), values, helmRevision: 1, kind: 'create' as const, actor: 't', operationId: id };
    return repository.recordCreate(namespace, name, { ref: 'c' }, change);
  }

  async function change(agent: AgentRecord, labels?: Record<string, string>, kind: 'update' | 'rollback' = 'update'): Promise<AgentRecord> {
    const id = randomUUID();
    await repository.startOperation({ id, kind, namespace: agent.namespace, name: agent.name, agentId: agent.id, request: {}, actor: 't', owner: 'r' });
    return repository.recordChange(agent, { spec: withLabels(labels), values, helmRevision: agent.revision + 1, kind, actor: 't', operationId: id });
  }

  async function remove(agent: AgentRecord): Promise<AgentRecord> {
    const id = randomUUID();
    await repository.startOperation({ id, kind: 'delete', namespace: agent.namespace, name: agent.name, agentId: agent.id, request: {}, actor: 't', owner: 'r' });
    return repository.recordDelete(agent, id, 't');
  }

  /** Every page of a listing, following each page's last key as the next cursor. */
  async function pages(filter: Omit<AgentListFilter, 'after'>): Promise<string[][]> {
    const seen: string[][] = [];
    let after: CursorKey | undefined;
    for (;;) {
      const page = await repository.listPage({ ...filter, after });
      expect(page.items.length).toBeLessThanOrEqual(filter.limit);
      seen.push(page.items.map((a) => `${a.name}:${a.state}`));
      if (!page.more) return seen;
      after = page.items[page.items.length - 1];
    }
  }

  const names = async (filter: AgentListFilter) => (await repository.listPage(filter)).items.map((a) => a.name);

  it('never shows an operation succeeded next to the agent as it was before that operation', async () => {
    let agent = await create('n', 'a');
    const skewed: string[] = [];
    for (let i = 0; i < 100; i++) {
      const id = randomUUID();
      await repository.startOperation({ id, kind: 'update', namespace: 'n', name: 'a', agentId: agent.id, request: {}, actor: 't', owner: 'r' });
      const write = repository.recordChange(agent, { spec, values, helmRevision: i + 2, kind: 'update', actor: 't', operationId: id });
      const [written, ...seen] = await Promise.all([write, ...Array.from({ length: 5 }, () => repository.findActive('n', 'a'))]);
      for (const read of seen) {
        if (read?.lastOperation?.id === id && read.lastOperation.state === 'succeeded' && read.revision !== written.revision) skewed.push(`revision ${read.revision}`);
      }
      agent = written;
    }
    expect(skewed).toEqual([]);
    // 100 rounds of a write and five reads: on a loaded PostgreSQL this takes longer than jest's default 5 s
  }, 120_000);

  it('records an operation once: a second recording of the same operation changes nothing', async () => {
    const agent = await create('n', 'twice');
    const id = randomUUID();
    await repository.startOperation({ id, kind: 'update', namespace: 'n', name: 'twice', agentId: agent.id, request: {}, actor: 't', owner: 'r' });
    const applied = { spec, values, helmRevision: 2, kind: 'update' as const, actor: 't', operationId: id };
    const first = await repository.recordChange(agent, applied);
    await expect(repository.recordChange(first, applied)).rejects.toThrow(/no longer pending/);
    expect((await repository.revisions(agent.id)).map((r) => r.revision)).toEqual([1, 2]);
    expect((await repository.findActive('n', 'twice'))?.version).toBe(first.version);
  });

  it("closes an operation at the store's time, the one its readers compare with, also on a clock moved forward", async () => {
    // an MCP task follows its journal entry once the entry finished RESULT_GRACE_MS before the store's now():
    // an entry closed at the host's time while the clock ran ahead read as long finished, too early
    const clock = new TestClock();
    const ahead = await Store.open(db.url, undefined, clock);
    try {
      const moved = new AgentsRepository(ahead);
      clock.advance(3_600_000);
      const agent = await create('n', 'ahead');
      const [succeeded, failed] = [randomUUID(), randomUUID()];
      await moved.startOperation({ id: succeeded, kind: 'update', namespace: 'n', name: 'ahead', agentId: agent.id, request: {}, actor: 't', owner: 'r' });
      await moved.recordChange(agent, { spec, values, helmRevision: 2, kind: 'update', actor: 't', operationId: succeeded });
      await moved.startOperation({ id: failed, kind: 'update', namespace: 'n', name: 'ahead', agentId: agent.id, request: {}, actor: 't', owner: 'r' });
      await moved.failOperation(failed, 'backend_error', 'helm failed');
      const now = (await ahead.now()).getTime();
      for (const id of [succeeded, failed]) {
        const { finishedAt } = await ahead.client.operation.findUniqueOrThrow({ where: { id } });
        expect(Math.abs(now - (finishedAt?.getTime() ?? 0))).toBeLessThan(60_000);
      }
    } finally {
      await ahead.client.$disconnect();
    }
  });

  describe('listPage', () => {
    beforeAll(async () => {
      // code-point order: "a" < "a-b" < "a0" < "b" ("-" is U+002D, "0" U+0030), whatever the database's collation
      for (const name of ['b', 'a0', 'a-b', 'a']) await create('order', name);
      await create('other', 'a');
    });

    it('orders by namespace, name and id by code point, one namespace at a time', async () => {
      expect(await names({ namespace: 'order', limit: 10 })).toEqual(['a', 'a-b', 'a0', 'b']);
      expect(await names({ namespace: 'other', limit: 10 })).toEqual(['a']);
    });

    it('pages with limit and more, each page continuing after the previous one', async () => {
      expect(await pages({ namespace: 'order', limit: 3 })).toEqual([['a:active', 'a-b:active', 'a0:active'], ['b:active']]);
      expect(await pages({ namespace: 'order', limit: 2 })).toEqual([['a:active', 'a-b:active'], ['a0:active', 'b:active']]);
      expect((await repository.listPage({ namespace: 'order', limit: 4 })).more).toBe(false);
    });

    it('continues after a cursor whose agent was deleted meanwhile', async () => {
      const gone = await create('cursor', 'b');
      for (const name of ['a', 'c']) await create('cursor', name);
      const first = await repository.listPage({ namespace: 'cursor', limit: 2 });
      expect(first.items.map((a) => a.name)).toEqual(['a', 'b']);
      await remove(gone);
      expect(await names({ namespace: 'cursor', after: first.items[1], limit: 2 })).toEqual(['c']);
      expect(await names({ namespace: 'cursor', after: { namespace: 'cursor', name: 'bb', id: '' }, limit: 2 })).toEqual(['c']);
    });

    it('filters by state: active, deleted, or both when none is asked for', async () => {
      const old = await create('states', 'x', { team: 'sre' });
      await remove(old);
      await create('states', 'x', { team: 'ops' });
      await create('states', 'y');
      expect(await pages({ namespace: 'states', state: 'active', limit: 1 })).toEqual([['x:active'], ['y:active']]);
      expect(await pages({ namespace: 'states', state: 'deleted', limit: 1 })).toEqual([['x:deleted']]);
      expect((await pages({ namespace: 'states', limit: 1 })).flat().sort()).toEqual(['x:active', 'x:deleted', 'y:active']);
    });

    it('filters by label key or key=value, on either state, across pages', async () => {
      const gone = await create('labels', 'c', { team: 'sre' });
      await remove(gone);
      await create('labels', 'a', { team: 'sre', tier: 'gold' });
      await create('labels', 'b', { team: 'ops' });
      await create('labels', 'd', { team: 'sre' });
      await create('labels', 'e');
      expect(await pages({ namespace: 'labels', state: 'active', label: 'team=sre', limit: 1 })).toEqual([['a:active'], ['d:active']]);
      expect(await pages({ namespace: 'labels', state: 'active', label: 'team', limit: 2 })).toEqual([['a:active', 'b:active'], ['d:active']]);
      expect(await pages({ namespace: 'labels', state: 'active', label: 'tier=silver', limit: 2 })).toEqual([[]]);
      expect(await pages({ namespace: 'labels', state: 'deleted', label: 'team=sre', limit: 2 })).toEqual([['c:deleted']]);
      expect(await pages({ namespace: 'labels', label: 'team=sre', limit: 1 })).toEqual([['a:active'], ['c:deleted'], ['d:active']]);
      // without a namespace the label reaches every namespace
      expect((await repository.listPage({ label: 'tier=gold', limit: 5 })).items.map((a) => `${a.namespace}/${a.name}`)).toEqual(['labels/a']);
    });

    it('takes a label value holding "=" whole, and a key that is only a prefix of another matches nothing', async () => {
      await create('eq', 'a', { expr: 'x=y', team: 'sre' });
      expect(await names({ namespace: 'eq', label: 'expr=x=y', limit: 5 })).toEqual(['a']);
      expect(await names({ namespace: 'eq', label: 'tea', limit: 5 })).toEqual([]);
    });
  });

  describe('labels stay in step with the spec', () => {
    it('follows create, update, rollback and delete', async () => {
      const find = (label: string, state: 'active' | 'deleted' = 'active') => names({ namespace: 'step', state, label, limit: 5 });
      let agent = await create('step', 'a', { team: 'sre' });
      expect(await find('team=sre')).toEqual(['a']);
      agent = await change(agent, { team: 'ops', tier: 'gold' });
      expect([await find('team=sre'), await find('team=ops'), await find('tier')]).toEqual([[], ['a'], ['a']]);
      // a change that keeps the labels (written without rewriting their rows) keeps them findable
      agent = await change(agent, { tier: 'gold', team: 'ops' });
      expect([await find('team=ops'), await find('tier=gold')]).toEqual([['a'], ['a']]);
      agent = await change(agent, { team: 'sre' }, 'rollback');
      expect([await find('team=sre'), await find('team=ops'), await find('tier')]).toEqual([['a'], [], []]);
      agent = await change(agent, undefined);
      expect(await find('team')).toEqual([]);
      agent = await change(agent, { team: 'sre' });
      await remove(agent);
      expect([await find('team=sre'), await find('team=sre', 'deleted')]).toEqual([[], ['a']]);
    });

    it('does not change when the recording fails', async () => {
      const agent = await create('step', 'b', { team: 'sre' });
      const id = randomUUID();
      await repository.startOperation({ id, kind: 'update', namespace: 'step', name: 'b', agentId: agent.id, request: {}, actor: 't', owner: 'r' });
      await repository.failOperation(id, 'backend_error', 'helm failed');
      const late = { spec: withLabels({ team: 'ops' }), values, helmRevision: 2, kind: 'update' as const, actor: 't', operationId: id };
      await expect(repository.recordChange(agent, late)).rejects.toThrow(/no longer pending/);
      expect(await names({ namespace: 'step', label: 'team=sre', state: 'active', limit: 5 })).toEqual(['b']);
      expect(await names({ namespace: 'step', label: 'team=ops', state: 'active', limit: 5 })).toEqual([]);
    });
  });

  describe('the last operation', () => {
    it('is the same in a list, in findActive and from lastOperation, whatever its outcome', async () => {
      const agent = await create('last', 'a');
      const failed = randomUUID();
      await repository.startOperation({ id: failed, kind: 'update', namespace: 'last', name: 'a', agentId: agent.id, request: {}, actor: 't', owner: 'r' });
      await repository.failOperation(failed, 'backend_error', 'helm failed');
      const listed = (await repository.listPage({ namespace: 'last', limit: 5 })).items[0].lastOperation;
      const found = (await repository.findActive('last', 'a'))?.lastOperation;
      expect(listed).toMatchObject({ id: failed, kind: 'update', state: 'failed', errorMessage: 'helm failed' });
      expect(found).toEqual(listed);
      // a read joins only the columns an answer shows (OperationSummary); the journal has them all
      expect(Object.keys(listed ?? {}).sort()).toEqual([...OPERATION_SUMMARY_COLUMNS].sort());
      expect(await repository.lastOperation('last', 'a', agent.id)).toMatchObject({ ...listed, agentId: agent.id, request: {} });
      // starting an operation does not count as a change of the agent
      expect((await repository.findActive('last', 'a'))?.updatedAt).toEqual(agent.updatedAt);
    });

    it('is a create of the same name that failed while the agent was active, and stays its own once it is deleted', async () => {
      const agent = await create('last', 'b');
      const refused = randomUUID();
      await repository.startOperation({ id: refused, kind: 'create', namespace: 'last', name: 'b', request: {}, actor: 't', owner: 'r' });
      await repository.failOperation(refused, 'conflict', 'release exists');
      expect((await repository.findActive('last', 'b'))?.lastOperation).toMatchObject({ id: refused, kind: 'create', state: 'failed' });
      expect(await repository.lastOperation('last', 'b', agent.id)).toMatchObject({ id: refused, agentId: null });
      const deleted = await remove(agent);
      await create('last', 'b');
      const [old] = (await repository.listPage({ namespace: 'last', state: 'deleted', limit: 5 })).items;
      expect(old.id).toBe(deleted.id);
      expect(old.lastOperation).toMatchObject({ kind: 'delete', state: 'succeeded' });
      expect(await repository.lastOperation('last', 'b', deleted.id)).toMatchObject({ id: old.lastOperation?.id, agentId: deleted.id });
      expect((await repository.findActive('last', 'b'))?.lastOperation).toMatchObject({ kind: 'create', state: 'succeeded' });
      expect(await repository.lastOperation('last', 'b')).toMatchObject({ kind: 'create', state: 'succeeded' });
    });
  });
});
