import 'reflect-metadata';
import { Logger, type INestApplication, type LogLevel as NestLogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { AgentWrites, ServiceInfoService } from '@app/agents';
import { LOG_LEVELS, type AppConfig } from '@app/common';
import { setupMcp } from '@app/mcp';
import { AppModule } from './app.module.js';
import { ErrorFilter } from './error.filter.js';
import { HealthController } from './health.controller.js';
import { buildOpenApi } from './openapi.js';
import { StderrLogger } from './stderr.logger.js';

export const OPENAPI_PATH = 'api/v1/openapi.json';

const documents = new WeakMap<INestApplication, OpenAPIObject>();

/** The document this app serves at /api/v1/openapi.json. */
export function openApiDocument(app: INestApplication): OpenAPIObject {
  const document = documents.get(app);
  if (!document) throw new Error('not an app built by createApp');
  return document;
}

function logLevels(level: AppConfig['LOG_LEVEL']): NestLogLevel[] {
  return LOG_LEVELS.slice(0, LOG_LEVELS.indexOf(level) + 1) as NestLogLevel[];
}

/** Builds the whole service (both doors) without listening: main.ts and the e2e suites share it. */
export async function createApp(config: AppConfig, options: { logger?: boolean | 'stderr' } = {}): Promise<INestApplication> {
  const levels = logLevels(config.LOG_LEVEL);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    logger: options.logger === false ? false : options.logger === 'stderr' ? new StderrLogger({ logLevels: levels }) : levels,
    bodyParser: false,
    // A provider that refuses its settings (e.g. MCP_DEFAULT_TOOLSETS) rejects here instead of exiting the process.
    abortOnError: false,
  });
  app.useBodyParser('json', { limit: '1mb' });
  app.useGlobalFilters(new ErrorFilter());
  const document = buildOpenApi(app, app.get(ServiceInfoService).version);
  documents.set(app, document);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: OPENAPI_PATH, raw: ['json'] });
  setupMcp(app);
  return app;
}

/**
 * On SIGTERM/SIGINT: readiness goes false first (the load balancer stops routing here),
 * new writes are refused with 503, running helm operations get SHUTDOWN_TIMEOUT_SECONDS to
 * finish, then the app and its store close. A second signal exits at once.
 */
export function drainOnShutdown(app: INestApplication, config: AppConfig): void {
  const logger = new Logger('Shutdown');
  const health = app.get(HealthController);
  const writes = app.get(AgentWrites);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      logger.warn(`${signal} again: exiting now`);
      process.exit(1);
    }
    stopping = true;
    health.drain();
    logger.log(`${signal}: readiness is false; waiting up to ${config.SHUTDOWN_TIMEOUT_SECONDS}s for running writes`);
    const finished = await writes.drain(config.SHUTDOWN_TIMEOUT_SECONDS * 1000);
    if (!finished) logger.warn('running writes did not finish in time; their operations stay pending and are resolved at the next start');
    await app.close();
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, (s) => void stop(s));
}
