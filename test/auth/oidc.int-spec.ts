import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { importJWK, SignJWT, UnsecuredJWT } from 'jose';
import { AppError } from '@app/common';
import {
  ApiTokens,
  Authenticator,
  mcpBearerAuth,
  OidcVerifier,
  parseApiTokens,
  principalOf,
  PrincipalTokenVerifier,
  protectedResourceMetadataUrl,
  sha256Hex,
  type Principal,
} from '@app/auth';
import { TestIssuer } from './oidc-issuer.js';

const AUDIENCE = 'https://agent-manager.example.com';
const PIPELINE_TOKEN = 'am_pipeline_6a1f0c9e2b7d4835a0e1f2c3d4b5a697';

let issuer: TestIssuer;

beforeAll(async () => {
  issuer = await TestIssuer.start();
});

afterAll(async () => {
  await issuer?.stop();
});

function verifier(options: { jwksCooldownMs?: number } = {}): OidcVerifier {
  return new OidcVerifier({ issuer: issuer.url, audience: AUDIENCE, ...options });
}

/** A token signed with the issuer's own current key, with claims of the test's choosing. */
async function forged(claims: Record<string, unknown>, header: Record<string, unknown> = {}): Promise<string> {
  const key = await importJWK(issuer.key, 'ES256');
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sub: 'ci', iss: issuer.url, aud: AUDIENCE, iat: now, exp: now + 300, ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: issuer.key.kid, ...header })
    .sign(key);
}

async function refusal(authenticator: Authenticator, header: string | undefined): Promise<AppError> {
  try {
    await authenticator.authenticate(header);
  } catch (error) {
    return error as AppError;
  }
  throw new Error('the header was accepted');
}

describe('OIDC bearer tokens from a real issuer (oidc-provider)', () => {
  const authenticator = () => new Authenticator({ oidc: verifier() });

  it('turns a client-credentials token into the principal: subject from sub, groups from groups', async () => {
    const principal = await authenticator().authenticate(`Bearer ${await issuer.token()}`);
    expect(principal).toEqual({ subject: 'ci', groups: ['team-payments', 'staff'], method: 'oidc' });
  });

  it('reads the subject and groups from the configured claims, dotted paths included', async () => {
    const oidc = new OidcVerifier({ issuer: issuer.url, audience: AUDIENCE, usernameClaim: 'email', groupsClaim: 'realm_access.roles' });
    const token = await forged({ email: 'bob@example.com', realm_access: { roles: ['editors'] } });
    expect((await oidc.verify(token)).principal).toEqual({ subject: 'bob@example.com', groups: ['editors'], method: 'oidc' });
  });

  it.each<[string, () => Promise<string>, RegExp]>([
    ['expired (beyond the clock skew)', () => forged({ exp: Math.floor(Date.now() / 1000) - 120 }), /has expired; get a new token from http:\/\/127\.0\.0\.1/],
    ['for another audience', () => issuer.token('https://billing.example.com'), /is not meant for this service: its audience \(aud\) must include "https:\/\/agent-manager\.example\.com"/],
    ['from another issuer', () => forged({ iss: 'https://evil.example.com' }), /was not issued by http:\/\/127\.0\.0\.1:\d+, the issuer this service trusts/],
    ['not valid yet', () => forged({ nbf: Math.floor(Date.now() / 1000) + 600 }), /is not valid yet \(nbf\)/],
    ['without an expiry', () => forged({ exp: undefined }), /has no expiry \(exp\)/],
    ['with a tampered payload', async () => tamper(await issuer.token()), /signature does not verify against the keys of/],
    ['signed with alg none', async () => new UnsecuredJWT({ sub: 'admin', iss: issuer.url, aud: AUDIENCE }).setExpirationTime('5m').encode(), /signature algorithm is not accepted: only asymmetric ones/],
    ['signed with HS256 (the published key as an HMAC secret)', () => hs256WithPublicKey(), /signature algorithm is not accepted/],
    ['naming a key the issuer does not publish', () => forged({}, { kid: 'someone-elses-key' }), /is signed with a key http:\/\/127\.0\.0\.1:\d+ does not publish/],
    ['claiming a reserved subject', () => forged({ sub: 'token:ci-platform' }), /reserved for the service's own principals/],
    ['claiming a reserved subject in another case', () => forged({ sub: 'Token:admin' }), /reserved for the service's own principals/],
    ['claiming a reserved subject behind a space', () => forged({ sub: ' token:admin' }), /reserved for the service's own principals/],
    ['claiming a reserved subject in full-width letters (NFKC)', () => forged({ sub: 'ｔｏｋｅｎ:admin' }), /reserved for the service's own principals/],
    ['claiming a reserved subject with a full-width colon (NFKC)', () => forged({ sub: 'system：masters' }), /reserved for the service's own principals/],
    ['claiming the anonymous subject in capitals', () => forged({ sub: 'ANONYMOUS' }), /reserved for the service's own principals/],
  ])('refuses a token %s as unauthenticated', async (_case, token, message) => {
    const error = await refusal(authenticator(), `Bearer ${await token()}`);
    expect(error).toBeInstanceOf(AppError);
    expect(error.code).toBe('unauthenticated');
    expect(error.message).toMatch(message);
  });

  it.each<[string, string | undefined, RegExp]>([
    ['no header', undefined, /^authentication is required: send "Authorization: Bearer <token>" with an access token from http/],
    ['an empty header', '  ', /^authentication is required/],
    ['another scheme', 'Basic Y2k6Y2ktc2VjcmV0', /^the Authorization header must be "Bearer <token>"/],
    ['a garbled bearer', 'Bearer not a token', /^the Authorization header must be "Bearer <token>"/],
    ['a bearer that is no JWT', 'Bearer abc.def', /^the bearer token is not a JWT from http/],
    ['a JWT of garbage', 'Bearer eyJhbGciOi.x.y', /^the bearer token is not a well-formed signed JWT/],
  ])('refuses %s as unauthenticated, without echoing it', async (_case, header, message) => {
    const error = await refusal(authenticator(), header);
    expect(error.code).toBe('unauthenticated');
    expect(error.message).toMatch(message);
    if (header?.trim()) expect(error.message).not.toContain(header.split(' ')[1]);
  });

  it('fetches discovery and keys once for many tokens, and an unknown kid cannot make it fetch per request', async () => {
    const oidc = verifier();
    const before = issuer.requests.get('/jwks') ?? 0;
    await oidc.verify(await issuer.token());
    await oidc.verify(await issuer.token());
    for (let i = 0; i < 5; i += 1) await expect(oidc.verify(await forged({}, { kid: `spray-${i}` }))).rejects.toThrow(/does not publish/);
    expect((issuer.requests.get('/jwks') ?? 0) - before).toBe(1);
  });

  it('accepts a token signed with a new key once the issuer rotated (refetching the keys on the unknown kid)', async () => {
    const oidc = verifier({ jwksCooldownMs: 0 });
    await oidc.verify(await issuer.token());
    const before = issuer.requests.get('/jwks') ?? 0;
    await issuer.rotate();
    const rotated = await issuer.token();
    expect((await oidc.verify(rotated)).principal.subject).toBe('ci');
    expect((issuer.requests.get('/jwks') ?? 0) - before).toBe(1);
  });

  it('answers unavailable (not unauthenticated) while the issuer cannot be reached', async () => {
    const oidc = new OidcVerifier({ issuer: 'http://127.0.0.1:9', audience: AUDIENCE, timeoutMs: 1000 });
    await expect(oidc.verify(await forged({}))).rejects.toMatchObject({ code: 'unavailable', message: expect.stringMatching(/OpenID discovery of http:\/\/127\.0\.0\.1:9 is not usable/) });
  });
});

describe('API tokens beside OIDC', () => {
  const tokens = new ApiTokens(parseApiTokens(`- {name: pipeline, sha256: ${sha256Hex(PIPELINE_TOKEN)}, groups: [deployers]}`));

  it('accepts either, each as its own principal', async () => {
    const both = new Authenticator({ oidc: verifier(), tokens });
    expect(await both.authenticate(`Bearer ${PIPELINE_TOKEN}`)).toEqual({ subject: 'token:pipeline', groups: ['deployers'], method: 'token' });
    expect((await both.authenticate(`bearer ${await issuer.token()}`)).method).toBe('oidc');
    await expect(both.authenticate('Bearer am_pipeline_wrong')).rejects.toThrow(/^the bearer token is neither a known API token nor a JWT from/);
  });

  it('with neither configured, auth is off and every caller is anonymous', async () => {
    expect(await new Authenticator().authenticate(undefined)).toEqual({ subject: 'anonymous', groups: [], method: 'anonymous' });
    expect(await new Authenticator().authenticate('Bearer whatever')).toEqual({ subject: 'anonymous', groups: [], method: 'anonymous' });
  });
});

describe('the /mcp bearer check (mcpBearerAuth over PrincipalTokenVerifier)', () => {
  let server: Server;
  let base: string;
  const seen: (Principal | undefined)[] = [];

  beforeAll(async () => {
    const app = express();
    const resourceMetadataUrl = protectedResourceMetadataUrl('http://127.0.0.1/mcp');
    const tokens = new ApiTokens(parseApiTokens(`- {name: pipeline, sha256: ${sha256Hex(PIPELINE_TOKEN)}}`));
    const handler = (req: express.Request, res: express.Response) => {
      seen.push(principalOf((req as express.Request & { auth?: never }).auth));
      res.json({ ok: true });
    };
    app.post('/mcp', mcpBearerAuth(new PrincipalTokenVerifier(new Authenticator({ oidc: verifier(), tokens })), resourceMetadataUrl), handler);
    // An issuer that was never reachable: its discovery fails.
    const unreachable = new OidcVerifier({ issuer: 'http://127.0.0.1:9', audience: AUDIENCE, timeoutMs: 1000 });
    app.post('/mcp-outage', mcpBearerAuth(new PrincipalTokenVerifier(new Authenticator({ oidc: unreachable, tokens })), resourceMetadataUrl), handler);
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('lets a valid OIDC token or API token through with its principal', async () => {
    for (const token of [await issuer.token(), PIPELINE_TOKEN]) {
      const res = await fetch(`${base}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
    }
    expect(seen.map((p) => p?.subject)).toEqual(['ci', 'token:pipeline']);
  });

  it('answers 401 with WWW-Authenticate naming the resource metadata, and a header that stays well-formed', async () => {
    const missing = await fetch(`${base}/mcp`, { method: 'POST' });
    expect(missing.status).toBe(401);
    const remedy = `send "Authorization: Bearer <token>" with an access token from ${issuer.url} or an API token an admin issued you`;
    expect(missing.headers.get('www-authenticate')).toBe(
      `Bearer error="invalid_token", error_description="authentication is required: ${remedy.replaceAll('"', "'")}", resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"`,
    );
    // The body says what REST's does: where to get a token.
    expect(await missing.json()).toEqual({ error: 'invalid_token', error_description: `authentication is required: ${remedy}` });
    const expired = await fetch(`${base}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${await forged({ exp: 1 })}` } });
    expect(expired.status).toBe(401);
    const header = expired.headers.get('www-authenticate')!;
    expect(header).toMatch(/^Bearer error="invalid_token", error_description="[^"]*has expired[^"]*", resource_metadata="[^"]+"$/);
    expect(((await expired.json()) as { error: string }).error).toBe('invalid_token');
    const wrongScheme = await fetch(`${base}/mcp`, { method: 'POST', headers: { authorization: `Basic ${PIPELINE_TOKEN}` } });
    expect(wrongScheme.status).toBe(401);
    expect(await wrongScheme.json()).toEqual({ error: 'invalid_token', error_description: `the Authorization header must be "Bearer <token>"; ${remedy}` });
  });

  it('reads the Authorization header as REST does: a token followed by more words is refused on both', async () => {
    const header = `Bearer ${PIPELINE_TOKEN} junk`;
    const res = await fetch(`${base}/mcp`, { method: 'POST', headers: { authorization: header } });
    expect(res.status).toBe(401);
    const rest = await refusal(new Authenticator({ tokens: new ApiTokens(parseApiTokens(`- {name: pipeline, sha256: ${sha256Hex(PIPELINE_TOKEN)}}`)) }), header);
    expect(((await res.json()) as { error_description: string }).error_description).toMatch(/^the Authorization header must be "Bearer <token>"/);
    expect(rest.message).toMatch(/^the Authorization header must be "Bearer <token>"/);
  });

  it('answers 503 (a retry may succeed), not 401 or 500, while the issuer cannot be reached; API tokens still pass', async () => {
    const res = await fetch(`${base}/mcp-outage`, { method: 'POST', headers: { authorization: `Bearer ${await issuer.token()}` } });
    expect(res.status).toBe(503);
    expect(res.headers.get('www-authenticate')).toBeNull();
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    const body = (await res.json()) as { jsonrpc: string; error: { message: string } };
    expect(body.jsonrpc).toBe('2.0');
    expect(body.error.message).toMatch(/^Service Unavailable: cannot verify bearer tokens: the OpenID discovery of http:\/\/127\.0\.0\.1:9 is not usable/);
    const before = seen.length;
    expect((await fetch(`${base}/mcp-outage`, { method: 'POST', headers: { authorization: `Bearer ${PIPELINE_TOKEN}` } })).status).toBe(200);
    expect(seen.slice(before).map((p) => p?.subject)).toEqual(['token:pipeline']);
  });
});

function tamper(token: string): string {
  const [header, payload, signature] = token.split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
  return [header, Buffer.from(JSON.stringify({ ...claims, sub: 'admin' })).toString('base64url'), signature].join('.');
}

async function hs256WithPublicKey(): Promise<string> {
  const { d: _private, ...publicJwk } = issuer.key;
  const secret = new TextEncoder().encode(JSON.stringify(publicJwk));
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sub: 'admin', iss: issuer.url, aud: AUDIENCE, exp: now + 300 }).setProtectedHeader({ alg: 'HS256', kid: issuer.key.kid }).sign(secret);
}
