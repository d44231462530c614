import { Logger } from '@nestjs/common';
import { ConfigError, loadConfig } from '@app/common';
import { Metrics, Tracing } from '@app/telemetry';
import { createApp, drainOnShutdown } from './app.factory.js';
import { listenForMetrics } from './http-telemetry.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`agent-manager: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  // Only with OTEL_EXPORTER_OTLP_ENDPOINT set: otherwise nothing of OpenTelemetry is loaded.
  await Tracing.start();
  let app;
  try {
    app = await createApp(config);
  } catch (error) {
    // API_TOKENS_FILE and AUTHZ_POLICY_FILE are read and validated while the app is built.
    if (error instanceof ConfigError) {
      console.error(`agent-manager: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  await app.listen(config.PORT, config.HOST);
  const metricsServer = config.METRICS_PORT === undefined ? undefined : await listenForMetrics(config, app.get(Metrics));
  drainOnShutdown(app, config, metricsServer);
  const metrics = `http://${config.HOST}:${config.METRICS_PORT ?? config.PORT}/metrics`;
  new Logger('agent-manager').log({
    msg: `listening on http://${config.HOST}:${config.PORT} (Swagger UI at /docs, store ${config.storeProvider}, metrics at ${metrics}, tracing ${Tracing.enabled ? 'on' : 'off'})`,
    port: config.PORT,
    metricsPort: config.METRICS_PORT ?? config.PORT,
    store: config.storeProvider,
    tracing: Tracing.enabled,
  });
}

main().catch((error: unknown) => {
  console.error('agent-manager failed to start:', error);
  process.exit(1);
});
