const MAX_NAME = 128;

/**
 * The refusal of a tool outside the session's allowed set (MCP layer 2): names the tool and lists
 * the tools that are allowed, and deliberately no cause.
 */
export function toolNotAllowed(name: string, allowed: readonly string[]): string {
  const shown = name.length > MAX_NAME ? `${name.slice(0, MAX_NAME)}…` : name;
  const list = allowed.length > 0 ? allowed.join(', ') : '(none)';
  return `tool_not_allowed: ${JSON.stringify(shown)} is not in this session's allowed tool set. Allowed tools: ${list}`;
}
