import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { isInitialize, type McpSdk } from './mcp-sdk.js';

type McpRequest = IncomingMessage & { body?: unknown; auth?: AuthInfo };

/**
 * A POST whose answer is one JSON body, read as the SDK's Streamable HTTP transport would
 * accept it: the messages it parsed, with what a handler is told about the request.
 */
export interface JsonExchange {
  messages: JSONRPCMessage[];
  extra: MessageExtraInfo;
}

/**
 * The POST as the SDK's transport would accept it, or null when that transport would refuse it
 * (or it holds something only that transport decides, such as a repeated request id): every
 * check in the order the SDK makes them (Accept, Content-Type, batch size, JSON-RPC shape,
 * initialize, MCP-Protocol-Version), so a null answer is handed to the SDK's transport, whose
 * refusal the client gets word for word.
 */
export function readJsonExchange(sdk: McpSdk, req: McpRequest): JsonExchange | null {
  if (req.method !== 'POST') return null;
  const accept = req.headers.accept;
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return null;
  if (!sdk.isJsonContentType(contentTypeOf(req)) || req.body === undefined) return null;
  if (Array.isArray(req.body) && req.body.length > sdk.MAX_BATCH_SIZE) return null;
  const messages = parseMessages(sdk, req.body);
  if (messages === null || messages.some((m) => isInitialize(sdk, m))) return null;
  const version = req.headers['mcp-protocol-version'];
  if (version !== undefined && (typeof version !== 'string' || !sdk.types.SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return null;
  const ids = messages.filter(sdk.types.isJSONRPCRequest).map((m) => m.id);
  if (new Set(ids).size !== ids.length) return null;
  const extra: MessageExtraInfo = { authInfo: req.auth, requestInfo: { headers: req.headers, url: new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`) } };
  return { messages, extra };
}

/**
 * One HTTP exchange of a session, answered as one JSON body (or 202 when it holds no request):
 * what the SDK's Streamable HTTP transport does with `enableJsonResponse`, without converting
 * the Node request and response to Web ones. A server connected to it answers the exchange's
 * requests; what a server sends besides answers (notifications, its own requests) has nowhere
 * to go on a JSON answer and is dropped, as the SDK's JSON mode drops it.
 */
export class JsonResponseTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  private readonly pending = new Set<RequestId>();
  private readonly answers = new Map<RequestId, JSONRPCMessage>();
  private order: RequestId[] = [];
  private closed = false;

  constructor(
    private readonly sdk: McpSdk,
    private readonly res: ServerResponse,
  ) {}

  async start(): Promise<void> {}

  /** Hands the exchange's messages to the server; with no request among them, answers 202 at once. */
  deliver({ messages, extra }: JsonExchange): void {
    this.order = messages.filter(this.sdk.types.isJSONRPCRequest).map((m) => m.id);
    for (const id of this.order) this.pending.add(id);
    if (this.order.length === 0) this.res.writeHead(202).end();
    for (const message of messages) this.onmessage?.(message, extra);
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const { isJSONRPCResultResponse, isJSONRPCErrorResponse } = this.sdk.types;
    const answer = isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message);
    const id = answer ? message.id : options?.relatedRequestId;
    if (id === undefined) return;
    if (!this.pending.has(id) && !this.answers.has(id)) throw new Error(`No connection established for request ID: ${String(id)}`);
    if (!answer || this.closed) return;
    this.pending.delete(id);
    this.answers.set(id, message);
    if (this.pending.size > 0) return;
    const answers = this.order.map((i) => this.answers.get(i));
    const body = JSON.stringify(answers.length === 1 ? answers[0] : answers);
    this.res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}

/** The Content-Type as a Web Request (the SDK's transport) reads it: repeated headers joined. */
function contentTypeOf(req: IncomingMessage): string | undefined {
  const values: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i].toLowerCase() === 'content-type') values.push(req.rawHeaders[i + 1]);
  return values.length === 0 ? undefined : values.join(', ');
}

function parseMessages(sdk: McpSdk, body: unknown): JSONRPCMessage[] | null {
  const messages: JSONRPCMessage[] = [];
  for (const raw of Array.isArray(body) ? body : [body]) {
    const parsed = sdk.types.JSONRPCMessageSchema.safeParse(raw);
    if (!parsed.success) return null;
    messages.push(parsed.data);
  }
  return messages;
}
