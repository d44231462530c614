import { isDeepStrictEqual } from 'node:util';
import { Injectable, Logger } from '@nestjs/common';
import { AppConfig, AppError, OperationContexts, type ErrorDetail } from '@app/common';
import { HelmClient, type ChartSource, type ReleaseInfo, type ReleaseRef } from '@app/helm';
import { KubeClient, type LiveAgent } from '@app/kube';
import type { AgentRevisionRow, AgentRow, OperationRow } from '@app/store';
import { toolsetWarnings } from '@app/toolset';
import type { ValidateCommand } from './agents.commands.js';
import { AgentsRepository, type AgentWithLastOperation } from './agents.repository.js';
import type { AgentRefDto, CreateAgentDto, DeleteAgentDto, ListAgentsQueryDto, RollbackAgentDto, UpdateAgentDto } from './agents.dto.js';
import type {
  AgentDto,
  AgentPageDto,
  CreateResultDto,
  DeleteResultDto,
  OperationDto,
  RevisionDto,
  RevisionListDto,
  RollbackResultDto,
  StatusDto,
  UpdateResultDto,
  ValidateResultDto,
} from './agents.responses.js';
import { pickSpec, toChartValues, type AgentSpec, type ChartValues, type OperationKind } from './agents.types.js';
import { compareKeys, decodeCursor, encodeCursor, isAfter, matchesLabel } from './agents.paging.js';
import { foldStatus } from './agent-status.js';
import { AgentWrites, type HeldLease } from './agent-writes.service.js';
import { OperationRecovery } from './operation-recovery.service.js';
import { parseAllDocuments } from 'yaml';

/**
 * Every agent operation, once. The REST controller and the MCP tools are thin doors onto
 * these methods: they pass the raw request and get the answer or an AppError.
 */
@Injectable()
export class AgentsService {
  private readonly logger = new Logger(AgentsService.name);

  constructor(
    private readonly repository: AgentsRepository,
    private readonly helm: HelmClient,
    private readonly kube: KubeClient,
    private readonly config: AppConfig,
    private readonly writes: AgentWrites,
    private readonly recovery: OperationRecovery,
  ) {}

  private get chart(): ChartSource {
    return { ref: this.config.chartRef, version: this.config.AGENT_CHART_VERSION };
  }

  async list(input: ListAgentsQueryDto): Promise<AgentPageDto> {
    const status = input.status ?? 'active';
    const rows = await this.repository.list({ namespace: input.namespace, state: status === 'all' ? undefined : status });
    const after = input.cursor ? decodeCursor(input.cursor) : undefined;
    const matching = rows
      .filter((row) => matchesLabel(row.spec as unknown as AgentSpec, input.label) && (!after || isAfter(row, after)))
      .sort(compareKeys);
    const limit = input.limit ?? 20;
    const page = matching.slice(0, limit);
    const more = matching.length > limit;
    return { items: page.map((row) => this.view(row, null)), nextCursor: more ? encodeCursor(page[page.length - 1]) : null };
  }

  async get({ namespace, name }: AgentRefDto): Promise<AgentDto> {
    return this.toView(await this.require(namespace, name));
  }

  async create(input: CreateAgentDto): Promise<CreateResultDto> {
    const caller = OperationContexts.current();
    const body = withoutRequestId(input);
    return this.once(input, { op: 'create', body }, async () => {
      const release = { namespace: input.namespace, name: input.name };
      const spec = pickSpec(input) as AgentSpec;
      const values = toChartValues(spec);
      const warnings = problems(toolsetWarnings(spec.toolset));
      const exists = () =>
        new AppError('conflict', `agent ${release.namespace}/${release.name} already exists: update it (PATCH /api/v1/agents/${release.namespace}/${release.name}, update_agent) or choose another name`, [
          { path: 'name', message: 'an agent with this name exists in this namespace' },
        ]);
      if (await this.repository.findActive(release.namespace, release.name)) throw exists();
      const manifests = await this.helm.template(release, this.chart, values);
      if (input.dryRun) return { dryRun: true, agent: null, values, manifests, warnings };

      return this.writes.exclusive(release.namespace, release.name, () => this.recovery.settle(release.namespace, release.name), async (operationId, lease) => {
        if (await this.repository.findActive(release.namespace, release.name)) throw exists();
        const operation = await this.repository.startOperation({
          id: operationId, kind: 'create', ...release, request: body, actor: caller.actor, owner: this.writes.replica, intent: { spec, values }, baseHelmRevision: null,
        });
        const applied = await this.journaled(operation, async () => {
          if (await this.helm.status(release)) {
            throw new AppError('conflict', `a helm release ${release.namespace}/${release.name} already exists that agent-manager does not manage: choose another name, or remove that release first`, [
              { path: 'name', message: 'a helm release with this name exists in this namespace' },
            ]);
          }
          const info = await this.helm.upgradeInstall(release, this.chart, values);
          return { info, values: this.appliedValues(release, info, values) };
        });
        const row = await this.record(operation, lease, applied.info.revision, () =>
          this.repository.recordCreate(release.namespace, release.name, this.chart, {
            spec, values: applied.values, helmRevision: applied.info.revision, kind: 'create', actor: caller.actor, operationId,
          }),
        );
        return { dryRun: false, agent: await this.toView(row), values: applied.values, manifests, warnings };
      });
    });
  }

  async update({ namespace, name }: AgentRefDto, input: UpdateAgentDto): Promise<UpdateResultDto> {
    const caller = OperationContexts.current();
    const expected = input.expectedVersion;
    const body = withoutRequestId(input);
    return this.once(input, { op: 'update', ref: { namespace, name }, body }, async () => {
      const release = { namespace, name };
      const plan = (agent: AgentRow) => {
        const before = agent.values as unknown as ChartValues;
        const spec = { ...(agent.spec as unknown as AgentSpec), ...pickSpec(input) };
        const after = toChartValues(spec);
        return { before, spec, after, changed: !isDeepStrictEqual(before, after), warnings: problems(toolsetWarnings(spec.toolset)) };
      };
      const current = await this.require(namespace, name);
      checkVersion(current, expected);
      const preview = plan(current);
      if (!preview.changed) return { dryRun: input.dryRun ?? false, changed: false, before: preview.before, after: preview.after, agent: await this.toView(current), manifests: '', warnings: preview.warnings };
      const manifests = await this.helm.template(release, this.chart, preview.after);
      if (input.dryRun) return { dryRun: true, changed: true, before: preview.before, after: preview.after, agent: await this.toView(current), manifests, warnings: preview.warnings };

      return this.writes.exclusive(namespace, name, () => this.recovery.settle(namespace, name), async (operationId, lease) => {
        const agent = await this.require(namespace, name);
        checkVersion(agent, expected);
        const { before, spec, after, changed, warnings } = plan(agent);
        if (!changed) return { dryRun: false, changed: false, before, after, agent: await this.toView(agent), manifests: '', warnings };
        const operation = await this.repository.startOperation({
          id: operationId, kind: 'update', ...release, agentId: agent.id, request: body, actor: caller.actor, owner: this.writes.replica, intent: { spec, values: after }, baseHelmRevision: agent.helmRevision,
        });
        const applied = await this.journaled(operation, async () => {
          const info = await this.helm.upgradeInstall(release, this.chart, after);
          return { info, values: this.appliedValues(release, info, after) };
        });
        const row = await this.record(operation, lease, applied.info.revision, () =>
          this.repository.recordChange(agent, {
            spec, values: applied.values, helmRevision: applied.info.revision, kind: 'update', actor: caller.actor, operationId, chart: this.chart,
          }),
        );
        return { dryRun: false, changed: true, before, after: applied.values, agent: await this.toView(row), manifests, warnings };
      });
    });
  }

  async delete({ namespace, name }: AgentRefDto, input: DeleteAgentDto): Promise<DeleteResultDto> {
    const caller = OperationContexts.current();
    const expected = input.expectedVersion;
    const body = withoutRequestId(input);
    return this.once(input, { op: 'delete', ref: { namespace, name }, expected }, async () => {
      const current = await this.require(namespace, name);
      checkVersion(current, expected);
      if (input.dryRun) return { dryRun: true, deleted: await this.toView(current), releaseRemoved: false };

      return this.writes.exclusive(namespace, name, () => this.recovery.settle(namespace, name), async (operationId, lease) => {
        const agent = await this.require(namespace, name);
        checkVersion(agent, expected);
        const operation = await this.repository.startOperation({
          id: operationId, kind: 'delete', namespace, name, agentId: agent.id, request: body, actor: caller.actor, owner: this.writes.replica, baseHelmRevision: agent.helmRevision,
        });
        const releaseRemoved = await this.journaled(operation, () => this.helm.uninstall({ namespace, name }));
        const row = await this.record(operation, lease, null, () => this.repository.recordDelete(agent, operationId, caller.actor));
        return { dryRun: false, deleted: await this.toView(row), releaseRemoved };
      });
    });
  }

  async rollback({ namespace, name }: AgentRefDto, input: RollbackAgentDto): Promise<RollbackResultDto> {
    const caller = OperationContexts.current();
    const expected = input.expectedVersion;
    const body = withoutRequestId(input);
    return this.once(input, { op: 'rollback', ref: { namespace, name }, body }, async () => {
      const release = { namespace, name };
      const target = async (agent: AgentRow) => {
        const found = await this.repository.revision(agent.id, input.revision);
        if (!found) {
          throw new AppError('not_found', `agent ${namespace}/${name} has no revision ${input.revision}: it has revisions 1 to ${agent.revision} (list_agent_revisions)`, [
            { path: 'revision', message: `choose a revision from 1 to ${agent.revision}` },
          ]);
        }
        return found;
      };
      const current = await this.require(namespace, name);
      checkVersion(current, expected);
      const preview = await target(current);
      if (input.dryRun) {
        return { dryRun: true, rolledBackTo: preview.revision, before: current.values as unknown as ChartValues, after: preview.values as unknown as ChartValues, agent: await this.toView(current) };
      }

      let stuck: OperationRow[] = [];
      const settle = async () => {
        stuck = await this.recovery.settle(namespace, name, { freeStuckRelease: input.freeStuckRelease });
      };
      return this.writes.exclusive(namespace, name, settle, async (operationId, lease) => {
        const agent = await this.require(namespace, name);
        checkVersion(agent, expected);
        const restore = await target(agent);
        const before = agent.values as unknown as ChartValues;
        const after = restore.values as unknown as ChartValues;
        const spec = restore.spec as unknown as AgentSpec;
        const operation = await this.repository.startOperation({
          id: operationId, kind: 'rollback', ...release, agentId: agent.id, request: body, actor: caller.actor, owner: this.writes.replica,
          intent: { spec, values: after, rolledBackTo: restore.revision }, baseHelmRevision: agent.helmRevision,
        });
        const applied = await this.journaled(operation, async () => {
          const history = await this.helm.history(release).catch(() => []);
          if (restore.helmRevision !== null && history.some((h) => h.revision === restore.helmRevision)) {
            await this.helm.rollback(release, restore.helmRevision);
          } else {
            await this.helm.upgradeInstall(release, this.chart, after);
          }
          const info = await this.helm.status(release);
          if (!info) throw new AppError('backend_error', `helm rolled back ${namespace}/${name} but then reports no release: check it with helm history`);
          return { helmRevision: info.revision, values: this.appliedValues(release, info, after) };
        });
        const row = await this.record(operation, lease, applied.helmRevision, () =>
          this.repository.recordChange(agent, {
            spec, values: applied.values, helmRevision: applied.helmRevision, kind: 'rollback', actor: caller.actor, operationId, rolledBackTo: restore.revision,
          }),
        );
        await this.recovery.supersede(stuck, operationId); // under the lease still: no sweep resolves them meanwhile
        return { dryRun: false, rolledBackTo: restore.revision, before, after: applied.values, agent: await this.toView(row) };
      });
    });
  }

  /** Every violation of a create or update, plus what helm would render; never writes. */
  async validate(command: ValidateCommand): Promise<ValidateResultDto> {
    const { input } = command;
    const violations = [...command.violations];
    const mode = input.mode ?? 'create';
    let spec: Partial<AgentSpec> = pickSpec(input);
    const found = violations.some((v) => v.path === 'name' || v.path === 'namespace') ? null : await this.repository.findActive(input.namespace, input.name);
    if (mode === 'create') {
      if (found) violations.push({ path: 'name', message: `agent ${input.namespace}/${input.name} already exists: validate an update (mode: "update") or choose another name` });
      if (input.modelConfig === undefined) violations.push({ path: 'modelConfig', message: 'modelConfig is required: the name of a kagent ModelConfig' });
      if (input.toolset === undefined) violations.push({ path: 'toolset', message: 'toolset is required: declare the tools this agent may use, e.g. ["preset:read-only"], or ["preset:none"] for a chat-only agent' });
    } else if (!found && !violations.some((v) => v.path === 'name' || v.path === 'namespace')) {
      violations.push({ path: 'name', message: `agent ${input.namespace}/${input.name} does not exist: validate a create (mode: "create") instead` });
    } else if (found) {
      spec = { ...(found.spec as unknown as AgentSpec), ...spec };
    }
    const warnings = Array.isArray(spec.toolset) && violations.length === 0 ? problems(toolsetWarnings(spec.toolset)) : [];
    let manifests: string | null = null;
    if (violations.length === 0) {
      try {
        manifests = await this.helm.template({ namespace: input.namespace, name: input.name }, this.chart, toChartValues(spec as AgentSpec));
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== 'invalid_request') throw error;
        violations.push(...(error.details.length > 0 ? error.details : [{ path: 'values', message: error.message }]));
      }
    }
    return { valid: violations.length === 0, violations, warnings, manifests };
  }

  async revisions({ namespace, name }: AgentRefDto): Promise<RevisionListDto> {
    const agent = await this.require(namespace, name);
    const rows = await this.repository.revisions(agent.id);
    return { namespace, name, current: agent.revision, items: rows.map(revisionView) };
  }

  /** The verdict folded from the release, the live Agent's conditions and any drift. Reads the cluster, never writes. */
  async status({ namespace, name }: AgentRefDto): Promise<StatusDto> {
    const agent = await this.require(namespace, name);
    const release = { namespace, name };
    try {
      const info = await this.helm.status(release);
      const liveAgent = await this.kube.getAgent(namespace, name);
      const folded = foldStatus({
        namespace,
        name,
        storeRevision: agent.revision,
        storeValues: agent.values as Record<string, unknown>,
        release: info ? { status: info.status, revision: info.revision } : null,
        releaseValues: info?.values ?? null,
        appliedAgent: agentInManifest(info?.manifest ?? ''),
        liveAgent,
      });
      return { namespace, name, ...folded, releaseStatus: info?.status ?? null, releaseRevision: info?.revision ?? null };
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'backend_error') throw error;
      return { namespace, name, verdict: 'unknown', message: `The cluster could not be read: ${error.message}`, releaseStatus: null, releaseRevision: null, conditions: [], drift: [] };
    }
  }

  /**
   * A write's checks, dry run and exclusive part, answered once per idempotency key: a retry
   * gets the first answer before anything is checked again (a dry run is never kept). Each
   * write checks and renders before taking the agent's lease (refusals and helm template hold
   * no lock), then reads the agent again under the lease, where another replica's write counts.
   */
  private once<T>(input: { requestId?: string; dryRun?: boolean }, request: unknown, attempt: () => Promise<T>): Promise<T> {
    return this.writes.idempotent(input.dryRun ? undefined : input.requestId, request, attempt);
  }

  /**
   * Records what helm applied. When that cannot be done (the store failed, or this replica lost
   * its lock on the agent) the operation stays pending, to be recorded from what helm holds by
   * the next write on the agent or the recovery sweep, and the caller is told exactly that.
   */
  private async record<T>(operation: OperationRow, lease: HeldLease, helmRevision: number | null, write: () => Promise<T>): Promise<T> {
    const applied = `helm applied the ${operation.kind} of ${operation.namespace}/${operation.name}${helmRevision ? ` (release revision ${helmRevision})` : ''}`;
    const after = `operation ${operation.id} stays pending and is recorded from what helm holds by the next write on this agent or the recovery sweep; read the agent again before retrying`;
    if (lease.lost) throw new AppError('backend_error', `${applied}, but this replica lost its lock on the agent before recording it; ${after}`);
    try {
      return await write();
    } catch (error) {
      this.logger.error(`recording operation ${operation.id} failed: ${(error as Error).stack ?? String(error)}`);
      throw new AppError('backend_error', `${applied}, but recording it in the store failed (${(error as Error).message}); ${after}`);
    }
  }

  /** Runs a write's helm part; on failure the operation is closed failed with helm's message. */
  private async journaled<T>(operation: OperationRow, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      const failure = error instanceof AppError ? error : new AppError('backend_error', `helm failed: ${(error as Error).message}`);
      await this.repository.failOperation(operation.id, failure.code, failure.message);
      this.logger.warn(`${operation.kind} ${operation.namespace}/${operation.name} failed (operation ${operation.id}): ${failure.message}`);
      throw failure;
    }
  }

  /** The values helm reports for the revision it applied, checked against what was written. */
  private appliedValues(release: ReleaseRef, info: ReleaseInfo, written: ChartValues): ChartValues {
    const reported = info.values as unknown as ChartValues;
    if (!isDeepStrictEqual(reported, written)) {
      this.logger.warn(`helm reports other values for ${release.namespace}/${release.name} than were written; recording helm's`);
    }
    return reported;
  }

  private async require(namespace: string, name: string): Promise<AgentWithLastOperation> {
    const agent = await this.repository.findActive(namespace, name);
    if (!agent) throw AppError.notFound(namespace, name);
    return agent;
  }

  private async toView(row: AgentRow | AgentWithLastOperation): Promise<AgentDto> {
    const last = 'lastOperation' in row ? row.lastOperation : await this.repository.lastOperation(row.namespace, row.name, row.id);
    return this.view(row, last);
  }

  private view(row: AgentRow, last: OperationRow | null): AgentDto {
    const spec = row.spec as unknown as AgentSpec;
    return {
      id: row.id,
      namespace: row.namespace,
      name: row.name,
      state: row.state,
      spec,
      values: row.values as unknown as ChartValues,
      toolset: spec.toolset,
      revision: row.revision,
      helmRevision: row.helmRevision,
      version: row.version,
      chart: { ref: row.chartRef, version: row.chartVersion },
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
      deletedAt: row.deletedAt?.toISOString() ?? null,
      createdBy: row.createdBy,
      updatedBy: row.updatedBy,
      lastOperation: last ? operationView(last) : null,
    };
  }
}

function agentInManifest(manifest: string): LiveAgent | null {
  for (const doc of parseAllDocuments(manifest)) {
    const object = doc.toJSON() as { kind?: string; apiVersion?: string } | null;
    if (object?.kind === 'Agent' && object.apiVersion?.startsWith('kagent.dev/')) return object as unknown as LiveAgent;
  }
  return null;
}

/** Optimistic concurrency: a stale write is refused naming the current version. */
function checkVersion(agent: AgentRow, expected: number | undefined): void {
  if (expected === undefined || agent.version === expected) return;
  throw new AppError(
    'precondition_failed',
    `agent ${agent.namespace}/${agent.name} is at version ${agent.version}, not ${expected}: read it again (get_agent), re-apply your change to what it holds now, and send version ${agent.version}`,
    [{ path: 'expectedVersion', message: `the current version is ${agent.version}` }],
  );
}

/** The request as hashed for idempotency and journaled: the key itself is not part of it. */
function withoutRequestId(input: object): Record<string, unknown> {
  const { requestId: _key, ...rest } = input as Record<string, unknown>;
  return rest;
}

function problems(list: { path: string; message: string }[]): ErrorDetail[] {
  return list.map(({ path, message }) => ({ path, message }));
}

function operationView(op: OperationRow): OperationDto {
  return {
    id: op.id,
    kind: op.kind as OperationKind,
    state: op.state,
    actor: op.actor,
    startedAt: op.startedAt.toISOString(),
    finishedAt: op.finishedAt?.toISOString() ?? null,
    helmRevision: op.helmRevision,
    errorCode: op.errorCode,
    errorMessage: op.errorMessage,
  };
}

function revisionView(row: AgentRevisionRow): RevisionDto {
  return {
    revision: row.revision,
    helmRevision: row.helmRevision,
    kind: row.kind,
    rolledBackTo: row.rolledBackTo,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    spec: row.spec as unknown as AgentSpec,
    values: row.values as unknown as ChartValues,
  };
}
