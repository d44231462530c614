import type { ToolsetDeclaration } from './toolset-selection.js';

/** The transport's own toolset: always on, first in every listing. Domain modules add theirs to McpRegistry. */
export const META_TOOLSET: ToolsetDeclaration = {
  name: 'meta',
  title: 'Service',
  description: 'What this installation offers (get_info) and which toolsets this connection has (list_server_toolsets). Always on.',
  instructions: 'list_server_toolsets says which toolsets this session has and how to select others.',
  default: true,
  always: true,
};
