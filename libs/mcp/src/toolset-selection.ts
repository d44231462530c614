/**
 * Toolsets by URL (docs/contract.md §7): which of the server's
 * toolsets a connection gets, from the query string it connected with. Pure: no Nest, no SDK.
 */

export interface ToolsetDeclaration {
  /** What a URL says. */
  name: string;
  /** A human-readable name for a client's UI; empty falls back to name. */
  title: string;
  /** What /mcp/toolsets and list_server_toolsets tell a client. */
  description: string;
  /** Added to the server's instructions, under the title, only in sessions where the toolset is active. */
  instructions: string;
  /** On when the URL says nothing. */
  default: boolean;
  /** On whatever the URL says, so ?only= cannot produce an endpoint nobody can use. */
  always: boolean;
}

/** What a query string asks for, before it is checked against the declared toolsets. */
export interface ToolsetSelection {
  /** ?only=a,b: exactly these (plus the always toolsets); null when the URL has no only=. */
  only: string[] | null;
  /** ?name, ?name=1, ?toolsets=a,b: the defaults (or the only= list) plus these. */
  add: string[];
  /** ?without=a: the defaults (or the only= list) less these. */
  without: string[];
}

export interface ActiveToolsets {
  /** Declared toolsets this connection gets, in declaration order. */
  active: string[];
  /** Names the selection asked for that no toolset declares: served anyway (ignored) and reported. */
  unknown: string[];
}

export const RESERVED_QUERY_KEYS = ['toolsets', 'only', 'without'] as const;

/** How a client selects other toolsets, in the words of its transport. */
export const HOW_TO_SELECT = {
  'mcp-http':
    'Reconnect with the toolset in the URL: ?name adds it, ?toolsets=a,b adds several, ?only=a,b asks for exactly those (plus the always-on ones), ?without=name leaves one out. The selection is read once, when the session opens.',
  'mcp-stdio':
    'Restart agent-manager mcp with --toolsets: --toolsets name adds it, --toolsets toolsets=a,b adds several, --toolsets only=a,b asks for exactly those (plus the always-on ones), --toolsets without=name leaves one out. In an MCP client configuration that is the args list, e.g. ["mcp", "--toolsets", "revisions"]. The selection is read once, when the process starts.',
} as const;

/**
 * Reads a query string (with or without the leading "?") or its pairs. A bare key (?revisions)
 * and a key with any value that is not reserved (?revisions=1) are both read as a toolset name;
 * the ignored keys (e.g. `scopes`, for an authorization server) are not read at all.
 */
export function parseSelection(query: string | Iterable<[string, string]>, ignoredKeys: readonly string[] = []): ToolsetSelection {
  const pairs = typeof query === 'string' ? new URLSearchParams(query.startsWith('?') ? query.slice(1) : query) : query;
  const ignored = new Set(ignoredKeys);
  const selection: ToolsetSelection = { only: null, add: [], without: [] };
  for (const [key, value] of pairs) {
    if (key === '' || ignored.has(key)) continue;
    if (key === 'only') selection.only = union(selection.only ?? [], names(value));
    else if (key === 'without') selection.without = union(selection.without, names(value));
    else if (key === 'toolsets') selection.add = union(selection.add, names(value));
    else selection.add = union(selection.add, names(key));
  }
  return selection;
}

/** True when the selection names nothing: the deployment's default selection applies. */
export function isEmptySelection(selection: ToolsetSelection): boolean {
  return selection.only === null && selection.add.length === 0 && selection.without.length === 0;
}

/**
 * The toolsets a selection activates. A URL that names nothing gets `fallback` (the
 * deployment's choice for a bare /mcp) when given, else the toolsets declared default.
 */
export function resolveSelection(selection: ToolsetSelection, toolsets: readonly ToolsetDeclaration[], fallback?: ToolsetSelection): ActiveToolsets {
  const chosen = isEmptySelection(selection) && fallback ? fallback : selection;
  const declared = new Set(toolsets.map((t) => t.name));
  const base = chosen.only ?? toolsets.filter((t) => t.default).map((t) => t.name);
  const wanted = new Set([...base, ...chosen.add]);
  for (const name of chosen.without) wanted.delete(name);
  const active = toolsets.filter((t) => t.always || wanted.has(t.name)).map((t) => t.name);
  const asked = [...(chosen.only ?? []), ...chosen.add, ...chosen.without];
  const unknown = union([], asked.filter((name) => !declared.has(name)));
  return { active: union([], active), unknown };
}

function names(value: string): string[] {
  return value
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n.length > 0);
}

function union(into: string[], more: string[]): string[] {
  const out = [...into];
  for (const name of more) if (!out.includes(name)) out.push(name);
  return out;
}
