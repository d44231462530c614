/**
 * The MCP SDK's server side, loaded on the first MCP session rather than at start (with its
 * zod schemas it is a fifth of the service's start-up imports).
 */
export type McpSdk = Awaited<ReturnType<typeof importSdk>>;

let sdk: Promise<McpSdk> | undefined;

export function loadMcpSdk(): Promise<McpSdk> {
  sdk ??= importSdk();
  return sdk;
}

async function importSdk() {
  const [{ Server }, { StreamableHTTPServerTransport }, types, { AjvJsonSchemaValidator }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('@modelcontextprotocol/sdk/validation/ajv'),
  ]);
  // One validator for every server: each would otherwise build its own Ajv (a third of a tools/call's CPU over HTTP, where every request gets a server).
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  return { Server, StreamableHTTPServerTransport, types, jsonSchemaValidator };
}
