import type { Server } from 'node:http';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import helmet from 'helmet';
import { Authenticator, mcpBearerAuth, PrincipalTokenVerifier, protectedResourceMetadata, protectedResourceMetadataUrl, wwwAuthenticate } from '@app/auth';
import { AppError, type AppConfig } from '@app/common';
import { restPath, routePattern } from '@app/doors';
import { refusedHost } from '@app/mcp';
import { IMPORT_AGENTS } from '@app/transfer';

/** Slow clients cannot hold a connection: the whole request (headers and body) must arrive in this time. */
export const REQUEST_TIMEOUT_MS = 30_000;
export const HEADERS_TIMEOUT_MS = 15_000;

/** Probes and scrapes come from kubelet and Prometheus by pod address: no Host check for them. */
const HEALTH = /^\/(healthz|readyz|metrics)\/?$/;

/** The import route takes its fleet document as YAML too (docs/contract.md §12). */
const IMPORT_ROUTE = routePattern(restPath(IMPORT_AGENTS));
export const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml'];
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/**
 * The HTTP door's hardening: security headers (helmet, with a CSP Swagger UI runs under), CORS only
 * for CORS_ORIGINS, the Host/Origin check of ALLOWED_HOSTS on every route but health, and the
 * timeouts of the Node server.
 */
export function hardenHttp(app: NestExpressApplication, config: AppConfig): void {
  app.use(
    helmet({
      // Served over plain HTTP inside a cluster too: no upgrade-insecure-requests (the browser would fetch
      // Swagger UI's scripts over https and show a blank page) and no external host (the validator badge is off).
      contentSecurityPolicy: {
        directives: { 'img-src': ["'self'", 'data:'], 'font-src': ["'self'", 'data:'], 'style-src': ["'self'", "'unsafe-inline'"], 'upgrade-insecure-requests': null },
      },
      // Swagger UI and the OpenAPI document are fetched from other origins only when CORS_ORIGINS says so.
      crossOriginResourcePolicy: { policy: config.CORS_ORIGINS.length > 0 ? 'cross-origin' : 'same-origin' },
    }),
  );
  if (config.CORS_ORIGINS.length > 0) {
    app.enableCors({ origin: config.CORS_ORIGINS, allowedHeaders: ['authorization', 'content-type', 'idempotency-key', 'if-match', 'x-actor', 'x-request-id', 'mcp-session-id', 'mcp-protocol-version'], exposedHeaders: ['etag', 'mcp-session-id', 'www-authenticate'] });
  }
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (HEALTH.test(req.path)) return next();
    const refused = refusedHost({ host: req.headers.host, origin: req.headers.origin }, config.ALLOWED_HOSTS);
    if (refused === null) return next();
    const message = `${refused} is not an allowed host (DNS rebinding protection); the operator allows more hosts with ALLOWED_HOSTS`;
    if (req.path.startsWith('/mcp')) return res.status(403).json({ jsonrpc: '2.0', error: { code: -32000, message: `Forbidden: ${message}` }, id: null });
    res.status(403).json(new AppError('forbidden', message).toBody());
  });
  const server = app.getHttpServer() as Server;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.headersTimeout = HEADERS_TIMEOUT_MS;
}

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/**
 * REST reads JSON bodies only: one sent as anything else (curl -d sends a form) would be read as no
 * body at all and refused for fields it does carry, so it is refused naming the header instead.
 * DELETE refuses any body itself (its arguments are query parameters).
 */
export function requireJsonBodies(app: NestExpressApplication): void {
  app.use('/api', (req: Request, res: Response, next: NextFunction) => {
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    if (!WITH_BODY.has(req.method) || !hasBody || req.is('application/json')) return next();
    if (IMPORT_ROUTE.test(req.baseUrl + req.path) && req.is(YAML_TYPES)) return next();
    const type = req.headers['content-type'];
    const sent = type === undefined ? 'with no Content-Type' : `as ${JSON.stringify(type)}`;
    const message = `the body was sent ${sent}, so it cannot be read: send it as JSON with the header Content-Type: application/json`;
    res.status(400).json(AppError.invalid([{ path: 'Content-Type', message }], message).toBody());
  });
}

/**
 * RFC 9728's protected-resource metadata: the service (PUBLIC_URL) and its MCP endpoint
 * (PUBLIC_URL/mcp, at the path the MCP SDK's clients look for), naming the OIDC issuer.
 */
export function serveProtectedResourceMetadata(app: NestExpressApplication, config: AppConfig): void {
  const issuer = config.OIDC_ISSUER_URL;
  const document = (resource: string) => ({
    ...protectedResourceMetadata({ resource, issuer: issuer ?? config.publicUrl, name: 'agent-manager', documentation: `${config.publicUrl}/docs` }),
    ...(issuer === undefined && { authorization_servers: [] }),
  });
  const rest = document(config.publicUrl);
  const mcp = document(`${config.publicUrl}/mcp`);
  app.use(PROTECTED_RESOURCE_PATH, (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET') return next();
    if (req.path === '/' || req.path === '') return res.json(rest);
    if (req.path === '/mcp' || req.path === '/mcp/') return res.json(mcp);
    next();
  });
}

/** The 401 challenge of the REST door, pointing at the protected-resource metadata. */
export function restChallenge(config: AppConfig, error: AppError): string {
  return wwwAuthenticate(protectedResourceMetadataUrl(config.publicUrl), error.message.startsWith('authentication is required') ? undefined : { description: error.message });
}

/** The bearer check of /mcp (mcpBearerAuth: the MCP SDK's answers, 503 while the issuer is unreachable), over the service's own verifier; nothing with auth off. */
export function requireMcpBearer(app: NestExpressApplication, config: AppConfig): void {
  if (!app.get(Authenticator).enabled) return;
  const bearer = mcpBearerAuth(app.get(PrincipalTokenVerifier), protectedResourceMetadataUrl(`${config.publicUrl}/mcp`));
  app.use('/mcp', (req: Request, res: Response, next: NextFunction) => {
    if (req.path === '/toolsets' || req.path === '/toolsets/') return next();
    void bearer(req, res, next);
  });
}
