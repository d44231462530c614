import { Module, type INestApplication } from '@nestjs/common';
import { AgentsModule, CAPABILITIES } from '@app/agents';
import { AgentsTools } from './agents.tools.js';
import { McpHttpSessions } from './mcp-http.sessions.js';
import { McpServerFactory } from './mcp-server.factory.js';
import { McpCatalog } from './mcp.catalog.js';
import { McpController } from './mcp.controller.js';

/** The MCP door (SPEC §1, §7): the agent operations as tools, over Streamable HTTP at /mcp and over stdio. */
@Module({
  imports: [AgentsModule],
  controllers: [McpController],
  providers: [AgentsTools, McpCatalog, McpServerFactory, McpHttpSessions],
  exports: [McpCatalog, McpServerFactory],
})
export class McpModule {
  constructor() {
    CAPABILITIES.mcp = true;
  }
}

/** Derives the tools' JSON Schemas from the DTO classes with the app's swagger machinery; createApp calls it. */
export function setupMcp(app: INestApplication): void {
  app.get(McpCatalog).deriveSchemas(app);
}
