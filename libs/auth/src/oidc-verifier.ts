import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import { AppError, reservedSubjectPart } from '@app/common';
import type { Principal } from './principal.js';

/** Only asymmetric signatures: never `none`, never an HMAC (whose key a verifier would have to share). */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/** Subjects the service gives its own principals; an identity provider cannot claim them. */

export interface OidcVerifierOptions {
  issuer: string;
  audience: string;
  /** The claim naming the caller (dotted paths reach into objects). */
  usernameClaim?: string;
  /** The claim listing the caller's groups (dotted paths reach into objects). */
  groupsClaim?: string;
  /** Tolerated clock difference for exp and nbf, seconds. */
  clockToleranceSeconds?: number;
  /** After a JWKS fetch, how long an unknown `kid` waits before it triggers another (jose's cooldown). */
  jwksCooldownMs?: number;
  /** After a failed discovery, how long before the next attempt. */
  discoveryRetryMs?: number;
  timeoutMs?: number;
}

/** A verified OIDC bearer token: its principal and when it expires (seconds since the epoch). */
export interface OidcAuthentication {
  principal: Principal;
  expiresAt: number;
  clientId?: string;
  scopes: string[];
}

type Jose = typeof import('jose');

let joseModule: Promise<Jose> | undefined;

/** jose (46 modules) loads with the first discovery, not at start: a service without OIDC_ISSUER_URL never loads it. */
function jose(): Promise<Jose> {
  joseModule ??= import('jose');
  return joseModule;
}

interface Discovery {
  jose: Jose;
  metadata: Record<string, unknown>;
  issuer: string;
  keys: JWTVerifyGetKey;
}

/**
 * Verifies OIDC access/ID tokens against the issuer's published keys: discovery once, keys from
 * its jwks_uri (cached by jose, fetched again when a token names an unknown kid).
 */
export class OidcVerifier {
  private discovery?: Promise<Discovery>;
  private failedAt = 0;
  readonly issuer: string;
  private readonly usernameClaim: string;
  private readonly groupsClaim: string;

  constructor(private readonly options: OidcVerifierOptions) {
    this.issuer = options.issuer.replace(/\/+$/, '');
    this.usernameClaim = options.usernameClaim ?? 'sub';
    this.groupsClaim = options.groupsClaim ?? 'groups';
  }

  /** The issuer's discovery document (for the protected-resource metadata and the SDK's metadata router). */
  async metadata(): Promise<Record<string, unknown>> {
    return (await this.discover()).metadata;
  }

  /** Verifies a compact JWT; throws AppError('unauthenticated') saying what is wrong, never echoing the token. */
  async verify(token: string): Promise<OidcAuthentication> {
    const { issuer, keys, jose } = await this.discover();
    let payload: JWTPayload;
    try {
      ({ payload } = await jose.jwtVerify(token, keys, {
        issuer,
        audience: this.options.audience,
        algorithms: ASYMMETRIC_ALGORITHMS,
        clockTolerance: this.options.clockToleranceSeconds ?? 30,
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      throw this.refusal(error, jose.errors);
    }
    return { principal: this.principal(payload), expiresAt: payload.exp!, clientId: clientIdOf(payload), scopes: scopesOf(payload) };
  }

  private principal(payload: JWTPayload): Principal {
    const subject = claim(payload, this.usernameClaim);
    if (typeof subject !== 'string' || subject === '') {
      throw unauthenticated(`the token has no ${this.usernameClaim} claim (OIDC_USERNAME_CLAIM) naming the caller; ask for a token that carries it`);
    }
    if (reservedSubjectPart(subject) !== undefined) {
      throw unauthenticated(`the token's ${this.usernameClaim} claim takes a name reserved for the service's own principals (token:, local:, system:, anonymous)`);
    }
    const raw = claim(payload, this.groupsClaim);
    const groups = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw.filter((g): g is string => typeof g === 'string' && g !== '') : [];
    return { subject, groups, method: 'oidc' };
  }

  private refusal(error: unknown, errors: Jose['errors']): AppError {
    const fresh = `get a new token from ${this.issuer}`;
    if (error instanceof errors.JWTExpired) return unauthenticated(`the bearer token has expired; ${fresh}`);
    if (error instanceof errors.JWTClaimValidationFailed) {
      switch (error.claim) {
        case 'iss':
          return unauthenticated(`the bearer token was not issued by ${this.issuer}, the issuer this service trusts (OIDC_ISSUER_URL)`);
        case 'aud':
          return unauthenticated(`the bearer token is not meant for this service: its audience (aud) must include "${this.options.audience}"; ask ${this.issuer} for a token for that audience`);
        case 'nbf':
          return unauthenticated('the bearer token is not valid yet (nbf); check the clocks, or wait');
        case 'exp':
          return unauthenticated(`the bearer token has no expiry (exp); ${fresh}`);
        default:
          return unauthenticated(`the bearer token's ${error.claim} claim is not valid; ${fresh}`);
      }
    }
    if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) {
      return unauthenticated(`the bearer token's signature algorithm is not accepted: only asymmetric ones (${ASYMMETRIC_ALGORITHMS.join(', ')})`);
    }
    if (error instanceof errors.JWKSNoMatchingKey) return unauthenticated(`the bearer token is signed with a key ${this.issuer} does not publish`);
    if (error instanceof errors.JWSSignatureVerificationFailed) return unauthenticated(`the bearer token's signature does not verify against the keys of ${this.issuer}`);
    const unreachable = error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || (error instanceof errors.JOSEError && error.code === 'ERR_JOSE_GENERIC');
    if (unreachable || isFetchFailure(error)) {
      return new AppError('unavailable', `cannot verify the bearer token: the keys of ${this.issuer} could not be fetched; try again later`);
    }
    if (error instanceof errors.JOSEError) return unauthenticated('the bearer token is not a well-formed signed JWT');
    throw error;
  }

  private discover(): Promise<Discovery> {
    const retryMs = this.options.discoveryRetryMs ?? 5_000;
    if (this.discovery === undefined && Date.now() - this.failedAt >= retryMs) {
      this.discovery = this.fetchDiscovery().catch((error: unknown) => {
        this.failedAt = Date.now();
        this.discovery = undefined;
        throw error;
      });
    }
    return this.discovery ?? Promise.reject(unavailableDiscovery(this.issuer, 'it failed moments ago'));
  }

  private async fetchDiscovery(): Promise<Discovery> {
    const url = `${this.issuer}/.well-known/openid-configuration`;
    let metadata: Record<string, unknown>;
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(this.options.timeoutMs ?? 5_000), headers: { accept: 'application/json' } });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      metadata = (await response.json()) as Record<string, unknown>;
    } catch (error) {
      throw unavailableDiscovery(this.issuer, (error as Error).message);
    }
    const issuer = typeof metadata.issuer === 'string' ? metadata.issuer : '';
    if (issuer.replace(/\/+$/, '') !== this.issuer) throw unavailableDiscovery(this.issuer, `it names another issuer, ${JSON.stringify(issuer)}`);
    if (typeof metadata.jwks_uri !== 'string') throw unavailableDiscovery(this.issuer, 'it has no jwks_uri');
    const loaded = await jose();
    const keys = loaded.createRemoteJWKSet(new URL(metadata.jwks_uri), {
      cooldownDuration: this.options.jwksCooldownMs ?? 30_000,
      timeoutDuration: this.options.timeoutMs ?? 5_000,
    });
    return { jose: loaded, metadata, issuer, keys };
  }
}

function unauthenticated(message: string): AppError {
  return new AppError('unauthenticated', message);
}

function unavailableDiscovery(issuer: string, why: string): AppError {
  return new AppError('unavailable', `cannot verify bearer tokens: the OpenID discovery of ${issuer} is not usable (${why}); try again later, or check OIDC_ISSUER_URL`);
}

function isFetchFailure(error: unknown): boolean {
  return error instanceof TypeError && /fetch/i.test(error.message);
}

/** A claim by name, or by a dotted path into nested objects when no claim has the whole name. */
function claim(payload: JWTPayload, name: string): unknown {
  if (name in payload) return payload[name];
  return name.split('.').reduce<unknown>((value, key) => (value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined), payload);
}

function clientIdOf(payload: JWTPayload): string | undefined {
  const id = payload.client_id ?? payload.azp;
  return typeof id === 'string' ? id : undefined;
}

function scopesOf(payload: JWTPayload): string[] {
  return typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [];
}
