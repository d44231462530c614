// What each record shape writes, on the FAKE in-memory store: what helm applied wins over what was written, and the chart defaults as the runner and recovery rely on.
import { describe, expect, it } from '@jest/globals';
import { FakeAgentStore } from '../../../../test/support/fake-agent-store.js';
import { toChartValues, type ChartValues } from '../domain/agent-spec.js';
import { recordWrite, type Landing } from './record-write.js';

const SPEC = { modelConfig: 'm', toolset: ['preset:read-only'] };
const WRITTEN = toChartValues(SPEC);
const REPORTED: ChartValues = { ...WRITTEN, description: 'as helm reports it' };
const RUN_CHART = { ref: '/charts/agent', version: '0.6.0', source: 'oci://registry.example/charts/agent', name: 'agent', chartVersion: '0.6.0' };

async function journaled(store: FakeAgentStore, name: string): Promise<Landing> {
  const op = await store.startOperation({ id: `op-${name}-${store.operations.size}`, kind: 'create', namespace: 'ns', name, request: {}, actor: 'alice', owner: 'replica-a' });
  return { namespace: 'ns', name, helmRevision: 1, values: null, chart: RUN_CHART, actor: 'alice', operationId: op.id };
}

describe('recordWrite: every outcome recorded from data', () => {
  it('records a create with the values helm reports, else the ones written, with the run\'s chart unless the record names one', async () => {
    const store = new FakeAgentStore();
    const reported = await recordWrite(store, { create: { spec: SPEC, values: WRITTEN } }, { ...(await journaled(store, 'a')), values: REPORTED });
    expect(reported).toMatchObject({ revision: 1, values: { description: 'as helm reports it' }, chart: { version: '0.6.0' }, createdBy: 'alice' });
    const own = { ref: '/bundled/agent-0.5.0.tgz', version: '0.5.0', source: '/bundled/agent-0.5.0.tgz', name: 'agent', chartVersion: '0.5.0' };
    const written = await recordWrite(store, { create: { spec: SPEC, values: WRITTEN, chart: own } }, await journaled(store, 'b'));
    expect(written).toMatchObject({ values: { description: '' }, chart: { version: '0.5.0' } });
    expect(store.journal().map((op) => op.state)).toEqual(['succeeded', 'succeeded']);
  });

  it('records a change as a new revision, naming the chart the change applied when the record names none', async () => {
    const store = new FakeAgentStore();
    const agent = (await recordWrite(store, { create: { spec: SPEC, values: WRITTEN } }, await journaled(store, 'a')))!;
    const landing = { ...(await journaled(store, 'a')), helmRevision: 2, applied: { ref: '/charts/agent-0.7.0.tgz', version: '0.7.0' } };
    const changed = await recordWrite(store, { change: { agent, spec: SPEC, values: REPORTED, kind: 'update' } }, landing);
    expect(changed).toMatchObject({ revision: 2, version: agent.version + 1, helmRevision: 2, values: { description: 'as helm reports it' }, chart: { version: '0.7.0' } });
  });

  it('records nothing at all (the operation closed as succeeded) and a delete (the agent kept as deleted)', async () => {
    const store = new FakeAgentStore();
    const agent = (await recordWrite(store, { create: { spec: SPEC, values: WRITTEN } }, await journaled(store, 'a')))!;
    const none = await journaled(store, 'half-release');
    await recordWrite(store, { nothing: true }, none);
    expect((await store.operation(none.operationId))?.state).toBe('succeeded');
    const deleted = await recordWrite(store, { delete: { agent } }, { ...(await journaled(store, 'a')), helmRevision: null });
    expect(deleted).toMatchObject({ state: 'deleted', revision: 1 });
    expect(await store.findActive('ns', 'a')).toBeNull();
  });

  it('records an adoption\'s helm history as revisions, the first a create, by the actor who adopted it', async () => {
    const store = new FakeAgentStore();
    const history = [{ values: WRITTEN, helmRevision: 3 }, { values: REPORTED, helmRevision: 5 }];
    const adopted = await recordWrite(store, { adoption: { chart: { ref: RUN_CHART.source, version: '0.6.0' }, history } }, await journaled(store, 'found'));
    expect(adopted).toMatchObject({ revision: 2, helmRevision: 5, createdBy: 'alice', values: { description: 'as helm reports it' } });
    expect(store.revisions.map((r) => [r.revision, r.kind, r.helmRevision])).toEqual([[1, 'create', 3], [2, 'update', 5]]);
  });
});
