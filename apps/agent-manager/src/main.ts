import { Logger } from '@nestjs/common';
import { isLoopbackHost, loadConfig, type AppConfig } from '@app/common';
import { Metrics, Tracing } from '@app/telemetry';
import { createApp, drainOnShutdown } from './app.factory.js';
import { listenForMetrics } from './http-telemetry.js';
import { exitOnFatal, failedToStart, startStep } from './startup.js';

async function main(): Promise<void> {
  exitOnFatal();
  const config = await startStep(async () => loadConfig());
  // Only with OTEL_EXPORTER_OTLP_ENDPOINT set: otherwise nothing of OpenTelemetry is loaded.
  await Tracing.start();
  // API_TOKENS_FILE and AUTHZ_POLICY_FILE are read while the app is built, BLUEPRINTS_FILE while it
  // starts listening; the store is opened (and migrated) first of all.
  const app = await startStep(() => createApp(config), config);
  await startStep(() => app.listen(config.PORT, config.HOST), config, 'listen');
  const metricsServer = config.METRICS_PORT === undefined ? undefined : await startStep(() => listenForMetrics(config, app.get(Metrics)), config, 'listen');
  drainOnShutdown(app, config, metricsServer);
  const metrics = `http://${config.HOST}:${config.METRICS_PORT ?? config.PORT}/metrics`;
  new Logger('agent-manager').log({
    msg: `listening on http://${config.HOST}:${config.PORT} (Swagger UI at /docs, store ${config.storeProvider}, metrics at ${metrics}, tracing ${Tracing.enabled ? 'on' : 'off'})${allowedHostsNote(config)}`,
    port: config.PORT,
    allowedHosts: config.ALLOWED_HOSTS,
    metricsPort: config.METRICS_PORT ?? config.PORT,
    store: config.storeProvider,
    tracing: Tracing.enabled,
  });
}

/** Off loopback, callers come by names the operator must allow: say which (others get 403). */
function allowedHostsNote(config: AppConfig): string {
  if (isLoopbackHost(config.HOST)) return '';
  const hosts = config.ALLOWED_HOSTS.includes('*') ? 'any host (ALLOWED_HOSTS=*)' : `only the hosts ${config.ALLOWED_HOSTS.join(', ')} (ALLOWED_HOSTS)`;
  return `; requests other than /healthz, /readyz and /metrics are answered for ${hosts}, any other Host or Origin gets 403`;
}

main().catch((error: unknown) => failedToStart(error));
