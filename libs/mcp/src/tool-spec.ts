import type { Type } from '@nestjs/common';
import type { ActiveToolsets } from './toolset-selection.js';

export interface ToolHints {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** The MCP transport a session came through. */
export type McpDoor = 'mcp-http' | 'mcp-stdio';

/** What a tool call knows about its session. */
export interface ToolContext {
  toolsets: ActiveToolsets;
  door: McpDoor;
}

/** One MCP tool: a thin door onto the service method its REST twin calls. */
export interface ToolSpec {
  name: string;
  title: string;
  /** The name of a toolset added to the registry. */
  toolset: string;
  description: string;
  annotations: ToolHints;
  /** The DTO classes whose fields, side by side, are the tool's arguments (the REST path and body). */
  input: Type<unknown>[];
  /** The DTO class of the answer (the REST response body). */
  output: Type<unknown>;
  /** A JSON Schema of the arguments, for a tool made at run time (a blueprint's): used instead of `input`'s DTOs; made on first listing. */
  inputSchema?: () => Promise<Record<string, unknown>>;
  /**
   * The outputSchema names only the answer's top-level fields and their types, not the whole
   * schema of `output`: for tools made at run time in numbers (a blueprint's, one per blueprint),
   * whose answer another tool (create_agent) describes in full. A client compiles a validator per tool.
   */
  shallowOutput?: boolean;
  /** The operations the policy knows this tool by, any of which grants it, when not its own name (a blueprint's tool). */
  operations?: string[];
  /** Runs as an MCP task when the client asks (tools/list says `execution.taskSupport: optional`); otherwise answered in the call. */
  task?: boolean;
  run(args: Record<string, unknown>, context: ToolContext): Promise<object>;
}
