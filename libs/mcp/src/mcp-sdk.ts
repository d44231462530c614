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

/**
 * The SDK's isInitializeRequest, asked only of a message whose method is initialize: its schema
 * requires that method, and a failed parse (every other message) costs a tenth of a tools/call's dispatch.
 */
export function isInitialize(sdk: McpSdk, message: unknown): boolean {
  return (message as { method?: unknown } | null)?.method === 'initialize' && sdk.types.isInitializeRequest(message);
}

async function importSdk() {
  const [{ Server }, { StreamableHTTPServerTransport }, types, { AjvJsonSchemaValidator }, { isJsonContentType }, { MAX_BATCH_SIZE }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('@modelcontextprotocol/sdk/validation/ajv'),
    // what the Streamable HTTP transport checks a POST with, for the JSON answers served without it (json-response.transport.ts)
    import('@modelcontextprotocol/sdk/shared/mediaType.js'),
    import('@modelcontextprotocol/sdk/server/requestBody.js'),
  ]);
  // One validator for every server: each would otherwise build its own Ajv (a third of a tools/call's CPU over HTTP, where every request gets a server).
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  return { Server, StreamableHTTPServerTransport, types, jsonSchemaValidator, isJsonContentType, MAX_BATCH_SIZE };
}
