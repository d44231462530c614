import { All, Controller, Get, Logger, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiExcludeController, AppConfig, mapError } from '@app/common';
import { malformedHost, refusedHost } from './allowed-hosts.js';
import { McpHttpSessions, refuse } from './mcp-http.sessions.js';
import { McpRegistry } from './mcp.registry.js';

/** The MCP door over Streamable HTTP (outside the versioned REST API and its OpenAPI document). */
@ApiExcludeController()
@Controller('mcp')
export class McpController {
  private readonly logger = new Logger('MCP');

  constructor(
    private readonly sessions: McpHttpSessions,
    private readonly registry: McpRegistry,
    private readonly config: AppConfig,
  ) {}

  /** What a connection with the same query would get: {"active": […], "unknown": […]}. */
  @Get('toolsets')
  toolsets(@Req() req: Request, @Res() res: Response): void {
    if (!this.allowed(req, res)) return;
    res.status(200).json(this.registry.selectionReport(this.registry.select(queryOf(req))));
  }

  @All()
  async mcp(@Req() req: Request, @Res() res: Response): Promise<void> {
    if (!this.allowed(req, res)) return;
    try {
      await this.sessions.handle(req, res, queryOf(req));
    } catch (error) {
      // Sessions live in the store: a store that cannot be reached answers 503 with Retry-After, as REST does.
      const mapped = mapError(error);
      this.logger.error(`/mcp ${req.method} failed: errorId=${mapped.body.error.errorId} ${(error as Error)?.stack ?? String(error)}`);
      if (res.headersSent) return;
      if (mapped.status !== 503) return refuse(res, 500, `Internal error: the service log has the details under errorId ${mapped.body.error.errorId}`);
      res.setHeader('retry-after', String(mapped.retryAfterSeconds));
      refuse(res, 503, `Service Unavailable: ${mapped.body.error.message}`);
    }
  }

  private allowed(req: Request, res: Response): boolean {
    const malformed = malformedHost(req.headers.host);
    if (malformed !== null) {
      refuse(res, 400, `Bad Request: ${malformed}; send the host name (and port) the service is reached by`);
      return false;
    }
    const refused = refusedHost({ host: req.headers.host, origin: req.headers.origin }, this.config.ALLOWED_HOSTS);
    if (refused === null) return true;
    refuse(res, 403, `Forbidden: ${refused} is not an allowed host for /mcp (DNS rebinding protection); the operator allows more hosts with ALLOWED_HOSTS`);
    return false;
  }
}

/** The raw query string of the request URL, without "?". */
function queryOf(req: Request): string {
  const url = req.originalUrl ?? req.url;
  const at = url.indexOf('?');
  return at < 0 ? '' : url.slice(at + 1);
}
