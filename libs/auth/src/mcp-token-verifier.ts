import type { OAuthTokenVerifier } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { InvalidTokenError, ServerError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { AppError } from '@app/common';
import type { Authenticator } from './authenticator.js';
import type { Principal } from './principal.js';

/** API tokens do not expire; the SDK's middleware wants an expiry, so they get one a request cannot outlive. */
const API_TOKEN_VALIDITY_SECONDS = 3600;

/**
 * The MCP SDK's token verifier over the Authenticator, for `requireBearerAuth({ verifier })`:
 * a refused token becomes the SDK's InvalidTokenError (401 with WWW-Authenticate), and the
 * principal travels in `authInfo.extra.principal` (read it with principalOf).
 */
export class PrincipalTokenVerifier implements OAuthTokenVerifier {
  constructor(private readonly authenticator: Authenticator) {}

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    try {
      const verified = await this.authenticator.verifyToken(token);
      return {
        token,
        clientId: verified.clientId ?? verified.principal.subject,
        scopes: verified.scopes,
        expiresAt: verified.expiresAt ?? Math.floor(Date.now() / 1000) + API_TOKEN_VALIDITY_SECONDS,
        extra: { principal: verified.principal },
      };
    } catch (error) {
      // The SDK writes the message into WWW-Authenticate's quoted error_description unescaped.
      if (error instanceof AppError && error.code === 'unauthenticated') throw new InvalidTokenError(error.message.replaceAll('"', "'"));
      if (error instanceof AppError) throw new ServerError(error.message.replaceAll('"', "'"));
      throw error;
    }
  }
}

/** The principal PrincipalTokenVerifier put in an AuthInfo (`req.auth` after requireBearerAuth). */
export function principalOf(auth: AuthInfo | undefined): Principal | undefined {
  const principal = auth?.extra?.principal;
  return principal !== null && typeof principal === 'object' && 'subject' in principal ? (principal as Principal) : undefined;
}
