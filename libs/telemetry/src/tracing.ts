import type * as OtelApi from '@opentelemetry/api';
import type { NodeSDK } from '@opentelemetry/sdk-node';
import { PROJECT_PACKAGE } from '@app/common';
import { parseTraceparent } from './traceparent.js';

export type SpanKind = 'server' | 'client' | 'internal';
export type SpanAttributes = Record<string, string | number | boolean | string[] | undefined>;

export interface SpanOptions {
  kind?: SpanKind;
  /** A caller's W3C traceparent: the span continues the caller's trace instead of the current one. */
  parent?: unknown;
  attributes?: SpanAttributes;
  /**
   * May start a trace of its own. Without it, a span with no parent (no current span, no caller's
   * traceparent) is not started: a store query or helm run of an internal poll is no trace. Server
   * spans (a caller's request) may always start one.
   */
  root?: boolean;
}

/** A started span: `run` makes it the parent of what `fn` starts; `end` closes it (failed when told why). */
export interface TraceSpan {
  readonly traceId: string;
  set(attributes: SpanAttributes): void;
  rename(name: string): void;
  run<T>(fn: () => T): T;
  end(failure?: unknown): void;
}

interface Sdk {
  api: typeof OtelApi;
  sdk: NodeSDK;
  tracer: OtelApi.Tracer;
}

let otel: Sdk | undefined;

/** The endpoint variables that turn tracing on (the standard OTLP ones). */
export function tracingEndpoint(env: NodeJS.ProcessEnv): string | undefined {
  return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined;
}

/**
 * OpenTelemetry tracing, off unless OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
 * is set; off, nothing of OpenTelemetry is loaded and every span call only runs its function.
 */
export const Tracing = {
  get enabled(): boolean {
    return otel !== undefined;
  },

  /** Starts the SDK when an endpoint is set (OTEL_SDK_DISABLED=true keeps it off). */
  async start(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
    if (otel || !tracingEndpoint(env) || env.OTEL_SDK_DISABLED === 'true') return otel !== undefined;
    const { startSdk } = await import('./otel-sdk.js');
    const version = PROJECT_PACKAGE.version ?? '0.0.0';
    const { api, sdk } = startSdk(env);
    otel = { api, sdk, tracer: api.trace.getTracer('agent-manager', version) };
    return true;
  },

  /** Ends every span still buffered by sending it (SIGTERM, end of stdio): the SDK's shutdown flushes. */
  async shutdown(): Promise<void> {
    const running = otel;
    otel = undefined;
    await running?.sdk.shutdown();
  },

  /**
   * A span, child of the current one (or of `options.parent`); undefined when tracing is off, and
   * when it would start a trace that is neither a caller's (kind server) nor asked for (`root`).
   */
  begin(name: string, options: SpanOptions = {}): TraceSpan | undefined {
    if (!otel) return undefined;
    const { api, tracer } = otel;
    const caller = parseTraceparent(options.parent) ? api.propagation.extract(api.ROOT_CONTEXT, { traceparent: String(options.parent).trim() }) : undefined;
    const parent = caller ?? api.context.active();
    if (!caller && !api.trace.getSpan(parent) && options.kind !== 'server' && !options.root) return undefined;
    const kind = { server: api.SpanKind.SERVER, client: api.SpanKind.CLIENT, internal: api.SpanKind.INTERNAL }[options.kind ?? 'internal'];
    const span = tracer.startSpan(name, { kind, attributes: defined(options.attributes) }, parent);
    const active = api.trace.setSpan(parent, span);
    return {
      traceId: span.spanContext().traceId,
      set: (attributes) => span.setAttributes(defined(attributes)),
      rename: (name) => span.updateName(name),
      run: (fn) => api.context.with(active, fn),
      end: (failure) => {
        if (failure !== undefined) {
          if (failure instanceof Error) span.recordException(failure);
          span.setStatus({ code: api.SpanStatusCode.ERROR, message: failure instanceof Error ? failure.message : String(failure) });
        }
        span.end();
      },
    };
  },

  /** Runs `fn` in a span that ends with it (failed when it throws); off, just runs `fn`. */
  async span<T>(name: string, options: SpanOptions, fn: (span?: TraceSpan) => Promise<T>): Promise<T> {
    const span = Tracing.begin(name, options);
    if (!span) return fn();
    try {
      const result = await span.run(() => fn(span));
      span.end();
      return result;
    } catch (error) {
      span.end(error);
      throw error;
    }
  },
};

function defined(attributes: SpanAttributes | undefined): OtelApi.Attributes {
  return Object.fromEntries(Object.entries(attributes ?? {}).filter(([, value]) => value !== undefined)) as OtelApi.Attributes;
}
