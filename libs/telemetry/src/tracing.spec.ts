import { describe, expect, it } from '@jest/globals';
import { parseTraceparent } from './traceparent.js';
import { Tracing, tracingEndpoint } from './tracing.js';

describe('Tracing without an OTLP endpoint', () => {
  it('stays off: no span is started, functions just run', async () => {
    expect(tracingEndpoint({})).toBeUndefined();
    expect(await Tracing.start({})).toBe(false);
    expect(await Tracing.start({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
    expect(Tracing.enabled).toBe(false);
    expect(Tracing.begin('GET /healthz')).toBeUndefined();
    await expect(Tracing.span('helm install', {}, async (span) => (span === undefined ? 'ran' : 'spanned'))).resolves.toBe('ran');
  });

  it.each([
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'http://collector:4318'],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'http://collector:4318/v1/traces'],
  ])('is turned on by %s', (name, url) => {
    expect(tracingEndpoint({ [name]: url })).toBe(url);
  });
});

describe(parseTraceparent.name, () => {
  it.each([
    ['00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', sampled: true }],
    [' 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00 ', { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', sampled: false }],
    ['00-00000000000000000000000000000000-b7ad6b7169203331-01', null],
    ['00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01', null],
    ['ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', null],
    ['00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01', null],
    ['not a traceparent', null],
    [undefined, null],
  ])('reads %s', (header, parsed) => {
    expect(parseTraceparent(header)).toEqual(parsed);
  });
});
