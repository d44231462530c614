import * as api from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';

/**
 * The OpenTelemetry SDK, configured by the standard OTEL_* variables (exporter, protocol, headers,
 * sampler, resource, batch delays). Loaded only when OTEL_EXPORTER_OTLP_ENDPOINT (or its traces
 * twin) is set. The service's metrics are Prometheus's (/metrics) and its logs are lines on
 * stdout: the SDK exports them too only when OTEL_METRICS_EXPORTER or OTEL_LOGS_EXPORTER asks.
 */
export function startSdk(env: NodeJS.ProcessEnv): { api: typeof api; sdk: NodeSDK } {
  const named = env.OTEL_SERVICE_NAME !== undefined || /(^|,)\s*service\.name=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const sdk = new NodeSDK({
    ...(named ? {} : { serviceName: 'agent-manager' }),
    ...(env.OTEL_METRICS_EXPORTER ? {} : { metricReaders: [] }),
    ...(env.OTEL_LOGS_EXPORTER ? {} : { logRecordProcessors: [] }),
    instrumentations: [],
  });
  sdk.start();
  return { api, sdk };
}
