import { Injectable, Logger, type INestApplication, type Type } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { ErrorResponseDto } from '@app/agents';
import { AppConfig, ConfigError } from '@app/common';
import { AgentsTools } from './agents.tools.js';
import { mergeObjectSchemas, toJsonSchema, type JsonSchema } from './json-schema.js';
import { ServerToolsetsDto, ToolsetSelectionDto } from './mcp.dto.js';
import { TOOLSETS } from './mcp.toolsets.js';
import type { ToolSpec } from './tool-spec.js';
import { HOW_TO_SELECT, parseSelection, resolveSelection, type ActiveToolsets, type ToolsetSelection } from './toolset-selection.js';

const SERVER_INSTRUCTIONS =
  'agent-manager creates, updates, validates, rolls back and deletes kagent agents on a Kubernetes cluster: each agent is one helm release of the Generic agent chart, ' +
  'reaching its tools through the Muster gateway within the toolset it declares. Every write takes dryRun. ' +
  'A failed call answers isError with {error: {code, message, details}}: the message says what to do instead.';

/** Scans no controller: the document built for the tools holds the schemas of their DTO classes only. */
class NoControllers {}

/**
 * The MCP tools and toolsets, their JSON Schemas (derived from the same DTO classes as the REST
 * door), and which of them a connection's URL selects.
 */
@Injectable()
export class McpCatalog {
  private readonly logger = new Logger('MCP');
  readonly specs: ToolSpec[];
  private readonly fallback: ToolsetSelection;
  private readonly reported = new Set<string>();
  private tools: Map<string, Tool> | null = null;

  constructor(
    agentsTools: AgentsTools,
    private readonly config: AppConfig,
  ) {
    this.specs = [...agentsTools.list(), this.listServerToolsets()];
    this.fallback = parseSelection(config.MCP_DEFAULT_TOOLSETS, config.MCP_IGNORED_QUERY_KEYS);
    const { unknown } = resolveSelection(this.fallback, TOOLSETS);
    if (unknown.length > 0) {
      throw new ConfigError(
        `invalid configuration:\n  MCP_DEFAULT_TOOLSETS=${JSON.stringify(config.MCP_DEFAULT_TOOLSETS)}: no toolset is named ${unknown.join(', ')}; the toolsets are ${TOOLSETS.map((t) => t.name).join(', ')}`,
      );
    }
  }

  /**
   * Builds every tool's inputSchema and outputSchema with @nestjs/swagger from the DTO classes,
   * as the OpenAPI document is built, then inlines them into self-contained JSON Schema.
   */
  deriveSchemas(app: INestApplication): void {
    const models = [...new Set<Type<unknown>>([...this.specs.flatMap((s) => [...s.input, s.output]), ErrorResponseDto])];
    const document = SwaggerModule.createDocument(app, new DocumentBuilder().build(), { include: [NoControllers], extraModels: models });
    const components = (document.components?.schemas ?? {}) as Record<string, JsonSchema>;
    const schemaOf = (model: Type<unknown>) => toJsonSchema({ $ref: `#/components/schemas/${model.name}` }, components);
    const error = { ...schemaOf(ErrorResponseDto), description: 'On isError: the SPEC §6 error (code, message, details)' };
    this.tools = new Map(
      this.specs.map((spec) => [
        spec.name,
        {
          name: spec.name,
          title: spec.title,
          description: spec.description,
          inputSchema: mergeObjectSchemas(spec.input.map(schemaOf)) as Tool['inputSchema'],
          outputSchema: { type: 'object', anyOf: [schemaOf(spec.output), error] } as Tool['outputSchema'],
          annotations: { title: spec.title, ...spec.annotations },
        },
      ]),
    );
  }

  /** The toolsets a connection with this query string gets; an unknown name is logged the first time it is seen. */
  select(query: string): ActiveToolsets {
    const selection = resolveSelection(parseSelection(query, this.config.MCP_IGNORED_QUERY_KEYS), TOOLSETS, this.fallback);
    const fresh = selection.unknown.filter((name) => !this.reported.has(name));
    if (fresh.length > 0) {
      fresh.forEach((name) => this.reported.add(name));
      this.logger.warn(
        `unknown toolset ${fresh.join(', ')} asked for (${query ? `?${query}` : 'no query'}): served without it; the toolsets are ${TOOLSETS.map((t) => t.name).join(', ')}`,
      );
    }
    return selection;
  }

  /** The tool specs and their MCP descriptions of the active toolsets, in toolset order. */
  toolsFor(toolsets: ActiveToolsets): { spec: ToolSpec; tool: Tool }[] {
    if (!this.tools) throw new Error('McpCatalog.deriveSchemas(app) has not run: mount MCP with setupMcp(app)');
    const tools = this.tools;
    return TOOLSETS.filter((t) => toolsets.active.includes(t.name)).flatMap((t) =>
      this.specs.filter((s) => s.toolset === t.name).map((spec) => ({ spec, tool: tools.get(spec.name) as Tool })),
    );
  }

  /** The server's instructions, then each active toolset's under its title. */
  instructions(toolsets: ActiveToolsets): string {
    const sections = TOOLSETS.filter((t) => toolsets.active.includes(t.name) && t.instructions).map((t) => `## ${t.title || t.name}\n\n${t.instructions}`);
    return [SERVER_INSTRUCTIONS, ...sections].join('\n\n');
  }

  selectionReport(toolsets: ActiveToolsets): ToolsetSelectionDto {
    return { active: [...toolsets.active], unknown: [...toolsets.unknown] };
  }

  report(toolsets: ActiveToolsets): ServerToolsetsDto {
    return {
      toolsets: TOOLSETS.map((t) => ({
        name: t.name,
        title: t.title || t.name,
        description: t.description,
        default: t.default,
        always: t.always,
        active: toolsets.active.includes(t.name),
      })),
      ...this.selectionReport(toolsets),
      tools: this.toolsFor(toolsets).map(({ spec }) => spec.name),
      how_to_select: HOW_TO_SELECT,
    };
  }

  private listServerToolsets(): ToolSpec {
    return {
      name: 'list_server_toolsets',
      title: 'Server toolsets',
      toolset: 'meta',
      description:
        "Lists agent-manager's MCP toolsets with their default and always flags, which are active in this session, this session's tools, the names the URL asked for that do not exist, and how to reconnect for others. Writes nothing.",
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      input: [],
      output: ServerToolsetsDto,
      run: async (_args, { toolsets }) => this.report(toolsets),
    };
  }
}
