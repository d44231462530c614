export { McpModule, setupMcp } from './mcp.module.js';
export { McpRegistry } from './mcp.registry.js';
export { serveMcpStdio } from './mcp-stdio.js';
export { META_TOOLSET } from './mcp.toolsets.js';
export { McpHttpSessions, refuse, type McpNotice } from './mcp-http.sessions.js';
export type { McpDoor, ToolContext, ToolHints, ToolSpec } from './tool-spec.js';
export type { ActiveToolsets, ToolsetDeclaration } from './toolset-selection.js';
export { refusedHost } from './allowed-hosts.js';
