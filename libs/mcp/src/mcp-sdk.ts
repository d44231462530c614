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
  const [{ Server }, { StreamableHTTPServerTransport }, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return { Server, StreamableHTTPServerTransport, types };
}
