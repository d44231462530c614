import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { AgentsService, canonicalJson, CreateAgentDto, CreateResultDto } from '@app/agents';
import { type CallerAccess, defineOperation, type OperationDescriptor, OperationDoors, readInput } from '@app/doors';
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

/** How many rows one read of the catalog's sync takes. */
const SYNC_PAGE = 500;

/** What the catalog knows of one stored blueprint. */
interface Known {
  name: string;
  /** The version and body the tool was built from: a change of either rebuilds it. */
  key: string;
  /** Whether its tool is served (false: conflicted). */
  served: boolean;
}

/** One sync's changes, applied only once the store was read whole: tools to serve, names to stop serving, what is known (null: deleted). */
interface Changes {
  added: ToolSpec[];
  removed: string[];
  known: Map<string, Known | null>;
}

/**
 * Serves each healthy blueprint as its own MCP tool (toolset `blueprints`) and keeps the set in step
 * with the store: after every local write, and on every replica within a second of another's (the
 * store's blueprint generation, polled; a replica that missed changes catches up from it). A sync
 * reads only the rows written after the generation it saw last, a page at a time, and the ids only
 * when the count says some were deleted. A conflicted blueprint is not served. A changed tool is
 * bound before an old name is removed.
 */
@Injectable()
export class BlueprintCatalog implements OnModuleDestroy {
  private readonly logger = new Logger('Blueprints');
  /** Every stored blueprint by id, served or not. */
  private readonly known = new Map<string, Known>();
  /** The names of the tools served. */
  private readonly served = new Set<string>();
  private readonly reported = new Map<string, string>();
  private chain: Promise<void> = Promise.resolve();
  private seen: number | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly repository: BlueprintsRepository,
    private readonly registry: McpRegistry,
    private readonly authorizer: Authorizer,
    private readonly doors: OperationDoors,
    private readonly metrics: Metrics,
  ) {}

  /** Serves the store's blueprints now and follows the store from then on. */
  async start(): Promise<void> {
    await this.sync();
    this.timer = setInterval(() => void this.poll(), BLUEPRINT_POLL_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer) clearInterval(this.timer);
    this.registry.removeTools([...this.served]);
    this.served.clear();
    this.known.clear();
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

  /** Why each of a page of stored blueprints is conflicted now, or null (the other tools read once). */
  conflicts(records: BlueprintRecord[]): (string | null)[] {
    const others = this.otherTools();
    return records.map((record) => conflictOf(record.name, record.body, others));
  }

  /** Brings the served tools in line with the store (one sync at a time). */
  sync(): Promise<void> {
    const run = this.chain.then(() => this.apply());
    this.chain = run.catch(() => undefined);
    return run;
  }

  /**
   * After a write the store committed: the sync that serves it. Its failure is logged, never the
   * write's answer (the write stands, and the next poll serves it).
   */
  async syncAfterWrite(): Promise<void> {
    try {
      await this.sync();
    } catch (error) {
      this.logger.warn(`serving the blueprints' tools after a write failed (the next poll retries): ${(error as Error).message}`);
    }
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
    const changes: Changes = { added: [], removed: [], known: new Map() };
    const others = this.otherTools();
    for (let after = ''; ; ) {
      const records = await this.repository.writtenSince(this.seen ?? -1, after, SYNC_PAGE);
      for (const record of records) this.update(record, others, changes);
      if (records.length < SYNC_PAGE) break;
      after = records[records.length - 1].id;
    }
    const counted = this.known.size + [...changes.known.keys()].filter((id) => !this.known.has(id)).length;
    if ((await this.repository.count()) !== counted) await this.forgetDeleted(changes);
    this.serve(changes);
    this.seen = generation;
  }

  /** Applies a sync's changes at once: a name served again is unbound first, every other old name after the new tools are bound. */
  private serve({ added, removed, known }: Changes): void {
    for (const [id, entry] of known) {
      if (entry) this.known.set(id, entry);
      else this.known.delete(id);
    }
    const rebound = new Set(added.map((spec) => spec.name));
    this.registry.removeTools(removed.filter((name) => rebound.has(name)));
    this.registry.addTools(added);
    this.registry.removeTools(removed.filter((name) => !rebound.has(name)));
    for (const name of removed) this.served.delete(name);
    for (const name of rebound) this.served.add(name);
    this.metrics.setBlueprintToolsServed(this.served.size);
  }

  /** One row written since the last sync: served, rebuilt, renamed or withdrawn (conflicted). */
  private update(record: BlueprintRecord, others: Set<string>, changes: Changes): void {
    const was = changes.known.has(record.id) ? changes.known.get(record.id) : this.known.get(record.id);
    const reason = conflictOf(record.name, record.body, others);
    const key = `${record.activeVersion}:${canonicalJson(record.body)}`;
    if (was?.served && was.name === record.name && was.key === key && reason === null) return;
    if (was?.served) changes.removed.push(was.name);
    changes.known.set(record.id, { name: record.name, key, served: reason === null });
    if (reason !== null) this.reportConflict(record.name, reason);
    else changes.added.push(this.tool(record.name, normalizeBody(record.body as Record<string, unknown>)));
  }

  /** Stops serving the blueprints the store no longer holds (the count told that some were deleted). */
  private async forgetDeleted(changes: Changes): Promise<void> {
    const stored = new Set<string>();
    for (let after = ''; ; ) {
      const ids = await this.repository.ids(after, SYNC_PAGE * 10);
      ids.forEach((id) => stored.add(id));
      if (ids.length < SYNC_PAGE * 10) break;
      after = ids[ids.length - 1];
    }
    for (const [id, was] of [...this.known, ...changes.known]) {
      if (stored.has(id) || !was) continue;
      if (was.served) changes.removed.push(was.name);
      changes.known.set(id, null);
    }
  }

  private reportConflict(name: string, reason: string): void {
    if (this.reported.get(name) === reason) return;
    this.reported.set(name, reason);
    this.logger.warn(`blueprint ${name} is conflicted and not served as a tool: ${reason}`);
  }

  /** The blueprint's tool: only its open arguments; its call is create_agent's, with the blueprint recorded. */
  private tool(name: string, body: BlueprintBody): ToolSpec {
    const open = ['name', 'namespace', ...body.open].join(', ');
    const spec: Omit<ToolSpec, 'run'> = {
      name,
      title: name,
      toolset: BLUEPRINTS_TOOLSET,
      description:
        `${body.description} ` +
        `Writes: creates an agent from blueprint ${name} (a helm release of the Generic agent chart) with the blueprint's settings; you give ${open}. ` +
        'With dryRun: true it answers as the create would and changes nothing. It answers as create_agent does (its outputSchema in full).',
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      input: [],
      inputSchema: () => toolInputSchema(body),
      output: CreateResultDto,
      shallowOutput: true,
      operations: ['create_agent', `blueprint:${name}`],
    };
    return this.doors.dynamicTool(spec, this.operation(name));
  }

  /**
   * One call of a blueprint's tool, run by OperationDoors as every tool is: read the active version
   * as the store holds it now and check the caller's arguments by create_agent's rules (a fixed
   * argument's problem named, never shown), then the blueprint's grant or create_agent's in the
   * namespace, then create_agent itself with the blueprint recorded.
   */
  private operation(name: string): OperationDescriptor {
    return defineOperation({
      name,
      oneDoor: "a blueprint's MCP tool, made at run time from the stored blueprint; over REST an agent is created with create_agent",
      input: {},
      service: AgentsService,
      read: ({ args }) => this.read(name, (args ?? {}) as Record<string, unknown>),
      authorize: async (access: CallerAccess, { command }) => {
        if (!access.isAllowed(`blueprint:${name}`, command.namespace)) await access.authorize('create_agent', command);
      },
      call: (agents, { command, record }, _input, access): Promise<CreateResultDto> =>
        agents.create(access.caller, command, { blueprint: name, version: record.activeVersion, blueprintId: record.id }),
    });
  }

  /** The blueprint as stored now (gone or conflicted: refused) and the create its arguments make. */
  private async read(name: string, args: Record<string, unknown>): Promise<{ record: BlueprintRecord; command: CreateAgentDto }> {
    const record = await this.repository.find(name);
    if (!record) throw new AppError('not_found', `blueprint ${name} no longer exists: list the tools again (tools/list)`);
    if (this.conflict(record) !== null) {
      throw new AppError('conflict', `blueprint ${name} is conflicted and creates no agents: its active version no longer passes the create checks; an admin sees why in list_blueprints`);
    }
    const body = normalizeBody(record.body as Record<string, unknown>);
    const { input, violations } = callProblems(body, args);
    if (violations.length > 0) throw AppError.invalid(violations);
    return { record, command: readInput(CreateAgentDto, input).value };
  }
}
