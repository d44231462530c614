import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { loadMcpSdk } from './mcp-sdk.js';
import { McpServerFactory } from './mcp-server.factory.js';
import { McpRegistry } from './mcp.registry.js';

/** A session nobody has used for this long is closed (its client reconnects with initialize). */
const IDLE_MS = 30 * 60_000;

interface Session {
  transport: StreamableHTTPServerTransport;
  lastSeen: number;
}

/**
 * Streamable HTTP sessions of /mcp. The toolsets are read from the URL of the initialize
 * request and kept for the session: later requests' query strings are not read.
 */
@Injectable()
export class McpHttpSessions implements OnModuleDestroy {
  private readonly logger = new Logger('MCP');
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper = setInterval(() => this.closeIdle(), 60_000).unref();

  constructor(
    private readonly registry: McpRegistry,
    private readonly servers: McpServerFactory,
  ) {}

  async handle(req: IncomingMessage & { body?: unknown }, res: ServerResponse, query: string): Promise<void> {
    const header = req.headers['mcp-session-id'];
    const id = Array.isArray(header) ? header[0] : header;
    if (id !== undefined) {
      const session = this.sessions.get(id);
      if (!session) return refuse(res, 404, 'Session not found: it ended or the service restarted; start a new session with initialize (without mcp-session-id)');
      session.lastSeen = Date.now();
      return session.transport.handleRequest(req, res, req.body);
    }
    const { StreamableHTTPServerTransport, types } = await loadMcpSdk();
    if (req.method !== 'POST' || !types.isInitializeRequest(req.body)) {
      return refuse(res, 400, 'Bad Request: a session starts with an initialize request (POST, Content-Type: application/json) without mcp-session-id; later requests carry the mcp-session-id it answered');
    }
    const toolsets = this.registry.select(query);
    const server = await this.servers.create(this.registry.parse(query), 'mcp-http');
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        this.sessions.set(sessionId, { transport, lastSeen: Date.now() });
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
    const cutoff = Date.now() - IDLE_MS;
    for (const [id, session] of this.sessions) {
      if (session.lastSeen < cutoff) {
        this.sessions.delete(id);
        void session.transport.close();
      }
    }
  }
}

/** A refusal in JSON-RPC's error shape, as the SDK's transport answers its own. */
export function refuse(res: ServerResponse, status: number, message: string, code = -32000): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
