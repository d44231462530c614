import { describe, expect, it } from '@jest/globals';
import { getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { protectedResourceMetadata, protectedResourceMetadataUrl, wwwAuthenticate } from './protected-resource.js';

describe('protected resource metadata (RFC 9728)', () => {
  it.each([
    ['https://am.example.com/mcp', 'https://am.example.com/.well-known/oauth-protected-resource/mcp'],
    ['https://am.example.com', 'https://am.example.com/.well-known/oauth-protected-resource'],
    ['https://am.example.com/', 'https://am.example.com/.well-known/oauth-protected-resource'],
    ['http://127.0.0.1:8080/base/mcp', 'http://127.0.0.1:8080/.well-known/oauth-protected-resource/base/mcp'],
  ])('the metadata of %s is at %s, where the MCP SDK places it', (resource, url) => {
    expect(protectedResourceMetadataUrl(resource)).toBe(url);
    expect(protectedResourceMetadataUrl(resource)).toBe(getOAuthProtectedResourceMetadataUrl(new URL(resource)));
  });

  it('names the resource and the issuer as its authorization server', () => {
    expect(protectedResourceMetadata({ resource: 'https://am.example.com/mcp', issuer: 'https://dex.example.com', name: 'agent-manager' })).toEqual({
      resource: 'https://am.example.com/mcp',
      authorization_servers: ['https://dex.example.com'],
      bearer_methods_supported: ['header'],
      resource_name: 'agent-manager',
    });
  });

  it.each<[string, { description: string } | undefined, string]>([
    ['no token', undefined, 'Bearer resource_metadata="https://am.example.com/.well-known/oauth-protected-resource/mcp"'],
    [
      'a bad token',
      { description: 'the bearer token has expired; send "Authorization: Bearer <token>"\n' },
      'Bearer error="invalid_token", error_description="the bearer token has expired; send \'Authorization: Bearer <token>\' ", resource_metadata="https://am.example.com/.well-known/oauth-protected-resource/mcp"',
    ],
  ])('challenges %s with WWW-Authenticate', (_case, failure, header) => {
    expect(wwwAuthenticate('https://am.example.com/.well-known/oauth-protected-resource/mcp', failure)).toBe(header);
  });
});
