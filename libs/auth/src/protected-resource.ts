/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728) as the MCP authorization specification asks of
 * a resource server: where the document is, what it says, and the 401 challenge pointing at it.
 */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  bearer_methods_supported: string[];
  resource_name?: string;
  resource_documentation?: string;
  scopes_supported?: string[];
}

/**
 * The metadata URL of a resource: the well-known path inserted before the resource's path
 * (`https://h/mcp` → `https://h/.well-known/oauth-protected-resource/mcp`), as the MCP SDK's
 * getOAuthProtectedResourceMetadataUrl and mcpAuthMetadataRouter place it.
 */
export function protectedResourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  return new URL(`/.well-known/oauth-protected-resource${path}`, url.origin).href;
}

/** The document for `resource` (e.g. PUBLIC_URL + /mcp) whose tokens come from `issuer`. */
export function protectedResourceMetadata(options: {
  resource: string;
  issuer: string;
  name?: string;
  documentation?: string;
  scopes?: string[];
}): ProtectedResourceMetadata {
  return {
    resource: options.resource,
    authorization_servers: [options.issuer],
    bearer_methods_supported: ['header'],
    ...(options.name !== undefined && { resource_name: options.name }),
    ...(options.documentation !== undefined && { resource_documentation: options.documentation }),
    ...(options.scopes !== undefined && { scopes_supported: options.scopes }),
  };
}

/**
 * The `WWW-Authenticate` value of a 401 (RFC 6750 §3 with RFC 9728's resource_metadata): without
 * a token only the realm and the metadata; with a bad one `error="invalid_token"` and a description.
 */
export function wwwAuthenticate(resourceMetadataUrl: string, failure?: { description: string }): string {
  const parts = [`resource_metadata="${quoted(resourceMetadataUrl)}"`];
  if (failure) parts.unshift('error="invalid_token"', `error_description="${quoted(failure.description)}"`);
  return `Bearer ${parts.join(', ')}`;
}

/** A quoted-string's content: no quotes, backslashes or control characters to break the header. */
function quoted(text: string): string {
  return text.replace(/[\\"]/g, "'").replace(/[^ -~\u0080-\uffff]/g, ' ');
}
