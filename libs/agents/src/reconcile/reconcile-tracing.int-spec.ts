import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { loadConfig } from '@app/common';
import type { LiveAgent } from '@app/kube';
import { Store } from '@app/store';
import { Metrics, Tracing } from '@app/telemetry';
import { FakeHelm } from '../../../../test/support/fake-helm.js';
import { OtlpReceiver, type ReceivedSpan } from '../../../../test/support/otlp-receiver.js';
import { freshDatabaseUrl, type FreshDatabase } from '../../../../test/support/test-app.js';
import { writeParts } from '../../../../test/support/write-parts.js';
import { AgentsRepository } from '../persistence/agents.repository.js';
import { toChartValues } from '../domain/agent-spec.js';
import { ManifestReader } from '../cluster/manifest-reader.js';

Logger.overrideLogger(false);

/**
 * Issue 24 item 8 for the reconciler: the automatic reconciler's checks (which no caller asked for:
 * FleetReconciler hands an agent its watches saw something to do about to reconcileOne) are traced
 * only where they act, each action a trace of its own with the store's spans beneath it; a check
 * that finds nothing to do starts none. The OpenTelemetry SDK
 * exports to a local OTLP receiver; shutting it down flushes the spans.
 */
describe(`Reconciler: traces of the automatic pass`, () => {
  const manifests = new ManifestReader();
  let db: FreshDatabase;
  let store: Store;
  let receiver: OtlpReceiver;
  let spans: ReceivedSpan[];
  const spec = { modelConfig: 'm', toolset: ['preset:read-only'] };

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    // The SDK reads its exporter settings from the process's environment, as the service's would.
    Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '60000' });
    expect(await Tracing.start()).toBe(true);
    db = await freshDatabaseUrl();
    store = await Store.open(db.url, new Metrics()); // with metrics, its queries are spans too
    const config = loadConfig({ DATABASE_URL: db.url, LEASE_TTL_SECONDS: '5', REPLICA_ID: 'replica-a', RECONCILE_AUTOMATIC: 'true' });
    const helm = new FakeHelm();
    const repository = new AgentsRepository(store);
    const kube = { getAgent: async () => ({}) as LiveAgent };
    const parts = writeParts(config, store, helm, { repository });
    const reconciler = parts.reconciler(kube, manifests);

    // One create helm deployed that the store recorded failed: the pass records it (it acts).
    const id = randomUUID();
    const values = toChartValues(spec);
    await repository.startOperation({ id, kind: 'create', namespace: 'ns', name: 'landed', request: spec, actor: 'alice', owner: 'replica-a', intent: { spec, values }, baseHelmRevision: null });
    await repository.failOperation(id, 'backend_error', 'helm timed out');
    await helm.install({ namespace: 'ns', name: 'landed' }, { ref: 'charts/agent' }, values);

    expect(await reconciler.reconcileOne({ namespace: 'ns', name: 'landed' })).toMatchObject({ action: 'record-create', done: true });
    expect(await reconciler.reconcileOne({ namespace: 'ns', name: 'landed' })).toMatchObject({ done: false });
    await reconciler.onModuleDestroy();
    await Tracing.shutdown();
    spans = receiver.spans;
  });

  afterAll(async () => {
    await manifests.close(); // the reconciler reads release manifests in its worker thread; in the service, AgentsModule closes it
    await Tracing.shutdown();
    for (const name of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_BSP_SCHEDULE_DELAY']) delete process.env[name];
    await receiver?.close();
    await store?.client.$disconnect();
    await db?.drop();
  });

  it('sends one trace, for the action it took, with the store writes beneath it; the check that found nothing sends none', () => {
    const roots = spans.filter((s) => s.parentSpanId === '');
    expect(roots).toEqual([expect.objectContaining({ name: 'reconcile record-create', attributes: expect.objectContaining({ 'agent_manager.reconcile.action': 'record-create', 'agent_manager.agent': 'ns/landed' }) })]);
    expect(spans.every((s) => s.traceId === roots[0].traceId)).toBe(true);
    expect(spans.filter((s) => s.parentSpanId === roots[0].spanId).map((s) => s.name)).toContain('store transaction');
  });
});
