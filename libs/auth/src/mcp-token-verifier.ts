import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { Logger } from '@nestjs/common';
import { AppError } from '@app/common';
import type { Authentication, Authenticator } from './authenticator.js';
import type { Principal } from './principal.js';
import { wwwAuthenticate } from './protected-resource.js';

/** API tokens do not expire; their AuthInfo gets an expiry a request cannot outlive (the SDK's AuthInfo has one). */
const API_TOKEN_VALIDITY_SECONDS = 3600;

/**
 * Bearer tokens as the MCP SDK wants them verified: an AuthInfo with an expiry (the SDK's transport
 * hands it to the tools as `authInfo`), the principal in `authInfo.extra.principal` (read it with
 * principalOf).
 */
export class PrincipalTokenVerifier {
  constructor(private readonly authenticator: Authenticator) {}

  /** The AuthInfo of a bare bearer token; throws the Authenticator's AppError (unauthenticated, or unavailable while the issuer cannot be reached). */
  async authInfo(token: string): Promise<AuthInfo> {
    return this.toAuthInfo(token, await this.authenticator.verifyToken(token));
  }

  /** The AuthInfo of an HTTP request, its Authorization header read as REST reads it (Authenticator.forRequest). */
  async authInfoOf(req: IncomingMessage): Promise<AuthInfo> {
    const verified = await this.authenticator.forRequest(req);
    return this.toAuthInfo(this.authenticator.bearerToken(req.headers.authorization), verified);
  }

  private toAuthInfo(token: string, verified: Authentication): AuthInfo {
    return {
      token,
      clientId: verified.clientId ?? verified.principal.subject,
      scopes: verified.scopes,
      expiresAt: verified.expiresAt ?? Math.floor(Date.now() / 1000) + API_TOKEN_VALIDITY_SECONDS,
      extra: { principal: verified.principal },
    };
  }
}

/**
 * The bearer check of /mcp. It answers as the MCP SDK's requireBearerAuth does (401 with the
 * OAuth error body and a WWW-Authenticate naming the resource metadata; `req.auth` set for the
 * session), except that an issuer that cannot be reached answers 503, with Retry-After when the
 * verifier knows one, as REST does: the SDK's middleware answers any other failure 500, which
 * tells a client its request was wrong where a retry later would succeed.
 */
export function mcpBearerAuth(verifier: PrincipalTokenVerifier, resourceMetadataUrl: string) {
  const logger = new Logger('McpBearer');
  const answer = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
  };
  const refuse = (res: ServerResponse, message: string) => {
    // The header's quoted error_description cannot hold a quote; the body says it as REST does.
    const description = message.replaceAll('"', "'");
    res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': wwwAuthenticate(resourceMetadataUrl, { description }) });
    res.end(JSON.stringify({ error: 'invalid_token', error_description: message }));
  };
  return async (req: IncomingMessage & { auth?: AuthInfo }, res: ServerResponse, next: () => void): Promise<void> => {
    let auth: AuthInfo;
    try {
      // The header is read as REST reads it: the same parser, the same refusals.
      auth = await verifier.authInfoOf(req);
    } catch (error) {
      if (error instanceof AppError && error.code === 'unauthenticated') return refuse(res, error.message);
      if (error instanceof AppError && error.status === 503) {
        return answer(res, 503, `Service Unavailable: ${error.message}`, error.retryAfterSeconds === undefined ? {} : { 'retry-after': String(error.retryAfterSeconds) });
      }
      logger.error(`verifying a bearer token on /mcp failed: ${(error as Error)?.stack ?? String(error)}`);
      return answer(res, 500, 'Internal error: the bearer token could not be verified; the service log has the details');
    }
    if (typeof auth.expiresAt === 'number' && auth.expiresAt < Date.now() / 1000) return refuse(res, 'Token has expired');
    req.auth = auth;
    next();
  };
}

/** The principal PrincipalTokenVerifier put in an AuthInfo (`req.auth` after mcpBearerAuth). */
export function principalOf(auth: AuthInfo | undefined): Principal | undefined {
  const principal = auth?.extra?.principal;
  return principal !== null && typeof principal === 'object' && 'subject' in principal ? (principal as Principal) : undefined;
}
