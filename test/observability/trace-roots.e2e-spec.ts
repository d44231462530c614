import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Metrics, Tracing } from '@app/telemetry';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { parsePrometheusText } from '../support/prometheus-text.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';

const SERVER = 2; // OTLP SpanKind

/**
 * Issue 24 item 8: with tracing on, the service's own polls (the blueprints' generation read every
 * second, the recovery sweep, probes and scrapes) start no trace; a caller's request does, with the
 * store's spans beneath it. The service runs in this process with the OpenTelemetry SDK exporting
 * to a local OTLP receiver; closing the app flushes the spans.
 */
describe('traces with tracing on: only what a caller asked for', () => {
  let receiver: OtlpReceiver;
  let t: TestApp;
  let spans: ReceivedSpan[];
  const traceId = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
  const callerSpan = '1a2b3c4d5e6f7081';

  /** How many times the blueprint catalog read the store's generation so far (its poll, once a second). */
  async function generationReads(): Promise<number> {
    const { samples } = parsePrometheusText((await t.app.get(Metrics).scrape()).text);
    return samples.filter((s) => s.name === 'agent_manager_store_query_duration_seconds_count' && s.labels.model === 'StoreGeneration').reduce((sum, s) => sum + s.value, 0);
  }

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    // The SDK reads its exporter settings from the process's environment, as the service's would.
    Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '60000' });
    expect(await Tracing.start()).toBe(true);
    t = await startTestApp({ LEASE_TTL_SECONDS: '1' });
    const before = await generationReads();
    // At least three polls (and with LEASE_TTL_SECONDS 1, recovery sweeps) happen while the app idles.
    for (let waited = 0; (await generationReads()) < before + 3 && waited < 100; waited++) await sleep(100);
    expect(await generationReads()).toBeGreaterThanOrEqual(before + 3);
    expect((await call(t.url, 'GET', '/healthz')).status).toBe(200);
    expect((await call(t.url, 'GET', '/readyz')).status).toBe(200);
    expect((await call(t.url, 'GET', '/api/v1/agents', undefined, { traceparent: `00-${traceId}-${callerSpan}-01` })).status).toBe(200);
    await t.close();
    await Tracing.shutdown();
    spans = receiver.spans;
  });

  afterAll(async () => {
    await Tracing.shutdown();
    for (const name of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_BSP_SCHEDULE_DELAY']) delete process.env[name];
    await receiver?.close();
  });

  it('sends no trace of its own polls: every trace starts at a request a caller sent', () => {
    const roots = spans.filter((s) => s.parentSpanId === '');
    expect(roots.map((s) => `${s.name} (kind ${s.kind})`)).toEqual([]);
    const fromCaller = spans.filter((s) => s.traceId === traceId);
    expect(spans.filter((s) => s.traceId !== traceId).map((s) => s.name)).toEqual([]);
    expect(fromCaller.length).toBeGreaterThan(0);
  });

  it("traces the caller's request with the store's spans beneath it, and no probe", () => {
    const request = spans.find((s) => s.parentSpanId === callerSpan);
    expect(request).toMatchObject({ name: 'GET /api/v1/agents', kind: SERVER, traceId });
    expect(spans.filter((s) => s.parentSpanId === request!.spanId).map((s) => s.name)).toContain('store query');
    expect(spans.filter((s) => /healthz|readyz/.test(s.name))).toEqual([]);
  });
});
