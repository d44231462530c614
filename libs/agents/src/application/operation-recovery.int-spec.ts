// npm test: also on PostgreSQL — pending operations found and finished from the store
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig, SystemClock, type AppConfig } from '@app/common';
import { ChartSources, type ResolvedChart } from '@app/helm';
import { Store } from '@app/store';
import { FakeHelm } from '../../../../test/support/fake-helm.js';
import { freshDatabaseUrl, type FreshDatabase } from '../../../../test/support/test-app.js';
import { writeParts } from '../../../../test/support/write-parts.js';
import type { OperationRecord } from '../persistence/records.js';
import { AgentsRepository } from '../persistence/agents.repository.js';
import { toChartValues, type AgentSpec } from '../domain/agent-spec.js';
import type { CreateAgentDto, UpdateAgentDto } from '../api/requests.dto.js';
import { createAgent } from '../use-cases/create-agent.js';
import { updateAgent } from '../use-cases/update-agent.js';
import type { WriteRunner } from '../runner/write-runner.js';
import { OperationRecovery } from './operation-recovery.service.js';

/**
 * The store, with a FAKE failure of its next reads of one operation: a store that fails between
 * the sweep's lease and its read cannot be timed from outside (SQLite serves reads under
 * another writer's lock). Everything else is the real store.
 */
class FlakyRepository extends AgentsRepository {
  failReads = 0;
  failCreates = 0;
  failChanges = 0;

  /** A FAKE store failure of a create's record, after helm installed it: the operation stays pending. */
  override async recordCreate(...args: Parameters<AgentsRepository['recordCreate']>): ReturnType<AgentsRepository['recordCreate']> {
    if (this.failCreates > 0) {
      this.failCreates--;
      throw new Error('SQLITE_IOERR: disk I/O error (a FAKE store failure)');
    }
    return super.recordCreate(...args);
  }

  /** A FAKE store failure of an update's record, after helm upgraded the release: the operation stays pending. */
  override async recordChange(...args: Parameters<AgentsRepository['recordChange']>): ReturnType<AgentsRepository['recordChange']> {
    if (this.failChanges > 0) {
      this.failChanges--;
      throw new Error('SQLITE_IOERR: disk I/O error (a FAKE store failure)');
    }
    return super.recordChange(...args);
  }

  override async operation(id: string): Promise<OperationRecord | null> {
    if (this.failReads > 0) {
      this.failReads--;
      throw new Error('SQLITE_IOERR: disk I/O error (a FAKE store failure)');
    }
    return super.operation(id);
  }
}

/**
 * The configured OCI AGENT_CHART while its registry does not answer (a FAKE outage, no pull is
 * tried): the bundled chart stands in, as ChartSources does then; `reachable` ends the outage.
 */
class OutageCharts extends ChartSources {
  reachable = false;

  constructor(private readonly settings: AppConfig, helm: FakeHelm) {
    super(settings, helm, new SystemClock());
  }

  override configured(): Promise<ResolvedChart> {
    if (!this.reachable) return Promise.resolve({ ...this.bundled(), fallback: 'registry.example.invalid does not answer (a FAKE outage)' });
    const { ref, version } = this.settings.agentChart;
    return Promise.resolve({ ref: '/cache/agent-0.6.0.tgz', version, source: ref, name: 'agent', chartVersion: version ?? null });
  }
}

describe(OperationRecovery.name, () => {
  let db: FreshDatabase;
  let store: Store;
  let helm: FakeHelm;
  let repository: FlakyRepository;
  let recovery: OperationRecovery;
  let runner: WriteRunner;
  let charts: OutageCharts;

  beforeAll(async () => {
    db = await freshDatabaseUrl();
    store = await Store.open(db.url);
    const config = loadConfig({
      DATABASE_URL: db.url, LEASE_TTL_SECONDS: '5', REPLICA_ID: 'replica-a', AGENT_CHART: 'oci://registry.example.invalid/charts/agent', AGENT_CHART_VERSION: '0.6.0',
    });
    helm = new FakeHelm();
    repository = new FlakyRepository(store);
    charts = new OutageCharts(config, helm);
    ({ recovery, runner } = writeParts(config, store, helm, { repository, charts }));
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

  it('records a create that landed with the chart it installed: the bundled one that stood in for AGENT_CHART, even once the registry answers again', async () => {
    charts.reachable = false;
    const bundled = charts.bundled();
    repository.failCreates = 1;
    const input = { namespace: 'ns', name: 'stand-in', modelConfig: 'm', toolset: ['preset:read-only'] } as CreateAgentDto;
    await expect(runner.run({ actor: 'alice', door: 'rest', requestId: 'create stand-in' }, createAgent(input))).rejects.toThrow(/recording it in the store failed/);
    charts.reachable = true;

    await recovery.sweep();
    const agent = await repository.findActive('ns', 'stand-in');
    expect(agent).toMatchObject({ createdBy: 'alice', chartRef: bundled.source, chart: { name: bundled.name, version: bundled.chartVersion } });
    expect(agent?.chartRef).not.toBe('oci://registry.example.invalid/charts/agent');
  });

  it('records a create journaled without its chart (by an earlier version) with the chart writes use now, as the write runner decides it', async () => {
    charts.reachable = false;
    const id = await orphanedCreate('journaled-before');
    await recovery.sweep();
    expect((await repository.operation(id))?.state).toBe('succeeded');
    expect(await repository.findActive('ns', 'journaled-before')).toMatchObject({ chartRef: charts.bundled().source, chart: { version: charts.bundled().chartVersion } });
  });

  it('records an update that landed with the chart it upgraded to, as the live update would have (the bundled one standing in), not the agent\'s old chart', async () => {
    const alice = { actor: 'alice', door: 'rest' as const, requestId: 'moved' };
    charts.reachable = true;
    await runner.run(alice, createAgent({ namespace: 'ns', name: 'moved', modelConfig: 'm', toolset: ['preset:read-only'] } as CreateAgentDto));
    expect(await repository.findActive('ns', 'moved')).toMatchObject({ chartRef: 'oci://registry.example.invalid/charts/agent', chart: { version: '0.6.0' } });
    charts.reachable = false;
    const bundled = charts.bundled();
    repository.failChanges = 1;
    await expect(runner.run(alice, updateAgent({ namespace: 'ns', name: 'moved' }, { description: 'on the stand-in' } as UpdateAgentDto))).rejects.toThrow(/recording it in the store failed/);
    charts.reachable = true;

    await recovery.sweep();
    expect(await repository.findActive('ns', 'moved')).toMatchObject({ revision: 2, values: { description: 'on the stand-in' }, chartRef: bundled.source, chart: { version: bundled.chartVersion } });
  });
});
