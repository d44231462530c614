import 'reflect-metadata';
import type { Server } from 'node:http';
import { Logger, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { json, text } from 'express';
import type { OpenAPIObject } from '@nestjs/swagger';
import { ShutdownGate } from '@app/agents';
import { LOG_LEVELS, PROJECT_PACKAGE, type AppConfig, type Clock } from '@app/common';
import { restPath } from '@app/doors';
import { setupMcp } from '@app/mcp';
import { createLog, Metrics, PinoNestLogger, Tracing, type Pino } from '@app/telemetry';
import { IMPORT_AGENTS } from '@app/transfer';
import { AppModule } from './app.module.js';
import { refuseBeforeBody, rejectInvalidUtf8, verifyUtf8 } from './bounded-input.js';
import { ErrorFilter } from './error.filter.js';
import { HealthController } from './health.controller.js';
import { hardenHttp, requireJsonBodies, requireMcpBearer, serveProtectedResourceMetadata, YAML_TYPES } from './http-hardening.js';
import { observeHttp, serveMetrics } from './http-telemetry.js';
import { buildOpenApi, serveApiDocs } from './openapi.js';

export const OPENAPI_PATH = 'api/v1/openapi.json';

/**
 * The body limit of POST /api/v1/import (BODY_LIMIT_BYTES when that is larger): a fleet document of
 * a few thousand agents with long system messages; the route is refused before its body is read to
 * a caller granted import_agents nowhere.
 */
export const IMPORT_BODY_LIMIT_BYTES = 16 * 1024 * 1024;

const documents = new WeakMap<INestApplication, Promise<OpenAPIObject>>();

/** The document this app serves at /api/v1/openapi.json, built from the code on first use (not at start). */
export function openApiDocument(app: INestApplication): Promise<OpenAPIObject> {
  let document = documents.get(app);
  if (!document) {
    document = buildOpenApi(app, PROJECT_PACKAGE.version ?? '0.0.0');
    documents.set(app, document);
  }
  return document;
}

/**
 * The process's logger for LOG_LEVEL and LOG_FORMAT. Over stdio (`stderr`) the log is an MCP
 * client's side channel: warnings and errors only, unless LOG_LEVEL asks for debug or verbose.
 */
export function processLog(config: AppConfig, option: boolean | 'stderr' | undefined): Pino {
  const stderr = option === 'stderr';
  const quiet = stderr && LOG_LEVELS.indexOf(config.LOG_LEVEL) < LOG_LEVELS.indexOf('debug');
  const level = quiet && LOG_LEVELS.indexOf(config.LOG_LEVEL) > LOG_LEVELS.indexOf('warn') ? 'warn' : config.LOG_LEVEL;
  return createLog({ level, format: config.LOG_FORMAT, stream: stderr ? 'stderr' : 'stdout', silent: option === false });
}

/**
 * Builds the whole service (both doors) without listening: main.ts and the e2e suites share it.
 * `clock` is the host's unless a test passes its own.
 */
export async function createApp(config: AppConfig, options: { logger?: boolean | 'stderr'; clock?: Clock } = {}): Promise<INestApplication> {
  const log = processLog(config, options.logger);
  for (const deprecation of config.deprecations) log.warn({ context: 'Config' }, deprecation);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, options.clock), {
    logger: new PinoNestLogger(log),
    bodyParser: false,
    // A provider that refuses its settings (e.g. MCP_DEFAULT_TOOLSETS) rejects here instead of exiting the process.
    abortOnError: false,
  });
  // The one ETag is the agent's version (docs/contract.md §3): no automatic weak ETags a client could send back in If-Match.
  app.set('etag', false);
  observeHttp(app, log, app.get(Metrics));
  if (config.METRICS_PORT === undefined) serveMetrics(app, app.get(Metrics));
  hardenHttp(app, config);
  serveProtectedResourceMetadata(app, config);
  requireMcpBearer(app, config);
  refuseBeforeBody(app);
  requireJsonBodies(app);
  // A fleet document (import) is larger than any other body: its own limit, and YAML besides JSON.
  const importLimit = Math.max(config.BODY_LIMIT_BYTES, IMPORT_BODY_LIMIT_BYTES);
  app.use(restPath(IMPORT_AGENTS), text({ type: YAML_TYPES, limit: importLimit, verify: verifyUtf8 }), json({ limit: importLimit, verify: verifyUtf8 }));
  // express's own parser: Nest's useBodyParser keeps `verify` for its rawBody option.
  app.use(json({ limit: config.BODY_LIMIT_BYTES, verify: verifyUtf8 }));
  rejectInvalidUtf8(app);
  app.useGlobalFilters(new ErrorFilter(config));
  serveApiDocs(app, 'docs', OPENAPI_PATH, () => openApiDocument(app));
  setupMcp(app);
  return app;
}

/** After the writes drained, how long closing may wait for open requests before their connections are cut (within the pod's 15 s margin). */
export const CLOSE_GRACE_MS = 5_000;

/**
 * On SIGTERM/SIGINT: readiness goes false first (the load balancer stops routing here),
 * new writes are refused with 503, running helm operations get SHUTDOWN_TIMEOUT_SECONDS to
 * finish, then the app and its store close (requests still open CLOSE_GRACE_MS later are cut),
 * the spans still buffered are sent, and the metrics port (METRICS_PORT) closes last, so a
 * scrape during the drain still sees the final counts. A second signal exits at once.
 */
export function drainOnShutdown(app: INestApplication, config: AppConfig, metricsServer?: Server): void {
  const logger = new Logger('Shutdown');
  const health = app.get(HealthController);
  const writes = app.get(ShutdownGate);
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
    // Closing waits for the requests still open; a client that stopped sending holds one until the
    // server's 30 s request timeout, past the pod's grace period: cut them instead.
    const server = app.getHttpServer() as Server;
    const cut = setTimeout(() => {
      logger.warn(`requests still open ${CLOSE_GRACE_MS / 1000}s into closing: cutting their connections`);
      server.closeAllConnections();
    }, CLOSE_GRACE_MS);
    await app.close();
    clearTimeout(cut);
    await Tracing.shutdown().catch((error: unknown) => logger.warn(`sending the last spans failed: ${(error as Error).message}`));
    await new Promise((resolve) => (metricsServer ? metricsServer.close(resolve) : resolve(undefined)));
    logger.log('stopped');
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, (s) => void stop(s));
}
