import { Injectable, Logger, type INestApplication, type OnApplicationBootstrap, type Type } from '@nestjs/common';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { AppConfig, applyOpenApiDecorators, ConfigError } from '@app/common';
import { mergeObjectSchemas, shallowSchema, toJsonSchema, type JsonSchema } from './json-schema.js';
import { ServerToolsetsDto, ToolsetSelectionDto } from './mcp.dto.js';
import { META_TOOLSET } from './mcp.toolsets.js';
import type { McpDoor, ToolSpec } from './tool-spec.js';
import {
  HOW_TO_SELECT,
  parseSelection,
  resolveSelection,
  type ActiveToolsets,
  type ToolsetDeclaration,
  type ToolsetSelection,
} from './toolset-selection.js';

const SERVER_INSTRUCTIONS =
  'agent-manager creates, updates, validates, rolls back and deletes kagent agents on a Kubernetes cluster: each agent is one helm release of the Generic agent chart, ' +
  'reaching its tools through the Muster gateway within the toolset it declares. Every write takes dryRun. ' +
  'A failed call answers isError with {error: {code, message, details}}: the message says what to do instead.';

const LIST_SERVER_TOOLSETS = 'list_server_toolsets';

/** The most tools one tools/list answer holds; a longer list is paged (nextCursor), as MCP allows. */
export const TOOLS_PAGE = 100;

/** A page of a session's tools, and the cursor of the next page when there is one. */
export interface ToolsPage {
  specs: ToolSpec[];
  nextCursor?: string;
}

/** Scans no controller: the document built for the tools holds the schemas of their DTO classes only. */
class NoControllers {}

/**
 * The MCP tools and toolsets domain modules contribute (STYLE "Domains own their tools"), their
 * JSON Schemas (derived lazily from the same DTO classes as the REST door), and which of them
 * a connection selects. Tools and toolsets can be added and removed at run time: every open
 * session lists the current ones and is told `notifications/tools/list_changed`.
 */
@Injectable()
export class McpRegistry implements OnApplicationBootstrap {
  /** The tools the transport itself serves (a policy can name them as any other). */
  static readonly ownTools: readonly string[] = [LIST_SERVER_TOOLSETS];

  private readonly logger = new Logger('MCP');
  private readonly toolsets: ToolsetDeclaration[] = [META_TOOLSET];
  private readonly specs = new Map<string, ToolSpec>();
  private readonly listeners = new Set<() => void>();
  private readonly reported = new Set<string>();
  /** When the tools or toolsets last changed (this process's clock). */
  private lastChange = 0;
  private readonly fallback: ToolsetSelection;
  private described = new WeakMap<ToolSpec, Tool>();
  /** Output schemas by DTO class: the blueprints' tools (one per blueprint) share create_agent's. */
  private outputs = new Map<Type<unknown>, Tool['outputSchema']>();
  private shallowOutputs = new Map<Type<unknown>, Tool['outputSchema']>();
  private errorModel: Type<unknown> | undefined;
  private errorSchema: JsonSchema | undefined;
  private app: INestApplication | undefined;

  constructor(private readonly config: AppConfig) {
    this.fallback = parseSelection(config.MCP_DEFAULT_TOOLSETS, config.MCP_IGNORED_QUERY_KEYS);
    this.addTools([this.listServerToolsets()]);
  }

  /** After every module contributed its toolsets: a default selection naming none of them stops the start. */
  onApplicationBootstrap(): void {
    const { unknown } = resolveSelection(this.fallback, this.toolsets);
    if (unknown.length > 0) {
      throw new ConfigError(
        `invalid configuration:\n  MCP_DEFAULT_TOOLSETS=${JSON.stringify(this.config.MCP_DEFAULT_TOOLSETS)}: no toolset is named ${unknown.join(', ')}; the toolsets are ${this.toolsetNames()}`,
      );
    }
  }

  /** The app whose swagger machinery derives the tools' schemas, on first listing (setupMcp calls it). */
  attach(app: INestApplication): void {
    this.app = app;
  }

  /** The DTO class of a failed call's structuredContent (docs/contract.md §6), part of every tool's outputSchema. */
  useErrorModel(model: Type<unknown>): void {
    this.errorModel = model;
    this.errorSchema = undefined;
    this.described = new WeakMap();
    this.outputs = new Map();
    this.shallowOutputs = new Map();
  }

  addToolset(toolset: ToolsetDeclaration): void {
    if (this.toolsets.some((t) => t.name === toolset.name)) throw new Error(`MCP toolset ${toolset.name} is already registered`);
    this.toolsets.push(toolset);
    this.changed();
  }

  /** Removes a toolset and its tools. */
  removeToolset(name: string): void {
    if (name === META_TOOLSET.name) throw new Error(`MCP toolset ${name} is the transport's own`);
    const at = this.toolsets.findIndex((t) => t.name === name);
    if (at < 0) return;
    this.toolsets.splice(at, 1);
    for (const spec of [...this.specs.values()]) if (spec.toolset === name) this.specs.delete(spec.name);
    this.changed();
  }

  /** Adds tools to toolsets already added; answers a function that removes them again. */
  addTools(specs: ToolSpec[]): () => void {
    for (const spec of specs) {
      if (this.specs.has(spec.name)) throw new Error(`MCP tool ${spec.name} is already registered`);
      if (!this.toolsets.some((t) => t.name === spec.toolset)) throw new Error(`MCP tool ${spec.name}: no toolset named ${spec.toolset} (add it first)`);
    }
    for (const spec of specs) this.specs.set(spec.name, spec);
    this.changed();
    return () => this.removeTools(specs.map((s) => s.name));
  }

  removeTools(names: string[]): void {
    const removed = names.filter((name) => this.specs.delete(name));
    if (removed.length > 0) this.changed();
  }

  /** Calls `listener` after every change of the tools or toolsets; answers the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Whether the tools or toolsets changed after `time`. */
  changedSince(time: Date): boolean {
    return this.lastChange > time.getTime();
  }

  /** What a selection (a /mcp query string, or --toolsets) asks for, as the deployment reads it. */
  parse(query: string): ToolsetSelection {
    return parseSelection(query, this.config.MCP_IGNORED_QUERY_KEYS);
  }

  /** The toolsets a selection gets now. */
  resolve(selection: ToolsetSelection): ActiveToolsets {
    return resolveSelection(selection, this.toolsets, this.fallback);
  }

  /** The toolsets a connection with this query string gets; an unknown name is logged the first time it is seen. */
  select(query: string): ActiveToolsets {
    const selection = this.resolve(this.parse(query));
    const fresh = selection.unknown.filter((name) => !this.reported.has(name));
    if (fresh.length > 0) {
      fresh.forEach((name) => this.reported.add(name));
      this.logger.warn(`unknown toolset ${fresh.join(', ')} asked for (${query ? `?${query}` : 'no query'}): served without it; the toolsets are ${this.toolsetNames()}`);
    }
    return selection;
  }

  /** The tool specs of the active toolsets, in toolset order, then as added (the transport's own last). */
  specsFor(toolsets: ActiveToolsets): ToolSpec[] {
    const specs = [...this.specs.values()].sort((a, b) => Number(a.name === LIST_SERVER_TOOLSETS) - Number(b.name === LIST_SERVER_TOOLSETS));
    return this.toolsets.filter((t) => toolsets.active.includes(t.name)).flatMap((t) => specs.filter((s) => s.toolset === t.name));
  }

  /** Every tool registered now, whatever the toolsets (the registration invariant's side). */
  toolNames(): string[] {
    return [...this.specs.keys()];
  }

  /** Whether `name` is a tool that only reads (readOnlyHint); false for a name no tool has. */
  readsOnly(name: unknown): boolean {
    return typeof name === 'string' && this.specs.get(name)?.annotations.readOnlyHint === true;
  }

  /** One spec by name when its toolset is active. */
  find(name: string, toolsets: ActiveToolsets): ToolSpec | undefined {
    const spec = this.specs.get(name);
    return spec && toolsets.active.includes(spec.toolset) ? spec : undefined;
  }

  /**
   * The tools/list page after `cursor` (the first without one), or null for a cursor this service
   * did not issue. A cursor names the last tool of its page: the next page starts after that tool
   * wherever it is now, or at the page's offset when it is gone.
   */
  page(specs: ToolSpec[], cursor: string | undefined): ToolsPage | null {
    let start = 0;
    if (cursor !== undefined) {
      const after = readToolsCursor(cursor);
      if (!after) return null;
      const at = specs.findIndex((spec) => spec.name === after.name);
      start = at >= 0 ? at + 1 : Math.min(after.offset, specs.length);
    }
    const page = specs.slice(start, start + TOOLS_PAGE);
    const end = start + page.length;
    if (end >= specs.length) return { specs: page };
    return { specs: page, nextCursor: Buffer.from(JSON.stringify({ t: page[page.length - 1].name, o: end })).toString('base64url') };
  }

  /** The MCP descriptions (with JSON Schemas) of specs; schemas are derived once per spec, on first listing. */
  async describe(specs: ToolSpec[]): Promise<Tool[]> {
    const pending = specs.filter((spec) => !this.described.has(spec));
    if (pending.length > 0) await this.derive(pending);
    return specs.map((spec) => this.described.get(spec) as Tool);
  }

  /** The server's instructions, then each active toolset's under its title. */
  instructions(toolsets: ActiveToolsets): string {
    const sections = this.toolsets.filter((t) => toolsets.active.includes(t.name) && t.instructions).map((t) => `## ${t.title || t.name}\n\n${t.instructions}`);
    return [SERVER_INSTRUCTIONS, ...sections].join('\n\n');
  }

  selectionReport(toolsets: ActiveToolsets): ToolsetSelectionDto {
    return { active: [...toolsets.active], unknown: [...toolsets.unknown] };
  }

  report(toolsets: ActiveToolsets, door: McpDoor): ServerToolsetsDto {
    return {
      toolsets: this.toolsets.map((t) => ({
        name: t.name,
        title: t.title || t.name,
        description: t.description,
        default: t.default,
        always: t.always,
        active: toolsets.active.includes(t.name),
      })),
      ...this.selectionReport(toolsets),
      tools: this.specsFor(toolsets).map((spec) => spec.name),
      how_to_select: HOW_TO_SELECT[door],
    };
  }

  private toolsetNames(): string {
    return this.toolsets.map((t) => t.name).join(', ');
  }

  private changed(): void {
    this.lastChange = Date.now();
    for (const listener of this.listeners) listener();
  }

  /**
   * Builds the specs' inputSchema and outputSchema with @nestjs/swagger from the DTO classes,
   * as the OpenAPI document is built, then inlines them into self-contained JSON Schema.
   */
  private async derive(specs: ToolSpec[]): Promise<void> {
    if (!this.app) throw new Error('McpRegistry has no app to derive schemas with: mount MCP with setupMcp(app)');
    const { DocumentBuilder, SwaggerModule } = await applyOpenApiDecorators();
    const error = this.errorSchema === undefined && this.errorModel ? [this.errorModel] : [];
    const models = [...new Set<Type<unknown>>([...specs.flatMap((s) => [...s.input, s.output]), ...error])];
    const document = SwaggerModule.createDocument(this.app, new DocumentBuilder().build(), { include: [NoControllers], extraModels: models });
    const components = (document.components?.schemas ?? {}) as Record<string, JsonSchema>;
    const schemaOf = (model: Type<unknown>) => toJsonSchema({ $ref: `#/components/schemas/${model.name}` }, components);
    if (error.length > 0) this.errorSchema = { ...schemaOf(error[0]), description: 'On isError: the SPEC §6 error (code, message, details)' };
    for (const spec of specs) {
      this.described.set(spec, {
        name: spec.name,
        title: spec.title,
        description: spec.description,
        inputSchema: (spec.inputSchema ? await spec.inputSchema() : mergeObjectSchemas(spec.input.map(schemaOf))) as Tool['inputSchema'],
        outputSchema: this.outputSchema(spec, schemaOf),
        annotations: { title: spec.title, ...spec.annotations },
        ...(spec.task && { execution: { taskSupport: 'optional' as const } }),
      });
    }
  }

  /** The outputSchema of every tool answering `output` (shallow or whole): one object shared by them all. */
  private outputSchema(spec: ToolSpec, schemaOf: (model: Type<unknown>) => JsonSchema): Tool['outputSchema'] {
    const outputs = spec.shallowOutput ? this.shallowOutputs : this.outputs;
    let schema = outputs.get(spec.output);
    if (!schema) {
      const outcomes = [schemaOf(spec.output), ...(this.errorSchema ? [this.errorSchema] : [])];
      schema = { type: 'object', anyOf: spec.shallowOutput ? outcomes.map(shallowSchema) : outcomes } as Tool['outputSchema'];
      outputs.set(spec.output, schema);
    }
    return schema;
  }

  private listServerToolsets(): ToolSpec {
    return {
      name: LIST_SERVER_TOOLSETS,
      title: 'Server toolsets',
      toolset: META_TOOLSET.name,
      description:
        "Lists agent-manager's MCP toolsets with their default and always flags, which are active in this session, this session's tools, the names the selection asked for that do not exist, and how to select others. Writes nothing.",
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      input: [],
      output: ServerToolsetsDto,
      run: async (_args, { toolsets, door }) => this.report(toolsets, door),
    };
  }
}

/** A tools/list cursor's tool name and offset, or null when it is not one this service issued. */
function readToolsCursor(cursor: string): { name: string; offset: number } | null {
  try {
    const { t, o } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { t?: unknown; o?: unknown };
    if (typeof t === 'string' && Number.isSafeInteger(o) && (o as number) >= 0) return { name: t, offset: o as number };
  } catch {
    // not ours
  }
  return null;
}
