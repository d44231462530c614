import { Module, type INestApplication } from '@nestjs/common';
import { McpHttpSessions } from './mcp-http.sessions.js';
import { McpServerFactory } from './mcp-server.factory.js';
import { McpSessionRepository } from './mcp-session.repository.js';
import { McpController } from './mcp.controller.js';
import { McpRegistry } from './mcp.registry.js';

/**
 * The MCP door (docs/contract.md §1, §7), transport only: Streamable HTTP at /mcp and stdio, serving the tools
 * domain modules add to McpRegistry.
 */
@Module({
  controllers: [McpController],
  providers: [McpRegistry, McpServerFactory, McpSessionRepository, McpHttpSessions],
  exports: [McpRegistry, McpServerFactory, McpHttpSessions],
})
export class McpModule {}

/** Hands the app to the registry, which derives the tools' JSON Schemas with its swagger machinery on first listing. */
export function setupMcp(app: INestApplication): void {
  app.get(McpRegistry).attach(app);
}
