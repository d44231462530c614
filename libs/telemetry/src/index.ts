export { createLog, PinoNestLogger, REDACTED_PATHS } from './log.js';
export type { LogOptions, Pino } from './log.js';
export { Metrics } from './metrics.js';
export type { PoolNumbers } from './metrics.js';
export { TelemetryModule } from './telemetry.module.js';
export { Tracing, tracingEndpoint } from './tracing.js';
export type { SpanAttributes, SpanKind, SpanOptions, TraceSpan } from './tracing.js';
export { newTraceId, parseTraceparent } from './traceparent.js';
