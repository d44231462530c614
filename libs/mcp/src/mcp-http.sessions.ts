import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { JSONRPCMessage, JSONRPCResponse, LoggingLevel, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { ANONYMOUS, describePrincipal, principalOf, type Principal } from '@app/auth';
import { AppConfig, Clock, DEFAULT_RETRY_AFTER_SECONDS, OperationContexts } from '@app/common';
import { Metrics } from '@app/telemetry';
import { refusedToolCall } from './forbidden-arguments.js';
import { JsonResponseTransport, readJsonExchange } from './json-response.transport.js';
import { isInitialize, loadMcpSdk, type McpSdk } from './mcp-sdk.js';
import { CONFIRM_TIMEOUT_MS, formElicitation, McpServerFactory } from './mcp-server.factory.js';
import { McpSessionRepository, type McpSessionRecord } from './mcp-session.repository.js';
import { McpTaskStore, TASK_TTL_MS } from './mcp-tasks.js';
import { McpRegistry } from './mcp.registry.js';

type McpRequest = IncomingMessage & { body?: unknown; auth?: AuthInfo };

/** How often a call waiting for its person's answer looks for it in the store (the answer reached another replica). */
const ANSWER_POLL_MS = 250;
/** How often a replica holding GET streams looks in the store for notices another replica left for them. */
const NOTICE_POLL_MS = 1000;
/** The requestId prefix of a notice kept in the McpAnswer table (a client's answers are UUIDs: the two never meet). */
const NOTICE = 'notice:';
/** The ids questions go out under (randomUUID). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;


/** A notification the service sends a session on its own, after the call it concerns ended (a proposal decided). */
export interface McpNotice {
  level: LoggingLevel;
  /** The notification's logger (what a client shows it under). */
  logger: string;
  data: Record<string, unknown>;
}

/**
 * Streamable HTTP sessions of /mcp, with no session affinity: a session lives in the store
 * (McpSessionRepository), and every request is served by a server and transport of its own (the
 * SDK's stateless transport), built from the stored session, on whichever replica it reaches.
 * The toolsets are read from the URL of the initialize request and kept for the session: later
 * requests' query strings are not read. A GET stream stays on the replica that took it and hears
 * that replica's tools/list_changed; if the replica goes away, the client opens it again elsewhere.
 */
@Injectable()
export class McpHttpSessions implements OnModuleDestroy {
  private readonly logger = new Logger('MCP');
  /** This replica's open GET streams by session id (the server each stream's tools/list_changed come from). */
  private readonly streams = new Map<string, { server: Server; res: ServerResponse }>();
  /**
   * The questions this replica's tool calls wait on (a destructive call asking its person), by
   * session id and request id: the client answers in a POST of its own, handed to the waiting call.
   */
  private readonly waiting = new Map<string, (answer: JSONRPCResponse) => void>();
  /** When this replica last marked each session used in the store (marked at most every touchMs). */
  private readonly touched = new Map<string, number>();
  /** A session nobody has used for MCP_SESSION_IDLE_SECONDS is closed (its client reconnects with initialize). */
  private readonly idleMs: number;
  private readonly touchMs: number;
  private readonly sweeper: NodeJS.Timeout;
  private readonly noticePoller: NodeJS.Timeout;

  constructor(
    private readonly registry: McpRegistry,
    private readonly servers: McpServerFactory,
    private readonly sessions: McpSessionRepository,
    private readonly config: AppConfig,
    metrics: Metrics,
    private readonly clock: Clock,
  ) {
    // Sessions live in the store (any replica serves them); what this replica holds is their GET streams.
    metrics.watchMcpSessions(() => this.streams.size);
    this.idleMs = config.MCP_SESSION_IDLE_SECONDS * 1000;
    this.touchMs = Math.min(30_000, this.idleMs / 10);
    this.sweeper = setInterval(() => void this.sweep(), Math.min(60_000, Math.max(1000, this.idleMs / 4))).unref();
    this.noticePoller = setInterval(() => void this.deliverNotices(), NOTICE_POLL_MS).unref();
  }

  /**
   * Tells session `sessionId` something after its call ended (docs/approvals.md: its proposal was
   * decided), as a `notifications/message` on the session's GET stream, under `key` (once per key).
   * The stream may be held by another replica, or by none right now: then the notice is kept in the
   * store the way an elicitation answer that reached the wrong replica is (the McpAnswer table), and
   * the replica holding the stream, or the next one to open it within CONFIRM_TIMEOUT_MS, sends it.
   * A session that is gone, or whose logging/setLevel is above `level`, is not told: answers false,
   * logged at debug. Never throws.
   */
  async notify(sessionId: string, key: string, notice: McpNotice): Promise<boolean> {
    try {
      const session = await this.sessions.find(sessionId);
      if (!session) {
        this.logger.debug(`session ${sessionId}: gone, not told ${key}`);
        return false;
      }
      if (!reaches(notice.level, session.logLevel)) {
        this.logger.debug(`session ${sessionId}: its logging level ${session.logLevel} is above ${notice.level}, not told ${key}`);
        return false;
      }
      if (await this.sendOnStream(sessionId, notice)) return true;
      await this.sessions.saveAnswers(sessionId, [{ requestId: `${NOTICE}${key}`, message: JSON.stringify(notice) }]);
      return true;
    } catch (error) {
      this.logger.debug(`session ${sessionId}: telling it ${key} failed: ${(error as Error).message}`);
      return false;
    }
  }

  /** Sends a notice on the session's GET stream when this replica holds it and it has started; false otherwise. */
  private async sendOnStream(sessionId: string, notice: McpNotice): Promise<boolean> {
    const stream = this.streams.get(sessionId);
    if (!stream || !stream.res.headersSent || stream.res.writableEnded) return false;
    try {
      await stream.server.notification({ method: 'notifications/message', params: { level: notice.level, logger: notice.logger, data: notice.data } });
      return true;
    } catch (error) {
      this.logger.debug(`session ${sessionId}: its stream did not take a notice: ${(error as Error).message}`);
      return false;
    }
  }

  /** Sends the notices other replicas left in the store for the streams this replica holds; each is taken by one replica. */
  private async deliverNotices(): Promise<void> {
    const open = [...this.streams.entries()].filter(([, stream]) => stream.res.headersSent && !stream.res.writableEnded).map(([id]) => id);
    if (open.length === 0) return;
    try {
      for (const { sessionId, message } of await this.sessions.takeAnswersByPrefix(open, NOTICE)) {
        if (!(await this.sendOnStream(sessionId, JSON.parse(message) as McpNotice))) this.logger.debug(`session ${sessionId}: its stream closed before a notice was sent`);
      }
    } catch (error) {
      this.logger.warn(`delivering MCP notices failed: ${(error as Error).message}`);
    }
  }

  /** `req.auth` is set by the bearer check of /mcp (mcpBearerAuth, authentication on); without it the caller is anonymous. */
  async handle(req: McpRequest, res: ServerResponse, query: string): Promise<void> {
    const principal = principalOf(req.auth) ?? ANONYMOUS;
    // The request's access line names its caller, as REST's do (a tool call's own line also names the tool).
    OperationContexts.learn({ subject: principal.subject });
    const header = req.headers['mcp-session-id'];
    const id = Array.isArray(header) ? header[0] : header;
    if (refuseForbiddenArguments(req.body, res)) return;
    const sdk = await loadMcpSdk();
    const initialize = req.method === 'POST' && (Array.isArray(req.body) ? req.body.some((m) => isInitialize(sdk, m)) : isInitialize(sdk, req.body));
    if (id === undefined) {
      if (!initialize) {
        return refuse(res, 400, 'Bad Request: a session starts with an initialize request (POST, Content-Type: application/json) without mcp-session-id; later requests carry the mcp-session-id it answered');
      }
      return this.open(req, res, query, principal);
    }
    const session = await this.sessions.find(id);
    // Another principal's session id is answered as an unknown one: it learns nothing, gets nothing.
    if (!session || !samePrincipal(session, principal)) {
      return refuse(res, 404, 'Session not found: it ended or was idle too long; start a new session with initialize (without mcp-session-id)');
    }
    if (initialize) return refuse(res, 400, 'Invalid Request: this session is already initialized; start a new session without mcp-session-id', -32600);
    if (req.method === 'DELETE') return this.close(session, res);
    await this.touch(session);
    if (req.method === 'GET') return this.hold(req, res, session, principal);
    if (req.method === 'POST' && (await this.deliverAnswers(sdk, session, req.body, res))) return;
    return this.serve(sdk, req, res, session, principal);
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.sweeper);
    clearInterval(this.noticePoller);
    // The sessions stay in the store: the clients' next requests go to another replica.
    await Promise.allSettled([...this.streams.values()].map(({ server }) => server.close()));
    this.streams.clear();
  }

  /** initialize: checks the principal's cap, then answers with a new session id stored for every replica. */
  private async open(req: McpRequest, res: ServerResponse, query: string, principal: Principal): Promise<void> {
    const id = randomUUID();
    // Stored before the answer names it, so the client's next request finds it on any replica;
    // counted and stored in one step, so the cap holds however many replicas open at once.
    const open = await this.sessions.createWithin({ id, principal, query, ...clientInfoOf(req.body), elicits: elicitsOf(req.body), replica: this.config.REPLICA_ID }, this.config.MCP_SESSIONS_PER_PRINCIPAL);
    if (open !== null) {
      return refuse(
        res,
        429,
        `Too many sessions: ${describePrincipal(principal)} has ${open} open MCP sessions (MCP_SESSIONS_PER_PRINCIPAL=${this.config.MCP_SESSIONS_PER_PRINCIPAL}); close one (DELETE /mcp with its mcp-session-id) or reuse it`,
      );
    }
    const toolsets = this.registry.select(query);
    this.touched.set(id, this.clock.nowMs());
    whenClosed(res, () => {
      if (res.statusCode === 200 && res.writableFinished) return;
      this.touched.delete(id);
      this.sessions.remove(id).catch((error: unknown) => this.logger.warn(`session ${id}: removing after a refused initialize failed: ${(error as Error).message}`));
    });
    if (res.destroyed) return; // the client left while the session was stored
    // initialize's answer declares what the session's later servers serve (tasks among them)
    const server = await this.servers.create(this.registry.parse(query), 'mcp-http', principal, { session: id, tasks: new McpTaskStore(id, this.sessions) });
    const { StreamableHTTPServerTransport } = await loadMcpSdk();
    // The one request with a session-id generator: it answers initialize with mcp-session-id.
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessioninitialized: () => {
        this.logger.log(`session ${id} opened: toolsets ${toolsets.active.join(', ')}${toolsets.unknown.length > 0 ? `; unknown ${toolsets.unknown.join(', ')}` : ''}`);
      },
    });
    await this.answerOnce(server, transport, req, res);
  }

  /**
   * Any other POST of a session, answered by a server of its own: as one JSON body without the
   * SDK's transport when that transport would accept the POST and nothing streams; otherwise
   * (a write's progress, or a refusal the SDK's transport words) through a stateless one.
   */
  private async serve(sdk: McpSdk, req: McpRequest, res: ServerResponse, session: McpSessionRecord, principal: Principal): Promise<void> {
    const streams = this.sendsProgress(req.body);
    const exchange = streams ? null : readJsonExchange(sdk, req);
    const server = await this.serverOf(session, principal);
    if (exchange === null) {
      const transport = await statelessTransport(!streams);
      if (streams) this.relayAnswers(sdk, session.id, transport, res);
      return this.answerOnce(server, transport, req, res);
    }
    const transport = new JsonResponseTransport(sdk, res);
    whenClosed(res, () => void server.close());
    if (res.destroyed) return;
    await server.connect(transport);
    transport.deliver(exchange);
  }

  /**
   * Makes the requests a tool call's server sends on its stream (elicitation/create) answerable by
   * a later POST of the session on any replica: each goes out under an id unique to the session
   * (every request gets a server of its own, and each server counts its ids from 0), and its
   * answer is handed back under the server's own id: at once when the answer reaches this
   * replica, else taken from the store, where the replica it reached put it. Forgotten when the
   * call's response closes.
   */
  private relayAnswers(sdk: McpSdk, sessionId: string, transport: StreamableHTTPServerTransport, res: ServerResponse): void {
    const send = transport.send.bind(transport);
    /** The server's own id of each question still waiting, by the id it went out under. */
    const asked = new Map<string, RequestId>();
    let polling: NodeJS.Timeout | undefined;
    const deliver = (id: string, answer: JSONRPCResponse) => {
      const own = asked.get(id);
      if (own === undefined) return;
      asked.delete(id);
      this.waiting.delete(`${sessionId} ${id}`);
      transport.onmessage?.({ ...answer, id: own } as JSONRPCMessage);
    };
    const poll = async () => {
      for (const id of [...asked.keys()]) {
        const message = await this.sessions.takeAnswer(sessionId, id).catch(() => null);
        if (message !== null) deliver(id, JSON.parse(message) as JSONRPCResponse);
      }
      const open = asked.size > 0 && !res.writableEnded && !res.destroyed;
      polling = open ? setTimeout(() => void poll(), ANSWER_POLL_MS) : undefined;
    };
    transport.send = async (message, options) => {
      if (!sdk.types.isJSONRPCRequest(message)) return send(message, options);
      const id = randomUUID();
      asked.set(id, message.id);
      this.waiting.set(`${sessionId} ${id}`, (answer) => deliver(id, answer));
      polling ??= setTimeout(() => void poll(), ANSWER_POLL_MS);
      return send({ ...message, id }, options);
    };
    whenClosed(res, () => {
      clearTimeout(polling);
      for (const id of asked.keys()) this.waiting.delete(`${sessionId} ${id}`);
      asked.clear();
    });
  }

  /**
   * A POST holding only answers to questions a tool call asked (ids this service gave them): handed
   * to the call when this replica holds it, else kept in the store for the replica that does; 202.
   */
  private async deliverAnswers(sdk: McpSdk, session: McpSessionRecord, body: unknown, res: ServerResponse): Promise<boolean> {
    // Only a session whose client declared elicitation is ever asked: nobody else's answers are kept.
    if (!session.elicits) return false;
    const messages = (Array.isArray(body) ? body : [body]) as JSONRPCMessage[];
    const { isJSONRPCResultResponse, isJSONRPCErrorResponse } = sdk.types;
    if (!messages.every((m) => (isJSONRPCResultResponse(m) || isJSONRPCErrorResponse(m)) && typeof m.id === 'string' && UUID.test(m.id))) return false;
    const elsewhere: { requestId: string; message: string }[] = [];
    for (const answer of messages as JSONRPCResponse[]) {
      const deliver = this.waiting.get(`${session.id} ${String(answer.id)}`);
      if (deliver) deliver(answer);
      else elsewhere.push({ requestId: String(answer.id), message: JSON.stringify(answer) });
    }
    if (elsewhere.length > 0) await this.sessions.saveAnswers(session.id, elsewhere);
    res.writeHead(202).end();
    return true;
  }

  /**
   * Whether a POST's answer needs an event stream: a write's tools/call sends its progress
   * (notifications/message) while helm runs. Anything else is answered as one JSON body, which
   * the protocol lets a server choose and costs a third less per call than a stream.
   */
  private sendsProgress(body: unknown): boolean {
    const messages = (Array.isArray(body) ? body : [body]) as { method?: unknown; params?: { name?: unknown; arguments?: { dryRun?: unknown } } }[];
    return messages.some((m) => m?.method === 'tools/call' && !(this.registry.readsOnly(m.params?.name) || m.params?.arguments?.dryRun === true));
  }

  /** GET: the session's stream of server messages (tools/list_changed), held on this replica until the client leaves. */
  private async hold(req: McpRequest, res: ServerResponse, session: McpSessionRecord, principal: Principal): Promise<void> {
    if (this.streams.has(session.id)) return refuse(res, 409, 'Conflict: Only one SSE stream is allowed per session');
    const server = await this.serverOf(session, principal);
    const transport = await statelessTransport();
    await server.connect(transport);
    this.streams.set(session.id, { server, res });
    whenClosed(res, () => {
      if (this.streams.get(session.id)?.server === server) this.streams.delete(session.id);
      void server.close();
    });
    if (res.destroyed) return; // the client left while its session was read: no stream to hold
    const serving = transport.handleRequest(req, res, req.body);
    // A change the client may have missed (before its stream opened, or while it reconnected from a replica that went away).
    if (this.registry.changedSince(session.createdAt)) void announceWhenOpen(server, res);
    await serving;
  }

  /** DELETE: the session ends on every replica (a stream another replica holds closes at its next sweep). */
  private async close(session: McpSessionRecord, res: ServerResponse): Promise<void> {
    await this.sessions.remove(session.id);
    this.dropLocal(session.id);
    res.writeHead(200).end();
  }

  private async serverOf(session: McpSessionRecord, principal: Principal): Promise<Server> {
    return this.servers.create(this.registry.parse(session.query), 'mcp-http', principal, {
      session: session.id,
      tasks: new McpTaskStore(session.id, this.sessions),
      client: session.clientName ?? undefined,
      level: (session.logLevel ?? undefined) as LoggingLevel | undefined,
      saveLevel: (level) => this.sessions.setLogLevel(session.id, level),
      elicits: session.elicits,
    });
  }

  /** Serves one request and closes its server when the response is done. */
  private async answerOnce(server: Server, transport: StreamableHTTPServerTransport, req: McpRequest, res: ServerResponse): Promise<void> {
    whenClosed(res, () => void server.close());
    if (res.destroyed) return;
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  }

  /** Marks the session used in the store, at most every touchMs per replica. */
  private async touch(session: McpSessionRecord): Promise<void> {
    const now = this.clock.nowMs();
    if (now - (this.touched.get(session.id) ?? 0) < this.touchMs) return;
    this.touched.set(session.id, now);
    await this.sessions.touch(session.id);
  }

  /** Ends idle sessions (whichever replica sweeps first) and this replica's streams of sessions ended elsewhere. */
  private async sweep(): Promise<void> {
    try {
      await this.sessions.removeAnswersOlderThan(CONFIRM_TIMEOUT_MS);
      await this.sessions.removeTasksOlderThan(TASK_TTL_MS);
      for (const id of await this.sessions.removeIdle(this.idleMs)) {
        this.logger.log(`session ${id} closed: idle for more than ${this.idleMs / 1000}s`);
        this.dropLocal(id);
      }
      const alive = await this.sessions.existing([...new Set([...this.streams.keys(), ...this.touched.keys()])]);
      for (const id of [...this.streams.keys(), ...this.touched.keys()]) if (!alive.has(id)) this.dropLocal(id);
    } catch (error) {
      this.logger.warn(`sweeping idle MCP sessions failed: ${(error as Error).message}`);
    }
  }

  private dropLocal(id: string): void {
    this.touched.delete(id);
    const stream = this.streams.get(id);
    this.streams.delete(id);
    if (stream) void stream.server.close();
  }
}

/**
 * Runs `done` when the response closes, or at once when it already has: a client that left while
 * the store was read (a session lookup, a touch) closed it before anyone listened, and 'close'
 * is not emitted twice. Without this, the request's server (and its tools/list_changed listener)
 * or a held stream's slot would stay forever.
 */
function whenClosed(res: ServerResponse, done: () => void): void {
  if (res.destroyed) done();
  else res.once('close', done);
}

/** Sends tools/list_changed once the stream's response has started (the transport drops what comes before). */
async function announceWhenOpen(server: Server, res: ServerResponse): Promise<void> {
  for (let i = 0; i < 200 && !res.headersSent && !res.destroyed; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (res.headersSent && res.statusCode === 200 && !res.writableEnded) await server.sendToolListChanged().catch(() => undefined);
}

/** `json`: answer as one JSON body rather than an event stream (a POST whose answer sends nothing before it). */
async function statelessTransport(json = false): Promise<StreamableHTTPServerTransport> {
  const { StreamableHTTPServerTransport } = await loadMcpSdk();
  return new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: json });
}

/** Whether a notice at `level` passes a session's logging/setLevel threshold (none: everything). */
function reaches(level: LoggingLevel, threshold: string | null): boolean {
  const order: readonly string[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
  return threshold === null || order.indexOf(level) >= order.indexOf(threshold);
}

function samePrincipal(session: McpSessionRecord, principal: Principal): boolean {
  return session.subject === principal.subject && session.authMethod === principal.method;
}

/** The client's name and version from an initialize request's params.clientInfo. */
function clientInfoOf(body: unknown): { clientName?: string; clientVersion?: string } {
  const message = (Array.isArray(body) ? body[0] : body) as { params?: { clientInfo?: { name?: unknown; version?: unknown } } } | undefined;
  const info = message?.params?.clientInfo;
  return { clientName: storable(info?.name), clientVersion: storable(info?.version) };
}

/** Whether an initialize request's params.capabilities declare form elicitation. */
function elicitsOf(body: unknown): boolean {
  const message = (Array.isArray(body) ? body[0] : body) as { params?: { capabilities?: Parameters<typeof formElicitation>[0] } } | undefined;
  return formElicitation(message?.params?.capabilities ?? {}) === true;
}

/**
 * A client-given text as the store can hold it: NUL and unpaired surrogates become "?" (as the
 * journal's rule for client names makes them), cut to 1024 code points (the journal keeps fewer).
 */
function storable(text: unknown): string | undefined {
  // eslint-disable-next-line no-control-regex -- NUL is what PostgreSQL's text cannot hold
  return typeof text === 'string' ? [...text.replace(/\u0000|[\uD800-\uDFFF]/gu, '?')].slice(0, 1024).join('') : undefined;
}

/** Answers a tools/call whose raw arguments hold __proto__ or constructor (the SDK's parsing would drop them). */
function refuseForbiddenArguments(body: unknown, res: ServerResponse): boolean {
  const messages = Array.isArray(body) ? body : [body];
  const refused = messages.map(refusedToolCall);
  if (refused.every((r) => r === null)) return false;
  const answers = refused.filter((r) => r !== null).map((r) => ({ jsonrpc: '2.0', id: r.id, result: r.result }));
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(Array.isArray(body) ? answers : answers[0]));
  return true;
}

/** A refusal in JSON-RPC's error shape, as the SDK's transport answers its own. */
export function refuse(res: ServerResponse, status: number, message: string, code = -32000): void {
  // Every 503 says when to come back.
  if (status === 503 && !res.hasHeader('retry-after')) res.setHeader('retry-after', String(DEFAULT_RETRY_AFTER_SECONDS));
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
