import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { ANONYMOUS, describePrincipal, principalOf, type Principal } from '@app/auth';
import { AppConfig } from '@app/common';
import { Metrics } from '@app/telemetry';
import { refusedToolCall } from './forbidden-arguments.js';
import { loadMcpSdk } from './mcp-sdk.js';
import { McpServerFactory } from './mcp-server.factory.js';
import { McpRegistry } from './mcp.registry.js';

interface Session {
  transport: StreamableHTTPServerTransport;
  lastSeen: number;
  /** The principal that opened it: only it may use it. */
  principal: Principal;
}

/**
 * Streamable HTTP sessions of /mcp. The toolsets are read from the URL of the initialize
 * request and kept for the session: later requests' query strings are not read.
 */
@Injectable()
export class McpHttpSessions implements OnModuleDestroy {
  private readonly logger = new Logger('MCP');
  private readonly sessions = new Map<string, Session>();
  /** A session nobody has used for MCP_SESSION_IDLE_SECONDS is closed (its client reconnects with initialize). */
  private readonly idleMs: number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly registry: McpRegistry,
    private readonly servers: McpServerFactory,
    private readonly config: AppConfig,
    metrics: Metrics,
  ) {
    metrics.watchMcpSessions(() => this.sessions.size);
    this.idleMs = config.MCP_SESSION_IDLE_SECONDS * 1000;
    this.sweeper = setInterval(() => this.closeIdle(), Math.min(60_000, Math.max(1000, this.idleMs / 4))).unref();
  }

  /** `req.auth` is the MCP SDK bearer middleware's (authentication on); without it the caller is anonymous. */
  async handle(req: IncomingMessage & { body?: unknown; auth?: AuthInfo }, res: ServerResponse, query: string): Promise<void> {
    const principal = principalOf(req.auth) ?? ANONYMOUS;
    const header = req.headers['mcp-session-id'];
    const id = Array.isArray(header) ? header[0] : header;
    if (refuseForbiddenArguments(req.body, res)) return;
    if (id !== undefined) {
      const session = this.sessions.get(id);
      // Another principal's session id is answered as an unknown one: it learns nothing, gets nothing.
      if (!session || !samePrincipal(session.principal, principal)) {
        return refuse(res, 404, 'Session not found: it ended or the service restarted; start a new session with initialize (without mcp-session-id)');
      }
      session.lastSeen = Date.now();
      return session.transport.handleRequest(req, res, req.body);
    }
    const { StreamableHTTPServerTransport, types } = await loadMcpSdk();
    if (req.method !== 'POST' || !types.isInitializeRequest(req.body)) {
      return refuse(res, 400, 'Bad Request: a session starts with an initialize request (POST, Content-Type: application/json) without mcp-session-id; later requests carry the mcp-session-id it answered');
    }
    const open = [...this.sessions.values()].filter((s) => samePrincipal(s.principal, principal)).length;
    if (open >= this.config.MCP_SESSIONS_PER_PRINCIPAL) {
      return refuse(
        res,
        429,
        `Too many sessions: ${describePrincipal(principal)} has ${open} open MCP sessions (MCP_SESSIONS_PER_PRINCIPAL=${this.config.MCP_SESSIONS_PER_PRINCIPAL}); close one (DELETE /mcp with its mcp-session-id) or reuse it`,
      );
    }
    const toolsets = this.registry.select(query);
    const server = await this.servers.create(this.registry.parse(query), 'mcp-http', principal);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        this.sessions.set(sessionId, { transport, lastSeen: Date.now(), principal });
        this.logger.log(`session ${sessionId} opened: toolsets ${toolsets.active.join(', ')}${toolsets.unknown.length > 0 ? `; unknown ${toolsets.unknown.join(', ')}` : ''}`);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.allSettled([...this.sessions.values()].map(({ transport }) => transport.close()));
    this.sessions.clear();
  }

  private closeIdle(): void {
    const cutoff = Date.now() - this.idleMs;
    for (const [id, session] of this.sessions) {
      if (session.lastSeen < cutoff) {
        this.sessions.delete(id);
        void session.transport.close();
        this.logger.log(`session ${id} of ${session.principal.subject} closed: idle for more than ${this.idleMs / 1000}s`);
      }
    }
  }
}

function samePrincipal(a: Principal, b: Principal): boolean {
  return a.subject === b.subject && a.method === b.method;
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
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
