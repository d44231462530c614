import { Logger } from '@nestjs/common';
import { ConfigError, loadConfig } from '@app/common';
import { createApp, drainOnShutdown } from './app.factory.js';

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
  drainOnShutdown(app, config);
  await app.listen(config.PORT, config.HOST);
  new Logger('agent-manager').log(`listening on http://${config.HOST}:${config.PORT} (Swagger UI at /docs, store ${config.storeProvider})`);
}

main().catch((error: unknown) => {
  console.error('agent-manager failed to start:', error);
  process.exit(1);
});
