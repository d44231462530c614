import { Logger, type INestApplicationContext } from '@nestjs/common';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { McpServerFactory } from './mcp-server.factory.js';
import { McpRegistry } from './mcp.registry.js';

/**
 * Serves one MCP session over this process's stdin/stdout (stdout carries only JSON-RPC: logs
 * go to stderr). `query` selects the toolsets as a /mcp URL's query would. Resolves when
 * the client closes stdin.
 */
export async function serveMcpStdio(app: INestApplicationContext, query: string): Promise<void> {
  const registry = app.get(McpRegistry);
  const toolsets = registry.select(query);
  const server = await app.get(McpServerFactory).create(registry.parse(query), 'mcp-stdio');
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
  });
  process.stdin.once('end', () => void transport.close());
  await server.connect(transport);
  // A line that is not JSON, or not JSON-RPC, is answered as the HTTP door answers it, not dropped.
  const logger = new Logger('MCP');
  server.onerror = (error) => {
    const code = error instanceof SyntaxError ? -32700 : error.name === 'ZodError' ? -32600 : undefined;
    if (code === undefined) return logger.warn(`stdio transport: ${error.message}`);
    const message = code === -32700 ? `Parse error: the line is not valid JSON (${error.message})` : 'Invalid Request: the line is JSON but not a JSON-RPC 2.0 message';
    transport.send({ jsonrpc: '2.0', id: null, error: { code, message } } as unknown as JSONRPCMessage).catch((sent: unknown) => logger.warn(`answering a bad line failed: ${(sent as Error).message}`));
  };
  logger.log(`serving MCP over stdio: toolsets ${toolsets.active.join(', ')}${toolsets.unknown.length > 0 ? `; unknown ${toolsets.unknown.join(', ')}` : ''}`);
  await closed;
}
