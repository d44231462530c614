import 'reflect-metadata';
import { ConsoleLogger, Logger, type INestApplication, type LogLevel as NestLogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { AgentWrites } from '@app/agents';
import { LOG_LEVELS, PROJECT_PACKAGE, type AppConfig } from '@app/common';
import { setupMcp } from '@app/mcp';
import { AppModule } from './app.module.js';
import { ErrorFilter } from './error.filter.js';
import { HealthController } from './health.controller.js';
import { hardenHttp, requireMcpBearer, serveProtectedResourceMetadata } from './http-hardening.js';
import { buildOpenApi } from './openapi.js';
import { StderrLogger } from './stderr.logger.js';

export const OPENAPI_PATH = 'api/v1/openapi.json';

const documents = new WeakMap<INestApplication, OpenAPIObject>();

/** The document this app serves at /api/v1/openapi.json, built from the code on first use (not at start). */
export function openApiDocument(app: INestApplication): OpenAPIObject {
  let document = documents.get(app);
  if (!document) {
    document = buildOpenApi(app, PROJECT_PACKAGE.version ?? '0.0.0');
    documents.set(app, document);
  }
  return document;
}

/**
 * The levels LOG_LEVEL asks for. Over stdio (`stderr`) the log is an MCP client's side channel:
 * warnings and errors only, unless LOG_LEVEL asks for debug or verbose.
 */
export function logLevels(level: AppConfig['LOG_LEVEL'], stderr = false): NestLogLevel[] {
  const quiet = stderr && LOG_LEVELS.indexOf(level) < LOG_LEVELS.indexOf('debug') ? 'warn' : level;
  const upTo = Math.min(LOG_LEVELS.indexOf(level), LOG_LEVELS.indexOf(quiet));
  return LOG_LEVELS.slice(0, upTo + 1) as NestLogLevel[];
}

function logger(config: AppConfig, option: boolean | 'stderr' | undefined): false | ConsoleLogger {
  if (option === false) return false;
  if (option === 'stderr') return new StderrLogger({ logLevels: logLevels(config.LOG_LEVEL, true), colors: process.stderr.isTTY === true });
  return new ConsoleLogger({ logLevels: logLevels(config.LOG_LEVEL), colors: process.stdout.isTTY === true });
}

/** Builds the whole service (both doors) without listening: main.ts and the e2e suites share it. */
export async function createApp(config: AppConfig, options: { logger?: boolean | 'stderr' } = {}): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    logger: logger(config, options.logger),
    bodyParser: false,
    // A provider that refuses its settings (e.g. MCP_DEFAULT_TOOLSETS) rejects here instead of exiting the process.
    abortOnError: false,
  });
  // The one ETag is the agent's version (SPEC): no automatic weak ETags a client could send back in If-Match.
  app.set('etag', false);
  hardenHttp(app, config);
  serveProtectedResourceMetadata(app, config);
  await requireMcpBearer(app, config);
  app.useBodyParser('json', { limit: config.BODY_LIMIT_BYTES });
  app.useGlobalFilters(new ErrorFilter(config));
  SwaggerModule.setup('docs', app, () => openApiDocument(app), { jsonDocumentUrl: OPENAPI_PATH, raw: ['json'] });
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
