import { Logger, type INestApplicationContext } from '@nestjs/common';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { McpServerFactory } from './mcp-server.factory.js';
import { McpCatalog } from './mcp.catalog.js';

/**
 * Serves one MCP session over this process's stdin/stdout (stdout carries only JSON-RPC: logs
 * go to stderr). `query` selects the toolsets as a /mcp URL's query would. Resolves when
 * the client closes stdin.
 */
export async function serveMcpStdio(app: INestApplicationContext, query: string): Promise<void> {
  const toolsets = app.get(McpCatalog).select(query);
  const server = app.get(McpServerFactory).create(toolsets);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
  });
  process.stdin.once('end', () => void transport.close());
  await server.connect(transport);
  new Logger('MCP').log(`serving MCP over stdio: toolsets ${toolsets.active.join(', ')}${toolsets.unknown.length > 0 ? `; unknown ${toolsets.unknown.join(', ')}` : ''}`);
  await closed;
}
