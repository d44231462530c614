export { McpModule, setupMcp } from './mcp.module.js';
export { serveMcpStdio } from './mcp-stdio.js';
export { TOOLSETS } from './mcp.toolsets.js';
export { refuse } from './mcp-http.sessions.js';
