import { AppError } from '@app/common';
import type { ApiTokens } from './api-tokens.js';
import type { OidcVerifier } from './oidc-verifier.js';
import { ANONYMOUS, type Principal } from './principal.js';

/** A verified caller, with what the MCP door's AuthInfo needs beside the principal. */
export interface Authentication {
  principal: Principal;
  /** Seconds since the epoch; undefined for API tokens, which do not expire. */
  expiresAt?: number;
  clientId?: string;
  scopes: string[];
}

/** RFC 6750's b64token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/;

/**
 * Turns an Authorization header into a principal: an API token (API_TOKENS_FILE) or an OIDC
 * bearer JWT (OIDC_ISSUER_URL). With neither configured, authentication is off and every caller
 * is the anonymous principal.
 */
export class Authenticator {
  constructor(private readonly sources: { oidc?: OidcVerifier; tokens?: ApiTokens } = {}) {}

  /** The OIDC verifier, when OIDC_ISSUER_URL is set (its discovery feeds the protected-resource metadata). */
  get oidc(): OidcVerifier | undefined {
    return this.sources.oidc;
  }

  get enabled(): boolean {
    return this.sources.oidc !== undefined || this.sources.tokens !== undefined;
  }

  /** The principal of an `Authorization` header value; throws AppError('unauthenticated') saying what to send. */
  async authenticate(authorization: string | undefined): Promise<Principal> {
    return (await this.authentication(authorization)).principal;
  }

  /**
   * The one reading of an `Authorization` header, for every door (REST and /mcp): `Bearer <token>`
   * and nothing after it; throws AppError('unauthenticated') saying what to send.
   */
  async authentication(authorization: string | undefined): Promise<Authentication> {
    if (!this.enabled) return { principal: ANONYMOUS, scopes: [] };
    return this.verifyToken(this.bearer(authorization));
  }

  /**
   * The authentication of one HTTP request, verified once however many steps ask (the check
   * before the body is read, then the door's own).
   */
  forRequest(req: { headers: { authorization?: string } }): Promise<Authentication> {
    let verified = this.verified.get(req);
    if (!verified) {
      verified = this.authentication(req.headers.authorization);
      // A refusal is read by whoever asks; none left unhandled here.
      verified.catch(() => undefined);
      this.verified.set(req, verified);
    }
    return verified;
  }

  private readonly verified = new WeakMap<object, Promise<Authentication>>();

  /** Verifies a bare bearer token (the MCP SDK's verifier hands it over without the scheme). */
  async verifyToken(token: string): Promise<Authentication> {
    if (!this.enabled) return { principal: ANONYMOUS, scopes: [] };
    const fromFile = this.sources.tokens?.match(token);
    if (fromFile) return { principal: fromFile, scopes: [] };
    if (this.sources.oidc && JWT_SHAPE.test(token)) return this.sources.oidc.verify(token);
    throw new AppError('unauthenticated', `the bearer token is ${this.accepted()}; ${this.remedy()}`);
  }

  /** The token of a `Bearer <token>` header; throws AppError('unauthenticated') for anything else. */
  bearerToken(authorization: string | undefined): string {
    return this.bearer(authorization);
  }

  private bearer(authorization: string | undefined): string {
    if (authorization === undefined || authorization.trim() === '') {
      throw new AppError('unauthenticated', `authentication is required: ${this.remedy()}`);
    }
    const match = BEARER.exec(authorization);
    if (!match) throw new AppError('unauthenticated', `the Authorization header must be "Bearer <token>"; ${this.remedy()}`);
    return match[1];
  }

  private accepted(): string {
    const { oidc, tokens } = this.sources;
    if (oidc && tokens) return `neither a known API token nor a JWT from ${oidc.issuer}`;
    return oidc ? `not a JWT from ${oidc.issuer}` : 'not a known API token';
  }

  private remedy(): string {
    const { oidc, tokens } = this.sources;
    const what = [oidc && `an access token from ${oidc.issuer}`, tokens && 'an API token an admin issued you'].filter(Boolean).join(' or ');
    return `send "Authorization: Bearer <token>" with ${what}`;
  }
}
