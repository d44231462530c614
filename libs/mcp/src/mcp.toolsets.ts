import type { ToolsetDeclaration } from './toolset-selection.js';

export type ToolsetName = 'meta' | 'agents' | 'revisions';

/** agent-manager's own MCP toolsets (SPEC §7), in the order they are listed and described. */
export const TOOLSETS: readonly (ToolsetDeclaration & { name: ToolsetName })[] = [
  {
    name: 'meta',
    title: 'Service',
    description: 'What this installation offers (get_info) and which toolsets this connection has (list_server_toolsets). Always on.',
    instructions:
      'Call get_info before a first write: it gives the toolset limits (at most 32 selectors, the selector pattern) and the presets every installation has. ' +
      'list_server_toolsets says which toolsets this session has and how to reconnect for others.',
    default: true,
    always: true,
  },
  {
    name: 'agents',
    title: 'Agents',
    description: 'Read, validate, create, update and delete agents (one helm release of the Generic agent chart each), and read their live status.',
    instructions:
      'An agent needs a toolset: the list of Muster selectors (preset:, server:, workflow:, tool:) it may use, written exactly as given; ["preset:none"] is a chat-only agent, and more than 32 selectors belong in a preset. ' +
      'Before a write, call validate_agent (or the write with dryRun: true) and show the user the violations or the rendered manifests. ' +
      'create_agent, update_agent and delete_agent change the cluster; after one, get_agent_status tells whether the Agent became ready. ' +
      'update_agent replaces the fields it is given (a toolset is replaced whole) and keeps the others.',
    default: true,
    always: false,
  },
  {
    name: 'revisions',
    title: 'Revisions',
    description: "Every applied change of an agent (who, when, the values) and rolling an agent back to one of them. Opt-in: connect with ?revisions.",
    instructions:
      'list_agent_revisions before rollback_agent: pick the revision by its values, not its number alone. A rollback is itself recorded as a new revision; try it with dryRun: true first.',
    default: false,
    always: false,
  },
];
