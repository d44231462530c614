import { Injectable, Logger } from '@nestjs/common';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  LoggingLevelSchema,
  SetLevelRequestSchema,
  type CallToolResult,
  type LoggingLevel,
} from '@modelcontextprotocol/sdk/types.js';
import { recordableActor, ServiceInfoService } from '@app/agents';
import { AppError, mapError, OperationContexts, type ErrorBody } from '@app/common';
import { McpCatalog } from './mcp.catalog.js';
import type { ActiveToolsets } from './toolset-selection.js';

const SEVERITY = LoggingLevelSchema.options;

/** Builds the MCP server of one session (an HTTP session or the stdio process) for its toolsets. */
@Injectable()
export class McpServerFactory {
  private readonly logger = new Logger('MCP');

  constructor(
    private readonly catalog: McpCatalog,
    private readonly serviceInfo: ServiceInfoService,
  ) {}

  create(toolsets: ActiveToolsets, door: 'mcp-http' | 'mcp-stdio'): Server {
    const tools = this.catalog.toolsFor(toolsets);
    const server = new Server(
      { name: 'agent-manager', title: 'agent-manager', version: this.serviceInfo.version },
      { capabilities: { tools: { listChanged: false } }, instructions: this.catalog.instructions(toolsets) },
    );
    // Registered after construction so this session's level is ours to read (the SDK keeps its own private).
    server.registerCapabilities({ logging: {} });
    let threshold: LoggingLevel = 'debug';
    server.setRequestHandler(SetLevelRequestSchema, (request) => {
      threshold = request.params.level;
      return {};
    });

    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map(({ tool }) => tool) }));

    server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
      const { name } = request.params;
      const entry = tools.find(({ spec }) => spec.name === name);
      if (!entry) {
        return errorResult(
          new AppError(
            'not_found',
            `no tool named ${name} in this session: the tools are ${tools.map(({ spec }) => spec.name).join(', ')}; list_server_toolsets tells which toolsets another connection URL can add`,
          ).toBody(),
        );
      }
      const args = request.params.arguments ?? {};
      const log = async (level: LoggingLevel, data: string): Promise<void> => {
        if (SEVERITY.indexOf(level) < SEVERITY.indexOf(threshold)) return;
        await extra.sendNotification({ method: 'notifications/message', params: { level, logger: 'agent-manager', data } });
      };
      const writes = !entry.spec.annotations.readOnlyHint && args.dryRun !== true;
      const target = typeof args.namespace === 'string' && typeof args.name === 'string' ? ` ${args.namespace}/${args.name}` : '';
      try {
        if (writes) await log('info', `${name}${target}: started: validating, then applying the helm release to the cluster (this can take a while)`);
        const client = server.getClientVersion()?.name;
        const result = await OperationContexts.run({ door, actor: actorOf(client), client }, () => entry.spec.run(args, { toolsets }));
        if (writes) await log('info', `${name}${target}: done`);
        return { content: [{ type: 'text', text: JSON.stringify(result, null, 2) }], structuredContent: result as Record<string, unknown> };
      } catch (error) {
        const mapped = mapError(error);
        if (mapped.unexpected) {
          this.logger.error(`errorId=${mapped.body.error.errorId} ${name}: ${(mapped.unexpected as Error)?.stack ?? String(mapped.unexpected)}`);
        }
        if (writes) await log('error', `${name}${target} failed: ${mapped.body.error.message}`);
        return errorResult(mapped.body);
      }
    });
    return server;
  }
}

/** SPEC §6 on the MCP door: isError with the error object, and its message and details as text. */
function errorResult(body: ErrorBody): CallToolResult {
  const { message, details } = body.error;
  const lines = details.filter((d) => d.message !== message).map((d) => `- ${d.path || '(arguments)'}: ${d.message}`);
  return {
    isError: true,
    content: [{ type: 'text', text: [message, ...lines].join('\n') }],
    structuredContent: body as unknown as Record<string, unknown>,
  };
}

/** Recorded on writes as who did it: the client's name from initialize, made recordable as X-Actor would be. */
function actorOf(client: string | undefined): string {
  return client ? recordableActor(`mcp:${client}`) : 'mcp';
}
