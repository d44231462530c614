import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { AgentAccess, AgentsRepository, AgentsService, canonicalJson, CreateAgentDto, CreateResultDto, readInput, recorded } from '@app/agents';
import { Authorizer } from '@app/auth';
import { AppError } from '@app/common';
import { McpRegistry, type ToolSpec } from '@app/mcp';
import { Metrics } from '@app/telemetry';
import { callProblems, conflictOf, normalizeBody, type BlueprintBody } from './blueprint.rules.js';
import { toolInputSchema } from './blueprint.schema.js';
import type { BlueprintRecord } from './blueprints.records.js';
import { BlueprintsRepository } from './blueprints.repository.js';

/** How often a replica reads the blueprints' generation to learn of another replica's change. */
export const BLUEPRINT_POLL_MS = 1000;

/** The toolset every healthy blueprint's tool is served in (docs/contract.md §9). */
export const BLUEPRINTS_TOOLSET = 'blueprints';

interface Served {
  /** The version and body the tool was built from: a change of either rebuilds it. */
  key: string;
}

/**
 * Serves each healthy blueprint as its own MCP tool (toolset `blueprints`) and keeps the set in step
 * with the store: after every local write, and on every replica within a second of another's (the
 * store's blueprint generation, polled; a replica that missed changes catches up from it). A
 * conflicted blueprint is not served. A changed tool is bound before an old name is removed.
 */
@Injectable()
export class BlueprintCatalog implements OnModuleDestroy {
  private readonly logger = new Logger('Blueprints');
  private readonly served = new Map<string, Served>();
  private readonly reported = new Map<string, string>();
  private readonly access: AgentAccess;
  private chain: Promise<void> = Promise.resolve();
  private seen: number | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly repository: BlueprintsRepository,
    private readonly registry: McpRegistry,
    private readonly authorizer: Authorizer,
    private readonly agents: AgentsService,
    agentsRepository: AgentsRepository,
    private readonly metrics: Metrics,
  ) {
    this.access = new AgentAccess(authorizer, agentsRepository);
  }

  /** Serves the store's blueprints now and follows the store from then on. */
  async start(): Promise<void> {
    await this.sync();
    this.timer = setInterval(() => void this.poll(), BLUEPRINT_POLL_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer) clearInterval(this.timer);
    this.registry.removeTools([...this.served.keys()]);
    this.served.clear();
    this.metrics.setBlueprintToolsServed(0);
  }

  /** Every tool name the service serves that is not a blueprint's: a blueprint may not take one. */
  otherTools(): Set<string> {
    return new Set([...this.registry.toolNames(), ...this.authorizer.operations].filter((name) => !this.served.has(name)));
  }

  /** Why a stored blueprint is conflicted now, or null (checked at start and on every change). */
  conflict(record: BlueprintRecord): string | null {
    return conflictOf(record.name, record.body, this.otherTools());
  }

  /** Brings the served tools in line with the store (one sync at a time). */
  sync(): Promise<void> {
    const run = this.chain.then(() => this.apply());
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async poll(): Promise<void> {
    try {
      if ((await this.repository.generation()) !== this.seen) await this.sync();
    } catch (error) {
      this.logger.debug(`reading the blueprints' generation failed: ${(error as Error).message}`);
    }
  }

  private async apply(): Promise<void> {
    const generation = await this.repository.generation();
    const records = await this.repository.list();
    const others = this.otherTools();
    const healthy = new Map<string, BlueprintRecord>();
    for (const record of records) {
      const reason = conflictOf(record.name, record.body, others);
      if (reason === null) healthy.set(record.name, record);
      else this.reportConflict(record.name, reason);
    }
    for (const [name, record] of healthy) {
      const key = `${record.activeVersion}:${canonicalJson(record.body)}`;
      const current = this.served.get(name);
      if (current?.key === key) continue;
      if (current) this.registry.removeTools([name]);
      this.registry.addTools([this.tool(name, normalizeBody(record.body as Record<string, unknown>))]);
      this.served.set(name, { key });
    }
    for (const name of [...this.served.keys()].filter((n) => !healthy.has(n))) {
      this.registry.removeTools([name]);
      this.served.delete(name);
    }
    this.metrics.setBlueprintToolsServed(this.served.size);
    this.seen = generation;
  }

  private reportConflict(name: string, reason: string): void {
    if (this.reported.get(name) === reason) return;
    this.reported.set(name, reason);
    this.logger.warn(`blueprint ${name} is conflicted and not served as a tool: ${reason}`);
  }

  /** The blueprint's tool: only its open arguments; its call is create_agent's, with the blueprint recorded. */
  private tool(name: string, body: BlueprintBody): ToolSpec {
    const open = ['name', 'namespace', ...body.open].join(', ');
    const spec: ToolSpec = {
      name,
      title: name,
      toolset: BLUEPRINTS_TOOLSET,
      description:
        `${body.description} ` +
        `Writes: creates an agent from blueprint ${name} (a helm release of the Generic agent chart) with the blueprint's settings; you give ${open}. ` +
        'With dryRun: true it answers as the create would and changes nothing.',
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      input: [],
      inputSchema: () => toolInputSchema(body),
      output: CreateResultDto,
      operations: ['create_agent', `blueprint:${name}`],
      run: (args) => this.call(name, args),
    };
    return recorded(spec, this.access);
  }

  /**
   * One call of a blueprint's tool: the active version as the store holds it now, the caller's
   * arguments checked by create_agent's rules (a fixed argument's problem named, never shown),
   * create_agent's authorization in the namespace, then create_agent itself.
   */
  async call(name: string, args: Record<string, unknown>): Promise<CreateResultDto> {
    const record = await this.repository.find(name);
    if (!record) throw new AppError('not_found', `blueprint ${name} no longer exists: list the tools again (tools/list)`);
    if (this.conflict(record) !== null) {
      throw new AppError('conflict', `blueprint ${name} is conflicted and creates no agents: its active version no longer passes the create checks; an admin sees why in list_blueprints`);
    }
    const body = normalizeBody(record.body as Record<string, unknown>);
    const { input, violations } = callProblems(body, args);
    if (violations.length > 0) throw AppError.invalid(violations);
    const command = readInput(CreateAgentDto, input).value;
    if (!this.authorizer.isAllowed(this.access.principal(), `blueprint:${name}`, command.namespace)) await this.access.authorize('create_agent', command);
    return this.agents.create(command, { blueprint: name, version: record.activeVersion, blueprintId: record.id });
  }
}
