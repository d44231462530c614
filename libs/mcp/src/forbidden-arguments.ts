/**
 * Argument names the SDK's parsing drops (`__proto__`: arguments are copied key by key) or that
 * name no field (`constructor`): refused as the REST door refuses them in a body, instead of a
 * write running without what they carried (`{"__proto__": {"dryRun": true}}` ran for real).
 * Nested maps (labels, annotations) reach the DTO as sent and are judged there, as on REST.
 */
const FORBIDDEN = ['__proto__', 'constructor'];

/**
 * A tools/call in a raw JSON-RPC message (as JSON.parse built it, own `__proto__` keys kept) whose
 * arguments name a forbidden key: the answer to send instead of handing the message to the SDK.
 */
export function refusedToolCall(message: unknown): { id: unknown; result: object } | null {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return null;
  const { method, params, id } = message as { method?: unknown; params?: { arguments?: unknown }; id?: unknown };
  if (method !== 'tools/call' || id === undefined) return null;
  const args = params?.arguments;
  if (typeof args !== 'object' || args === null) return null;
  const key = Object.keys(args).find((k) => FORBIDDEN.includes(k));
  if (key === undefined) return null;
  const text = `argument "${key}" is refused: it is never an argument name (the MCP parsing would drop it and the call would run without it); send the arguments without it`;
  const body = { error: { code: 'invalid_request', message: text, details: [{ path: key, message: text }] } };
  return { id, result: { isError: true, content: [{ type: 'text', text }], structuredContent: body } };
}
