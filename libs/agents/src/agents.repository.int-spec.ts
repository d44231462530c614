import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Store } from '@app/store';
import { freshDatabaseUrl, type FreshDatabase } from '../../../test/support/test-app.js';
import { AgentsRepository } from './agents.repository.js';
import { toChartValues, type AgentSpec } from './agents.types.js';

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

  it('never shows an operation succeeded next to the agent as it was before that operation', async () => {
    const created = randomUUID();
    await repository.startOperation({ id: created, kind: 'create', namespace: 'n', name: 'a', request: {}, actor: 't', owner: 'r' });
    let agent = await repository.recordCreate('n', 'a', { ref: 'c' }, { spec, values, helmRevision: 1, kind: 'create', actor: 't', operationId: created });
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
  });

  it('records an operation once: a second recording of the same operation changes nothing', async () => {
    const created = randomUUID();
    await repository.startOperation({ id: created, kind: 'create', namespace: 'n', name: 'twice', request: {}, actor: 't', owner: 'r' });
    const agent = await repository.recordCreate('n', 'twice', { ref: 'c' }, { spec, values, helmRevision: 1, kind: 'create', actor: 't', operationId: created });
    const id = randomUUID();
    await repository.startOperation({ id, kind: 'update', namespace: 'n', name: 'twice', agentId: agent.id, request: {}, actor: 't', owner: 'r' });
    const change = { spec, values, helmRevision: 2, kind: 'update' as const, actor: 't', operationId: id };
    const first = await repository.recordChange(agent, change);
    await expect(repository.recordChange(first, change)).rejects.toThrow(/no longer pending/);
    expect((await repository.revisions(agent.id)).map((r) => r.revision)).toEqual([1, 2]);
    expect((await repository.findActive('n', 'twice'))?.version).toBe(first.version);
  });
});
