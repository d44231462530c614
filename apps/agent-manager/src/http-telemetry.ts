import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { ERROR_STATUS, OperationContexts, type AppConfig, type OperationContext } from '@app/common';
import { Metrics, newTraceId, parseTraceparent, Tracing, type Pino } from '@app/telemetry';

/** Probes and scrapes: counted, but their access lines are debug (one every few seconds says nothing). */
const QUIET = /^\/(healthz|readyz|metrics)\/?$/;
/** Paths served by middleware rather than a route, named by their prefix (anything else: `unmatched`). */
const PREFIXES = ['/metrics', '/docs', '/.well-known/oauth-protected-resource', '/mcp'];
// A status's first code names it (409 is conflict; gitops_owned, also 409, is named by the call's own outcome).
const CODES = new Map<number, string>([...Object.entries(ERROR_STATUS).reverse().map(([code, status]) => [status, code] as [number, string]), [413, 'invalid_request'], [429, 'too_many_requests']]);

/**
 * The HTTP door's context, trace and access line: each request runs in an operation context
 * (X-Request-Id or a new id, answered back; the trace id of its span, or of the caller's
 * traceparent), and ends with one access line and its metrics. Bodies are never logged.
 */
export function observeHttp(app: NestExpressApplication, log: Pino, metrics: Metrics): void {
  const access = log.child({ context: 'HTTP' });
  app.use((req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    const sent = req.headers['x-request-id'];
    const requestId = typeof sent === 'string' && /^[\x21-\x7e]{1,128}$/.test(sent) ? sent : randomUUID();
    res.setHeader('X-Request-Id', requestId);
    const door = /^\/mcp(\/|$)/.test(req.path) ? 'mcp-http' : 'rest';
    // A probe or a scrape is a poll, not work asked for: traced only when its caller sends a traceparent.
    const polled = QUIET.test(req.path) && req.headers.traceparent === undefined;
    const span = polled ? undefined : Tracing.begin(req.method, { kind: 'server', parent: req.headers.traceparent, attributes: { 'http.request.method': req.method, 'url.path': req.path } });
    const traceId = span?.traceId ?? parseTraceparent(req.headers.traceparent)?.traceId ?? newTraceId();
    const context: OperationContext = { requestId, traceId, door, actor: door === 'rest' ? 'api' : 'mcp', facts: {} };
    res.once('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const path = pathOf(req);
      const route = routeOf(req);
      // Closed before any answer went out (the client left, a timeout cut it): whatever statusCode
      // holds then is a default nobody sent (200, 201), not an outcome. 499 as proxies write it.
      // A stream whose answer began (an MCP GET stream, held until the client leaves) keeps its
      // status, marked `cut` in the access line.
      const aborted = !res.headersSent || context.facts.outcome === 'aborted';
      const cut = !aborted && !res.writableFinished;
      const status = aborted ? 499 : res.statusCode;
      const outcome = aborted ? 'aborted' : status < 400 ? 'ok' : (context.facts.outcome ?? CODES.get(status) ?? `http_${status}`);
      metrics.httpRequest({ method: req.method, route, status, outcome }, seconds);
      span?.rename(`${req.method} ${route}`);
      span?.set({ 'http.route': route, 'http.response.status_code': status });
      span?.end(status >= 500 ? `HTTP ${status}` : aborted ? 'the client closed the request before the answer' : undefined);
      const line = {
        msg: 'request',
        method: req.method,
        route,
        path,
        status,
        outcome,
        durationMs: Math.round(seconds * 10_000) / 10,
        ...(aborted && { aborted: true }),
        ...(cut && { cut: true }),
        ...fieldsOf(context),
      };
      if (QUIET.test(path)) access.debug(line);
      else access.info(line);
    });
    OperationContexts.run(context, () => (span ? span.run(next) : next()));
  });
}

/** The fields of the request's context, for the access line (written after the context ended). */
function fieldsOf(context: OperationContext): Record<string, unknown> {
  const { requestId, traceId, door, facts } = context;
  return { requestId, traceId, door, subject: facts.subject, operation: facts.operation, agent: facts.agent };
}

/** The path as the client sent it, without the query (a mounted middleware sees only the rest of it). */
function pathOf(req: Request): string {
  return (req.originalUrl ?? req.url).split('?')[0];
}

/** The route template (never the path: it names agents), so label values stay a bounded set. */
export function routeOf(req: Request): string {
  const route = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof route === 'string') return `${req.baseUrl ?? ''}${route}` || '/';
  const path = pathOf(req);
  return PREFIXES.find((prefix) => path === prefix || path.startsWith(`${prefix}/`)) ?? 'unmatched';
}

/** GET /metrics on the main port (no METRICS_PORT): before authentication and the Host check, as probes are. */
export function serveMetrics(app: NestExpressApplication, metrics: Metrics): void {
  app.use('/metrics', (req: Request, res: Response, next: NextFunction) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || (req.path !== '/' && req.path !== '')) return next();
    metrics
      .scrape()
      .then(({ contentType, text }) => res.status(200).type(contentType).send(text))
      .catch(next);
  });
}

/** METRICS_PORT: /metrics alone on its own port (the same HOST), nothing else there. */
export async function listenForMetrics(config: AppConfig, metrics: Metrics): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('only GET /metrics is served on METRICS_PORT\n');
      return;
    }
    metrics
      .scrape()
      .then(({ contentType, text }) => res.writeHead(200, { 'content-type': contentType }).end(req.method === 'HEAD' ? undefined : text))
      .catch((error: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics could not be collected: ${(error as Error).message}\n`));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.METRICS_PORT, config.HOST, () => resolve());
  });
  return server;
}
