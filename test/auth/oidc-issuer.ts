import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';

/**
 * A real OpenID provider (oidc-provider) for tests: discovery, JWKS, and client-credentials JWT
 * access tokens whose audience is the requested resource. `rotate()` restarts it at the same
 * address with a new signing key; `requests` counts what was asked of it, by path.
 */
export class TestIssuer {
  readonly requests = new Map<string, number>();
  private handler: (req: IncomingMessage, res: ServerResponse) => void = () => undefined;
  private signingKey!: JWK & { kid: string };

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<TestIssuer> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const issuer = new TestIssuer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('request', (req, res) => {
      const path = new URL(req.url ?? '/', issuer.url).pathname;
      issuer.requests.set(path, (issuer.requests.get(path) ?? 0) + 1);
      issuer.handler(req, res);
    });
    await issuer.rotate();
    return issuer;
  }

  /** The private JWK the issuer signs with now (tests forge tokens with it). */
  get key(): JWK & { kid: string } {
    return this.signingKey;
  }

  /** A new signing key: the JWKS publishes only it from now on. */
  async rotate(): Promise<void> {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    this.signingKey = { ...(await exportJWK(privateKey)), kid: `key-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`, alg: 'ES256', use: 'sig' };
    // oidc-provider warns at construction about its in-memory store and runtime, which a test wants.
    const warn = console.warn;
    console.warn = () => undefined;
    try {
      this.handler = this.provider().callback();
    } finally {
      console.warn = warn;
    }
  }

  private provider(): Provider {
    return new Provider(this.url, {
      clients: [{ client_id: 'ci', client_secret: 'ci-secret', grant_types: ['client_credentials'], redirect_uris: [], response_types: [], id_token_signed_response_alg: 'ES256' }],
      jwks: { keys: [this.signingKey] },
      cookies: { keys: ['test-cookie-key'] },
      ttl: { ClientCredentials: 300 },
      features: {
        clientCredentials: { enabled: true },
        devInteractions: { enabled: false },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => 'https://agent-manager.example.com',
          getResourceServerInfo: (_ctx: unknown, resource: string) => ({ scope: 'agents', audience: resource, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } }),
        },
      },
      extraTokenClaims: () => ({ groups: ['team-payments', 'staff'] }),
    });
  }

  /** A client-credentials access token for `resource` (its audience). */
  async token(resource = 'https://agent-manager.example.com'): Promise<string> {
    const response = await fetch(`${this.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from('ci:ci-secret').toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope: 'agents' }),
    });
    const body = (await response.json()) as { access_token?: string };
    if (!response.ok || !body.access_token) throw new Error(`token request failed: ${response.status} ${JSON.stringify(body)}`);
    return body.access_token;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
