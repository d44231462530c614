import { Inject, Injectable, Optional } from '@nestjs/common';
import { append, AppConfig, AppError, listedProblems, type Caller, type ErrorDetail } from '@app/common';
import { ChartSources, HelmClient, type ChartSource, type HistoryEntry, type ReleaseInfo, type ReleaseRef } from '@app/helm';
import { KubeClient, type LiveAgent } from '@app/kube';
import { readLive, type LiveReader } from '../cluster/live-agent.js';
import { toolsetWarnings } from '@app/toolset';
import type { ValidateCommand } from '../api/validate-command.js';
import type { AgentRefDto, CreateAgentDto, DeleteAgentDto, ListAgentsQueryDto, ListOperationsQueryDto, RevisionsQueryDto, RollbackAgentDto, UpdateAgentDto } from '../api/requests.dto.js';
import type { AgentWithLastOperation } from '../persistence/records.js';
import { AgentsRepository } from '../persistence/agents.repository.js';
import type {
  AgentDto,
  AgentPageDto,
  AuditedOperationDto,
  CreateResultDto,
  DeleteResultDto,
  OperationPageDto,
  RevisionListDto,
  RollbackResultDto,
  StatusDto,
  UpdateResultDto,
  ValidateResultDto,
} from '../api/responses.dto.js';
import { pickSpec, toChartValues, type AgentOrigin, type AgentSpec, type ChartValues } from '../domain/agent-spec.js';
import { ChangeGate, type Proposal } from '../changes/change-gate.js';
import { chartIdentity } from '../domain/chart-identity.js';
import { chartMajor } from '../domain/chart-migrations.js';
import { agentView, problems, revisionView } from '../api/views.js';
import { decodeCursor, encodeCursor } from '../api/cursors.js';
import { foldStatus, type RevisionFacts } from '../domain/agent-status.js';
import { decodeOperationCursor, encodeOperationCursor, operationView, shownTo, type JournalReader } from '../persistence/journal.records.js';
import { forCaller } from '@app/doors';
import { ManifestReader } from '../cluster/manifest-reader.js';
import { WriteRunner } from '../runner/write-runner.js';
import { createAgent } from '../use-cases/create-agent.js';
import { nameTaken } from '../use-cases/checks.js';
import { deleteAgent } from '../use-cases/delete-agent.js';
import { rollbackAgent } from '../use-cases/rollback-agent.js';
import { updateAgent } from '../use-cases/update-agent.js';
import { WATCHED_FLEET, type WatchedFleet } from '../reconcile/watched-fleet.js';
import { PresetSource } from '../presets/preset-source.js';
import { ModelConfigCheck, type ModelConfigVerdict } from '../model-configs/model-config-check.js';

/**
 * Every agent operation, once. The REST controller and the MCP tools are thin doors onto these
 * methods: they parse the request into its command, set the operation context, and get the
 * answer or an AppError. Writes are use cases run by the one write runner, for the caller of the call.
 */
@Injectable()
export class AgentsService {
  constructor(
    private readonly repository: AgentsRepository,
    private readonly helm: HelmClient,
    @Inject(KubeClient) private readonly kube: LiveReader,
    private readonly runner: WriteRunner,
    /** Finds the Agent in a rendered manifest off the main thread (large manifests take seconds). */
    private readonly manifests: ManifestReader,
    private readonly config: AppConfig,
    /** The watched releases and Agents status answers from when they are synced (reconcile/watched-fleet.ts). */
    @Optional() @Inject(WATCHED_FLEET) private readonly fleet?: WatchedFleet,
    /** Muster's presets (MUSTER_PRESETS): what a toolset's preset: selectors are checked against. */
    @Optional() private readonly presets?: PresetSource,
    /** Resolves an agent's own chart when a write must keep it (chartOf). */
    @Optional() private readonly charts?: ChartSources,
    /** Checks a write's modelConfig against the namespace's ModelConfigs (absent in suites without a cluster module: not checked). */
    @Optional() private readonly modelConfigs?: ModelConfigCheck,
    /** Makes a write an approval rule selects a proposal (docs/approvals.md); absent: every write runs. */
    @Optional() private readonly changes?: ChangeGate,
  ) {}

  /** `scope.namespaceLike`: the namespaces the caller may list (SQL LIKE operands), applied in SQL so no page or cursor shows others. */
  async list(input: ListAgentsQueryDto, scope: { namespaceLike?: string[] } = {}): Promise<AgentPageDto> {
    const status = input.status ?? 'active';
    const page = await this.repository.listPage({
      namespace: input.namespace,
      namespaceLike: scope.namespaceLike,
      state: status === 'all' ? undefined : status,
      label: input.label,
      blueprint: input.blueprint,
      chartName: input.chartName,
      chartVersion: input.chartVersion,
      after: input.cursor ? decodeCursor(input.cursor) : undefined,
      limit: input.limit ?? 20,
    });
    const last = page.items.at(-1);
    return { items: page.items.map((agent) => agentView(agent, agent.lastOperation)), nextCursor: page.more && last ? encodeCursor(last) : null };
  }

  /**
   * The audit trail, newest first; `scope.namespacePatterns`: the namespaces the caller may read it in;
   * `scope.reader`: who reads it (someone else's refusals without their groups and grants); everything when absent.
   */
  async operations(input: ListOperationsQueryDto, scope: { namespacePatterns?: string[]; reader?: JournalReader } = {}): Promise<OperationPageDto> {
    const page = await this.repository.operationsPage({
      subject: input.subject,
      namespace: input.namespace,
      name: input.name,
      operation: input.operation,
      outcome: input.outcome,
      since: input.since ? new Date(input.since) : undefined,
      until: input.until ? new Date(input.until) : undefined,
      namespacePatterns: scope.namespacePatterns,
      after: input.cursor ? decodeOperationCursor(input.cursor) : undefined,
      limit: input.limit ?? 50,
    });
    const last = page.items.at(-1);
    const { reader } = scope;
    const shown = reader ? page.items.map((op) => shownTo(op, reader)) : page.items;
    return { items: shown.map(operationView), nextCursor: page.more && last ? encodeOperationCursor(last) : null };
  }

  /**
   * One journal entry (a write's state while helm runs and after, or a refusal); `scope.visible`:
   * whether the caller may read the journal in the entry's namespace. An entry outside it is
   * answered as one that does not exist: its id tells nothing.
   */
  async operation(id: string, scope: { visible: (namespace: string) => boolean; reader?: JournalReader }): Promise<AuditedOperationDto> {
    const entry = await this.repository.operationById(id);
    if (!entry || !scope.visible(entry.namespace)) {
      throw new AppError('not_found', `no operation ${id} in the journal you may read: a write answers its id as lastOperation.id; list_operations (GET /api/v1/operations) lists the entries you may read`);
    }
    return operationView(scope.reader ? shownTo(entry, scope.reader) : entry);
  }

  async get({ namespace, name }: AgentRefDto): Promise<AgentDto> {
    const agent = await this.require(namespace, name);
    return agentView(agent, agent.lastOperation);
  }

  /** `origin`: the blueprint whose tool asks (its name and active version), recorded with the agent. */
  async create(caller: Caller, input: CreateAgentDto, origin?: AgentOrigin): Promise<CreateResultDto> {
    const warnings = this.checkPresets(input.toolset);
    const ref = { namespace: input.namespace, name: input.name };
    const proposed = await this.proposed<CreateResultDto>(caller, 'create_agent', ref, input.dryRun, () => ({
      ...ref, input: { ...input }, origin: origin && { ...origin },
      dryRun: async () => {
        const answer = withWarnings(await this.runner.run(caller, createAgent({ ...input, dryRun: true }, origin)), warnings);
        return { answer, plannedVersion: null, before: null, after: answer.values, warnings: answer.warnings };
      },
      render: (values) => this.render(ref, values),
    }));
    if (proposed) return proposed;
    return withWarnings(await this.runner.run(caller, createAgent(input, origin)), warnings);
  }

  /** `origin`: an upgrade of a blueprint's holder to another of its versions. */
  async update(caller: Caller, ref: AgentRefDto, input: UpdateAgentDto, origin?: AgentOrigin): Promise<UpdateResultDto> {
    const warnings = this.checkPresets(input.toolset);
    const chart = await this.chartOf(ref);
    const proposed = await this.proposed<UpdateResultDto>(caller, 'update_agent', ref, input.dryRun, () => ({
      ...ref, input: { ...input }, origin: origin && { ...origin },
      dryRun: async () => {
        const answer = withWarnings(await this.runner.run(caller, updateAgent(ref, { ...input, dryRun: true }, origin), { chart }), warnings);
        return { answer, plannedVersion: answer.agent.version, before: answer.before, after: answer.after, warnings: answer.warnings };
      },
      render: (values) => this.render(ref, values, chart),
    }));
    if (proposed) return proposed;
    return withWarnings(await this.runner.run(caller, updateAgent(ref, input, origin), { chart }), warnings);
  }

  /**
   * The write as a proposal when an approval rule selects it (docs/approvals.md); undefined when
   * it runs now. The gate decides on the operation and namespace; it is handed the write only
   * when a rule selected it.
   */
  private async proposed<A extends object>(caller: Caller, operation: string, ref: AgentRefDto, dryRun: boolean | undefined, write: () => Omit<Proposal, 'operation'>): Promise<A | undefined> {
    const rule = this.changes?.ruleFor(caller, operation, ref.namespace, dryRun);
    return rule && this.changes?.propose<A>(caller, rule, { operation, ...write() });
  }

  /** The manifests `values` render to with the chart a write would use ('' for none): a proposal's diff. */
  private async render({ namespace, name }: AgentRefDto, values: object | null, chart?: ChartSource): Promise<string> {
    if (!values) return '';
    return this.helm.template({ namespace, name }, chart ?? (await this.runner.chart()), values as unknown as ChartValues);
  }

  /**
   * The chart a write to an existing agent uses: the configured one, unless the agent runs another
   * major of it (a rollout moved it to 1.x while 0.x is configured, or back): then its own, so a
   * write never moves an agent across majors (only a rollout does, without a gap).
   */
  private async chartOf({ namespace, name }: AgentRefDto): Promise<ChartSource | undefined> {
    const agent = await this.repository.findActive(namespace, name);
    if (!agent?.chart.version || !this.charts) return undefined;
    const configured = chartIdentity(await this.runner.chart());
    if (!configured.version || chartMajor(configured.version) === chartMajor(agent.chart.version)) return undefined;
    return this.charts.resolve(agent.chartRef, agent.chart.version);
  }

  /**
   * The presets a toolset being written names, against the installation's (a service check: they are
   * runtime state): an unknown one is refused in Muster's words; while none are read, warnings say
   * which were not checked. A toolset the write does not send is not checked again.
   */
  private checkPresets(toolset: unknown): ErrorDetail[] {
    const { refusals, warnings } = this.presets?.check(toolset) ?? { refusals: [], warnings: [] };
    if (refusals.length > 0) throw AppError.invalid(problems(refusals));
    return warnings;
  }

  async delete(caller: Caller, ref: AgentRefDto, input: DeleteAgentDto): Promise<DeleteResultDto> {
    const proposed = await this.proposed<DeleteResultDto>(caller, 'delete_agent', ref, input.dryRun, () => ({
      ...ref, input: { ...input },
      dryRun: async () => {
        const answer = await this.runner.run(caller, deleteAgent(ref, { ...input, dryRun: true }));
        return { answer, plannedVersion: answer.deleted.version, before: answer.deleted.values, after: null, warnings: [] };
      },
      render: (values) => this.render(ref, values),
    }));
    return proposed ?? this.runner.run(caller, deleteAgent(ref, input));
  }

  async rollback(caller: Caller, ref: AgentRefDto, input: RollbackAgentDto): Promise<RollbackResultDto> {
    const chart = await this.chartOf(ref);
    const proposed = await this.proposed<RollbackResultDto>(caller, 'rollback_agent', ref, input.dryRun, () => ({
      ...ref, input: { ...input },
      dryRun: async () => {
        const answer = await this.runner.run(caller, rollbackAgent(ref, { ...input, dryRun: true }), { chart });
        return { answer, plannedVersion: answer.agent.version, before: answer.before, after: answer.after, warnings: [] };
      },
      render: (values) => this.render(ref, values, chart),
    }));
    return proposed ?? this.runner.run(caller, rollbackAgent(ref, input), { chart });
  }

  /** Every violation of a create or update, plus what helm would render; never writes. */
  async validate(command: ValidateCommand): Promise<ValidateResultDto> {
    const { input } = command;
    const violations = [...command.violations];
    const mode = input.mode ?? 'create';
    let spec: Partial<AgentSpec> = pickSpec(input);
    const named = !violations.some((v) => v.path === 'name' || v.path === 'namespace');
    // A create's required fields were read as create_agent reads them (readValidateCommand); whether the name is free, as its check decides it.
    const taken = mode === 'create' && named ? await nameTaken(this.repository, input.namespace, input.name) : null;
    if (taken) violations.push({ path: 'name', message: taken.message });
    const found = mode === 'update' && named ? await this.repository.findActive(input.namespace, input.name) : null;
    if (mode === 'update' && named && !found) {
      violations.push({ path: 'name', message: `agent ${input.namespace}/${input.name} does not exist: validate a create (mode: "create") instead` });
    } else if (found) {
      spec = { ...found.spec, ...spec };
    }
    const presets = violations.some((v) => v.path.startsWith('toolset')) ? undefined : this.presets?.check(input.toolset);
    append(violations, problems(presets?.refusals ?? []));
    const warnings = Array.isArray(spec.toolset) && violations.length === 0 ? [...problems(toolsetWarnings(spec.toolset)), ...(presets?.warnings ?? [])] : [];
    const model = mode === 'update' && !found ? {} : await this.modelConfigVerdict(input.namespace, input.modelConfig, mode === 'create' ? undefined : found?.spec.modelConfig, violations);
    if (model.violation) violations.push(model.violation);
    if (model.warning) warnings.push(model.warning);
    let manifests: string | null = null;
    if (violations.length === 0) {
      try {
        manifests = await this.helm.template({ namespace: input.namespace, name: input.name }, await this.runner.chart(), toChartValues(spec as AgentSpec));
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== 'invalid_request') throw error;
        append(violations, error.details.length > 0 ? error.details : [{ path: 'values', message: error.message }]);
      }
    }
    return { valid: violations.length === 0, violations: listedProblems(violations), warnings: listedProblems(warnings), manifests };
  }

  /**
   * The current agent's revisions, or with `life: 'all'` those of every agent that had the name
   * (deleted ones included), each marked with its life. Either way `lives` lists every agent of the name.
   */
  async revisions({ namespace, name }: AgentRefDto, query: RevisionsQueryDto = {}): Promise<RevisionListDto> {
    const lives = await this.repository.revisionsOfAllLives(namespace, name);
    const active = lives.find((l) => l.agent.state === 'active');
    if (!active && (query.life !== 'all' || lives.length === 0)) {
      if (lives.length === 0) throw AppError.notFound(namespace, name);
      throw new AppError('not_found', `agent ${namespace}/${name} does not exist now; ${lives.length} earlier agent(s) of this name were deleted: read their revisions with life=all`);
    }
    const shown = query.life === 'all' ? lives : lives.filter((l) => l === active);
    return {
      namespace,
      name,
      current: active?.agent.revision ?? null,
      lives: lives.map((l, at) => ({
        life: at + 1,
        agentId: l.agent.id,
        state: l.agent.state,
        createdAt: l.agent.createdAt.toISOString(),
        deletedAt: l.agent.deletedAt?.toISOString() ?? null,
        revisions: l.agent.revision,
      })),
      items: shown.flatMap((l) => l.revisions.map((r) => revisionView(r, lives.indexOf(l) + 1))),
    };
  }

  /**
   * The verdict folded from the release, the live Agent's conditions and any drift. Reads the cluster, never writes.
   * While the current revision is pending or failed, drift is measured against the last deployed revision too.
   * When the cluster cannot be read, `caller.admin` reads helm's words in the message, others the class and a reference.
   */
  async status({ namespace, name }: AgentRefDto, caller: { admin: boolean }): Promise<StatusDto> {
    const agent = await this.require(namespace, name);
    try {
      const watched = this.watched(agent);
      const seen = watched && (await this.fold(agent, watched.info, watched.live, caller));
      // Drift seen in the watches is checked against the cluster itself: a write's release can arrive before its Agent does.
      if (seen && seen.drift.length === 0) return seen;
      return await this.fold(agent, await this.helm.status({ namespace, name }), undefined, caller);
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'backend_error') throw error;
      const shown = (forCaller(error, caller.admin) as AppError).message;
      return { namespace, name, verdict: 'unknown', message: `The cluster could not be read: ${shown}`, releaseStatus: null, releaseRevision: null, conditions: [], drift: [] };
    }
  }

  /** The verdict from the release helm holds and the live Agent (read from the cluster when not given). */
  private async fold(agent: AgentWithLastOperation, info: ReleaseInfo | null, live: LiveAgent | null | undefined, caller: { admin: boolean }): Promise<StatusDto> {
    const { namespace, name } = agent;
    const release = { namespace, name };
    const appliedAgent = await this.manifests.agentIn(info?.manifest ?? '');
    const [liveAgent, deployed] = await Promise.all([
      live !== undefined ? live : readLive(this.kube, appliedAgent, namespace, name),
      info ? this.lastDeployed(release, info, agent.id) : null,
    ]);
    const folded = foldStatus({
      namespace,
      name,
      storeRevision: agent.revision,
      storeValues: { ...agent.values },
      // helm's own description of a pending or failed revision is helm's words: admins read them (README).
      release: info ? { status: info.status, revision: info.revision, description: caller.admin ? info.description : undefined } : null,
      releaseValues: info?.values ?? null,
      appliedAgent,
      liveAgent,
      deployed,
    });
    return { namespace, name, ...folded, releaseStatus: info?.status ?? null, releaseRevision: info?.revision ?? null };
  }

  /**
   * The release and live Agent as the watches hold them, when they can answer for the caller: synced,
   * the release deployed at (or past) the revision the store recorded, and the reads not meant to
   * impersonate the caller (KUBE_IMPERSONATE: the cluster's RBAC decides, so it is asked). Otherwise
   * undefined, and status reads helm and the cluster directly.
   */
  private watched(agent: AgentWithLastOperation): { info: ReleaseInfo; live: LiveAgent | null } | undefined {
    if (!this.fleet?.synced || this.config.KUBE_IMPERSONATE) return undefined;
    const ref = { namespace: agent.namespace, name: agent.name };
    const release = this.fleet.release(ref);
    if (!release || release.status !== 'deployed' || (agent.helmRevision !== null && release.revision < agent.helmRevision)) return undefined;
    const { namespace, name, revision, status, chart, values, manifest } = release;
    return { info: { namespace, name, revision, status, chart, values, manifest, description: '' }, live: this.fleet.agent(ref) };
  }

  /** For a release whose current revision is pending-* or failed: the last deployed revision's values and Agent. */
  private async lastDeployed(release: ReleaseRef, current: ReleaseInfo, agentId: string): Promise<RevisionFacts | null> {
    if (current.status !== 'failed' && !current.status.startsWith('pending')) return null;
    const revision = lastDeployedRevision(await this.helm.history(release), current.revision);
    if (revision === undefined) return null;
    const info = await this.helm.status(release, revision);
    if (!info) return null;
    // rollback_agent takes the agent's revision numbers, which drift from helm's (a failed atomic upgrade, a reinstall, an adoption).
    // The newest: a reinstall starts helm's numbering again, so one helm number can name two revisions.
    const agentRevision = (await this.repository.revisions(agentId)).reverse().find((r) => r.helmRevision === revision)?.revision ?? null;
    return { revision, agentRevision, values: info.values, agent: await this.manifests.agentIn(info.manifest) };
  }

  /**
   * validate_agent's modelConfig check, as the write would make it: a create's modelConfig, an
   * update's when it names another than the agent's (`current`); not when the namespace or the
   * name given is already a violation.
   */
  private async modelConfigVerdict(namespace: string, modelConfig: unknown, current: string | undefined, violations: { path: string }[]): Promise<ModelConfigVerdict> {
    if (!this.modelConfigs || typeof modelConfig !== 'string' || modelConfig === current) return {};
    if (violations.some((v) => v.path === 'namespace' || v.path === 'modelConfig')) return {};
    return this.modelConfigs.verdict(namespace, modelConfig);
  }

  private async require(namespace: string, name: string): Promise<AgentWithLastOperation> {
    const agent = await this.repository.findActive(namespace, name);
    if (!agent) throw AppError.notFound(namespace, name);
    return agent;
  }

}

/**
 * The revision the cluster should hold behind an unfinished or failed one: the newest `deployed`
 * (helm keeps the previous revision deployed until an upgrade succeeds), else the newest
 * `superseded` before the current one.
 */
export function lastDeployedRevision(history: HistoryEntry[], current: number): number | undefined {
  const before = history.filter((h) => h.revision < current).sort((a, b) => b.revision - a.revision);
  return (before.find((h) => h.status === 'deployed') ?? before.find((h) => h.status === 'superseded'))?.revision;
}

/** A write's answer with the warnings of the checks made before it ran. */
function withWarnings<T extends { warnings: ErrorDetail[] }>(answer: T, warnings: readonly ErrorDetail[]): T {
  return warnings.length === 0 ? answer : { ...answer, warnings: [...answer.warnings, ...warnings] };
}
