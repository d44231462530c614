import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AgentsRepository, AgentsService, canonicalJson, type AgentDto, type AgentSpec } from '@app/agents';
import { BlueprintsService } from '@app/blueprints';
import { AppError, type Caller } from '@app/common';
import type { CallerAccess } from '@app/doors';
import { canonicalBody, canonicalDocument, readDocument, renderYaml, type FleetAgent, type FleetBlueprint, type FleetDocument, type FleetSelection } from './transfer.document.js';
import { planAgents, planBlueprints, selects, type AgentPlan, type BlueprintPlan, type StoredAgent, type StoredBlueprint } from './transfer.rules.js';
import type { ExportQueryDto, ImportItemDto, ImportRequestDto, ImportResultDto } from './transfer.dto.js';

/** The page the store is read in (the agents' and blueprints' list maximum). */
const PAGE = 100;

/** The write an item stands for, as the policy names it. */
const AGENT_WRITES = { create: 'create_agent', update: 'update_agent', prune: 'delete_agent' } as const;
const BLUEPRINT_WRITES = { create: 'create_blueprint', update: 'save_blueprint_version' } as const;

/** The optional spec fields an update clears when the document leaves them out (the document is the whole spec). */
const CLEARED: Partial<AgentSpec> = { description: '', displayName: '', systemMessage: '', labels: {}, annotations: {} };

/**
 * Agents as code (docs/contract.md §12): export writes the fleet's definitions as one document;
 * import plans that document against the store and applies each item through the services every
 * other write goes through (AgentsService: the one write runner; BlueprintsService), as the caller.
 */
@Injectable()
export class TransferService {
  constructor(
    private readonly agents: AgentsService,
    private readonly agentsRepository: AgentsRepository,
    private readonly blueprints: BlueprintsService,
  ) {}

  /** The document of what the filters pick, and its YAML: the same store gives the same bytes. */
  async export(query: ExportQueryDto): Promise<{ document: FleetDocument; yaml: string }> {
    const selection: FleetSelection = {
      ...(query.namespace?.length && { namespaces: query.namespace }),
      ...(query.label?.length && { labels: Object.fromEntries(query.label.map((l) => l.split('=', 2) as [string, string])) }),
      ...(query.blueprint && { blueprint: query.blueprint }),
    };
    const agents = (await this.activeAgents(selection)).map(agentEntry);
    const blueprints = await this.blueprintEntries(selection.blueprint, query.blueprintHistory ?? false);
    const document = canonicalDocument({ apiVersion: '', kind: '', selection, blueprints, agents });
    return { document, yaml: renderYaml(document) };
  }

  /**
   * The plan of a document against the store, applied unless `dryRun`: blueprints first (agents may
   * name them), then creates and updates, then prunes; each item authorized as the caller (a refusal
   * journaled and reported, the rest go on), each write with an idempotency key derived from the
   * document and the item, failures reported per item.
   */
  async import(access: CallerAccess, input: ImportRequestDto): Promise<ImportResultDto> {
    const doc = readDocument(input.document);
    const prune = input.prune ?? doc.prune ?? false;
    const dryRun = input.dryRun ?? false;
    const digest = createHash('sha256').update(canonicalJson(canonicalDocument({ ...doc, prune: undefined }))).digest('hex');
    const storedBlueprints = await this.storedBlueprints(doc.blueprints);
    const storedAgents = await this.storedAgents(doc, prune);
    const blueprintPlans = planBlueprints(doc.blueprints, [...storedBlueprints.values()]);
    const agentPlans = planAgents(doc.agents, storedAgents, doc.selection, prune);
    const entries = new Map(doc.agents.map((a) => [`${a.namespace}/${a.name}`, a]));
    const bodies = new Map(doc.blueprints.map((b) => [b.name, b]));
    const items: ImportItemDto[] = [];
    for (const plan of blueprintPlans) items.push(await this.blueprintItem(access, plan, bodies.get(plan.name)!, dryRun));
    for (const plan of agentPlans) {
      const key = dryRun ? '' : itemKey(digest, plan, await this.livesOf(plan));
      items.push(await this.agentItem(access, plan, entries.get(`${plan.namespace}/${plan.name}`), { dryRun, key, blueprints: storedBlueprints }));
    }
    const summary: Record<string, number> = {};
    for (const item of items) summary[item.result] = (summary[item.result] ?? 0) + 1;
    return { dryRun, prune, digest, items, summary };
  }

  private async blueprintItem(access: CallerAccess, plan: BlueprintPlan, entry: FleetBlueprint, dryRun: boolean): Promise<ImportItemDto> {
    const base: ImportItemDto = { kind: 'blueprint', name: plan.name, action: plan.action, result: 'planned', changes: plan.changes, ...(plan.reason && { reason: plan.reason }) };
    if (plan.action === 'unchanged' || plan.action === 'conflict') return { ...base, result: plan.action, ...(plan.storedVersion && { version: plan.storedVersion }) };
    const operation = BLUEPRINT_WRITES[plan.action];
    const target = { namespace: '*', name: plan.name };
    if (dryRun) return { ...base, result: access.isAllowed(operation, '*') ? 'planned' : 'refused' };
    if (!(await authorized(access, operation, target))) return { ...base, result: 'refused', error: { code: 'forbidden', message: `${operation} is not granted to ${access.caller.actor}` } };
    const body = canonicalBody(entry);
    try {
      const written =
        plan.action === 'create'
          ? await this.blueprints.create(access, { name: plan.name, ...body, note: 'imported' })
          : await this.blueprints.save(access, plan.name, { ...body, expectedVersion: plan.storedVersion, note: 'imported' });
      return { ...base, result: plan.action === 'create' ? 'created' : 'updated', version: written.activeVersion };
    } catch (error) {
      return { ...base, result: 'failed', error: errorOf(error) };
    }
  }

  private async agentItem(
    access: CallerAccess,
    plan: AgentPlan,
    entry: FleetAgent | undefined,
    options: { dryRun: boolean; key: string; blueprints: Map<string, StoredBlueprint & { id?: string }> },
  ): Promise<ImportItemDto> {
    const ref = { namespace: plan.namespace, name: plan.name };
    const base: ImportItemDto = { kind: 'agent', ...ref, action: plan.action, result: 'planned', changes: plan.changes, ...(plan.reason && { reason: plan.reason }) };
    if (plan.action === 'unchanged' || plan.action === 'conflict') return { ...base, result: plan.action, ...(plan.storedVersion && { version: plan.storedVersion }) };
    const operation = AGENT_WRITES[plan.action];
    if (options.dryRun) return { ...base, result: access.isAllowed(operation, plan.namespace) ? 'planned' : 'refused' };
    if (!(await authorized(access, operation, ref))) return { ...base, result: 'refused', error: { code: 'forbidden', message: `${operation} in namespace "${plan.namespace}" is not granted to ${access.caller.actor}` } };
    const caller: Caller = access.caller;
    try {
      if (plan.action === 'create') {
        const spec = entry!.spec as unknown as AgentSpec;
        const created = await this.agents.create(caller, { ...spec, ...ref, requestId: options.key }, await this.originFor(entry!, options.blueprints));
        return created.change ? { ...base, result: 'proposed', change: created.change.id } : { ...base, result: 'created', ...written(created.agent) };
      }
      if (plan.action === 'update') {
        const updated = await this.agents.update(caller, ref, { ...CLEARED, ...(entry!.spec as Partial<AgentSpec>), requestId: options.key, expectedVersion: plan.storedVersion }, undefined);
        return updated.change ? { ...base, result: 'proposed', change: updated.change.id } : { ...base, result: 'updated', ...written(updated.agent) };
      }
      const deleted = await this.agents.delete(caller, ref, { requestId: options.key, expectedVersion: plan.storedVersion });
      return deleted.change ? { ...base, result: 'proposed', change: deleted.change.id } : { ...base, result: 'pruned', ...written(deleted.deleted) };
    } catch (error) {
      return { ...base, result: 'failed', error: errorOf(error) };
    }
  }

  /**
   * The origin a created agent records: the document's blueprint as this store holds it now (it was
   * imported first), at the version the document names when the store has that version, else at the
   * active one. A blueprint the store does not hold is no origin.
   */
  private async originFor(entry: FleetAgent, blueprints: Map<string, StoredBlueprint & { id?: string }>) {
    if (!entry.blueprint) return undefined;
    const stored = blueprints.get(entry.blueprint.name) ?? (await this.storedBlueprint(entry.blueprint.name));
    if (!stored) return undefined;
    const version = entry.blueprint.version <= stored.latestVersion ? entry.blueprint.version : stored.activeVersion;
    return { blueprint: stored.name, version };
  }

  /** How many agents of this name the store ever recorded (a create's key then differs from the last life's create). */
  private async livesOf(plan: AgentPlan): Promise<number> {
    if (plan.action !== 'create') return 0;
    return (await this.agentsRepository.revisionsOfAllLives(plan.namespace, plan.name)).length;
  }

  /** Every active agent the selection picks, by namespace and name. */
  private async activeAgents(selection: FleetSelection): Promise<AgentDto[]> {
    const found: AgentDto[] = [];
    const [firstLabel] = Object.entries(selection.labels ?? {});
    for (const namespace of selection.namespaces?.length ? selection.namespaces : [undefined]) {
      let cursor: string | undefined;
      do {
        const page = await this.agents.list({ namespace, status: 'active', label: firstLabel && `${firstLabel[0]}=${firstLabel[1]}`, blueprint: selection.blueprint, limit: PAGE, cursor });
        found.push(...page.items.filter((agent) => selects(selection, storedOf(agent))));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
    }
    return found;
  }

  /** The agents an import compares with: those the document lists, and with prune those of its selection. */
  private async storedAgents(doc: FleetDocument, prune: boolean): Promise<StoredAgent[]> {
    const byKey = new Map<string, StoredAgent>();
    for (const entry of doc.agents) {
      const agent = await this.agentsRepository.findActive(entry.namespace, entry.name);
      if (agent) byKey.set(`${agent.namespace}/${agent.name}`, { namespace: agent.namespace, name: agent.name, version: agent.version, spec: { ...agent.spec }, origin: agent.origin });
    }
    if (prune) for (const agent of await this.activeAgents(doc.selection)) byKey.set(`${agent.namespace}/${agent.name}`, storedOf(agent));
    return [...byKey.values()];
  }

  private async storedBlueprints(entries: FleetBlueprint[]): Promise<Map<string, StoredBlueprint>> {
    const found = new Map<string, StoredBlueprint>();
    for (const entry of entries) {
      const stored = await this.storedBlueprint(entry.name);
      if (stored) found.set(entry.name, stored);
    }
    return found;
  }

  private async storedBlueprint(name: string): Promise<StoredBlueprint | null> {
    try {
      const blueprint = await this.blueprints.get(name);
      return { name, activeVersion: blueprint.activeVersion, latestVersion: blueprint.latestVersion, body: canonicalBody(blueprint.body) };
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found') return null;
      throw error;
    }
  }

  /** The blueprints of an export: the one named, else every one, by name; with `history` each stored version. */
  private async blueprintEntries(only: string | undefined, history: boolean): Promise<FleetBlueprint[]> {
    const names: string[] = [];
    if (only) names.push(only);
    else {
      let cursor: string | undefined;
      do {
        const page = await this.blueprints.list({ limit: PAGE, cursor });
        names.push(...page.items.map((b) => b.name));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
    }
    const entries: FleetBlueprint[] = [];
    for (const name of names) {
      const stored = await this.storedBlueprint(name);
      if (!stored) continue;
      const versions = history ? (await this.blueprints.versions(name)).items : [];
      entries.push({
        name,
        version: stored.activeVersion,
        ...stored.body,
        ...(history && { history: versions.map((v) => ({ version: v.version, ...(v.note && { note: v.note }), ...canonicalBody(v) })).sort((a, b) => a.version - b.version) }),
      });
    }
    return entries;
  }
}

/** An agent's entry: what it is, never how it got there (no values, revisions, journal, times). */
function agentEntry(agent: AgentDto): FleetAgent {
  return {
    namespace: agent.namespace,
    name: agent.name,
    version: agent.version,
    ...(agent.blueprint && { blueprint: { name: agent.blueprint.blueprint, version: agent.blueprint.version } }),
    chart: { name: agent.chart.name, version: agent.chart.version ?? null },
    spec: { ...agent.spec },
  };
}

function storedOf(agent: AgentDto): StoredAgent {
  return { namespace: agent.namespace, name: agent.name, version: agent.version, spec: { ...agent.spec }, origin: agent.blueprint && { blueprint: agent.blueprint.blueprint, version: agent.blueprint.version } };
}

/**
 * The idempotency key of one item's write: the same document and item give the same key, so an
 * import retried after a write whose outcome was uncertain replays or settles it rather than
 * repeating it. The item includes what the write starts from (the version an update or prune
 * planned on, the lives a create follows): the same document applied again after the agent was
 * changed or deleted meanwhile is a new write, not the replay of an answer kept from before.
 */
function itemKey(digest: string, plan: AgentPlan, lives: number): string {
  const item = createHash('sha256').update(`${plan.action}\n${plan.namespace}\n${plan.name}\n${plan.storedVersion ?? 0}\n${lives}`).digest('hex');
  return `import-${digest.slice(0, 32)}-${item.slice(0, 32)}`;
}

function written(agent: AgentDto | null): Pick<ImportItemDto, 'operationId' | 'version'> {
  return agent ? { ...(agent.lastOperation && { operationId: agent.lastOperation.id }), version: agent.version } : {};
}

/** Authorizes one item as the caller: a refusal is journaled (as every refusal) and reported, not thrown. */
async function authorized(access: CallerAccess, operation: string, target: { namespace: string; name: string }): Promise<boolean> {
  try {
    await access.authorize(operation, target);
    return true;
  } catch (error) {
    if (error instanceof AppError && error.code === 'forbidden') return false;
    throw error;
  }
}

function errorOf(error: unknown): { code: string; message: string } {
  if (error instanceof AppError) return { code: error.code, message: error.message };
  return { code: 'internal', message: (error as Error).message };
}
