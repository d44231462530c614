import { isDeepStrictEqual } from 'node:util';
import { Injectable, Logger } from '@nestjs/common';
import { AppConfig, AppError, type ErrorDetail } from '@app/common';
import { HelmClient, type ChartSource, type ReleaseRef } from '@app/helm';
import { KubeClient, type LiveAgent } from '@app/kube';
import type { AgentRevisionRow, AgentRow, OperationRow } from '@app/store';
import { toolsetWarnings } from '@app/toolset';
import { parseInput, readInput, invalidInput } from './agents.input.js';
import { AgentsRepository, type AgentWithLastOperation } from './agents.repository.js';
import {
  AgentRefDto,
  CreateAgentDto,
  DeleteAgentDto,
  ListAgentsQueryDto,
  RollbackAgentDto,
  UpdateAgentDto,
  ValidateAgentDto,
} from './agents.dto.js';
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
import { decodeCursor, encodeCursor, matchesLabel } from './agents.paging.js';
import { foldStatus } from './agent-status.js';
import { parseAllDocuments } from 'yaml';

/** Who asked, for the journal and the revisions. */
export interface Caller {
  actor: string;
}

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
  ) {}

  private get chart(): ChartSource {
    return { ref: this.config.chartRef, version: this.config.AGENT_CHART_VERSION };
  }

  async list(query: unknown): Promise<AgentPageDto> {
    const input = parseInput(ListAgentsQueryDto, query ?? {});
    const status = input.status ?? 'active';
    const rows = await this.repository.list({ namespace: input.namespace, state: status === 'all' ? undefined : status });
    const after = input.cursor ? decodeCursor(input.cursor) : undefined;
    const matching = rows.filter((row) => matchesLabel(row.spec as unknown as AgentSpec, input.label));
    const start = after ? matching.findIndex((row) => row.id === after) + 1 : 0;
    if (after && start === 0) throw AppError.invalid([{ path: 'cursor', message: 'cursor is not from this listing: start again without a cursor' }]);
    const limit = input.limit ?? 20;
    const page = matching.slice(start, start + limit);
    const more = start + limit < matching.length;
    return { items: page.map((row) => this.view(row, null)), nextCursor: more ? encodeCursor(page[page.length - 1].id) : null };
  }

  async get(ref: unknown): Promise<AgentDto> {
    const { namespace, name } = parseInput(AgentRefDto, ref);
    return this.toView(await this.require(namespace, name));
  }

  async create(body: unknown, caller: Caller): Promise<CreateResultDto> {
    const input = parseInput(CreateAgentDto, body);
    const release = { namespace: input.namespace, name: input.name };
    const spec = pickSpec(input) as AgentSpec;
    const values = toChartValues(spec);
    const warnings = problems(toolsetWarnings(spec.toolset));
    if (await this.repository.findActive(release.namespace, release.name)) {
      throw new AppError('conflict', `agent ${release.namespace}/${release.name} already exists: update it (PATCH /api/v1/agents/${release.namespace}/${release.name}, update_agent) or choose another name`, [
        { path: 'name', message: 'an agent with this name exists in this namespace' },
      ]);
    }
    const manifests = await this.helm.template(release, this.chart, values);
    if (input.dryRun) return { dryRun: true, agent: null, values, manifests, warnings };

    const operation = await this.repository.startOperation({ kind: 'create', ...release, request: body, actor: caller.actor });
    const applied = await this.journaled(operation, async () => {
      if (await this.helm.status(release)) {
        throw new AppError('conflict', `a helm release ${release.namespace}/${release.name} already exists that agent-manager does not manage: choose another name, or remove that release first`, [
          { path: 'name', message: 'a helm release with this name exists in this namespace' },
        ]);
      }
      const info = await this.helm.upgradeInstall(release, this.chart, values);
      return { info, values: await this.appliedValues(release, values) };
    });
    const row = await this.repository.recordCreate(release.namespace, release.name, this.chart, {
      spec,
      values: applied.values,
      helmRevision: applied.info.revision,
      kind: 'create',
      actor: caller.actor,
      operationId: operation.id,
    });
    return { dryRun: false, agent: await this.toView(row), values: applied.values, manifests, warnings };
  }

  async update(ref: unknown, body: unknown, caller: Caller): Promise<UpdateResultDto> {
    const { namespace, name } = parseInput(AgentRefDto, ref);
    const input = parseInput(UpdateAgentDto, body);
    const agent = await this.require(namespace, name);
    const before = agent.values as unknown as ChartValues;
    const spec = { ...(agent.spec as unknown as AgentSpec), ...pickSpec(input) };
    const after = toChartValues(spec);
    const warnings = problems(toolsetWarnings(spec.toolset));
    const release = { namespace, name };
    const changed = !isDeepStrictEqual(before, after);
    if (!changed) return { dryRun: input.dryRun ?? false, changed: false, before, after, agent: await this.toView(agent), manifests: '', warnings };
    const manifests = await this.helm.template(release, this.chart, after);
    if (input.dryRun) return { dryRun: true, changed, before, after, agent: await this.toView(agent), manifests, warnings };

    const operation = await this.repository.startOperation({ kind: 'update', ...release, agentId: agent.id, request: body, actor: caller.actor });
    const applied = await this.journaled(operation, async () => {
      const info = await this.helm.upgradeInstall(release, this.chart, after);
      return { info, values: await this.appliedValues(release, after) };
    });
    const row = await this.repository.recordChange(agent, {
      spec,
      values: applied.values,
      helmRevision: applied.info.revision,
      kind: 'update',
      actor: caller.actor,
      operationId: operation.id,
    });
    return { dryRun: false, changed: true, before, after: applied.values, agent: await this.toView(row), manifests, warnings };
  }

  async delete(ref: unknown, body: unknown, caller: Caller): Promise<DeleteResultDto> {
    const { namespace, name } = parseInput(AgentRefDto, ref);
    const input = parseInput(DeleteAgentDto, body ?? {});
    const agent = await this.require(namespace, name);
    if (input.dryRun) return { dryRun: true, deleted: await this.toView(agent), releaseRemoved: false };
    const operation = await this.repository.startOperation({ kind: 'delete', namespace, name, agentId: agent.id, request: body ?? {}, actor: caller.actor });
    const releaseRemoved = await this.journaled(operation, () => this.helm.uninstall({ namespace, name }));
    const row = await this.repository.recordDelete(agent, operation.id, caller.actor);
    return { dryRun: false, deleted: await this.toView(row), releaseRemoved };
  }

  async rollback(ref: unknown, body: unknown, caller: Caller): Promise<RollbackResultDto> {
    const { namespace, name } = parseInput(AgentRefDto, ref);
    const input = parseInput(RollbackAgentDto, body);
    const agent = await this.require(namespace, name);
    const target = await this.repository.revision(agent.id, input.revision);
    if (!target) {
      throw new AppError('not_found', `agent ${namespace}/${name} has no revision ${input.revision}: it has revisions 1 to ${agent.revision} (list_agent_revisions)`, [
        { path: 'revision', message: `choose a revision from 1 to ${agent.revision}` },
      ]);
    }
    const before = agent.values as unknown as ChartValues;
    const after = target.values as unknown as ChartValues;
    if (input.dryRun) return { dryRun: true, rolledBackTo: target.revision, before, after, agent: await this.toView(agent) };
    const release = { namespace, name };
    const operation = await this.repository.startOperation({ kind: 'rollback', ...release, agentId: agent.id, request: body, actor: caller.actor });
    const applied = await this.journaled(operation, async () => {
      const history = await this.helm.history(release).catch(() => []);
      if (target.helmRevision !== null && history.some((h) => h.revision === target.helmRevision)) {
        await this.helm.rollback(release, target.helmRevision);
      } else {
        await this.helm.upgradeInstall(release, this.chart, after);
      }
      const info = await this.helm.status(release);
      return { helmRevision: info?.revision ?? null, values: await this.appliedValues(release, after) };
    });
    const row = await this.repository.recordChange(agent, {
      spec: target.spec as unknown as AgentSpec,
      values: applied.values,
      helmRevision: applied.helmRevision,
      kind: 'rollback',
      actor: caller.actor,
      operationId: operation.id,
      rolledBackTo: target.revision,
    });
    return { dryRun: false, rolledBackTo: target.revision, before, after: applied.values, agent: await this.toView(row) };
  }

  /** Every violation of a create or update, plus what helm would render; never writes. */
  async validate(body: unknown): Promise<ValidateResultDto> {
    const { value: input, violations } = readInput(ValidateAgentDto, body);
    if (violations.some((v) => v.path === '')) throw invalidInput(violations);
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

  async revisions(ref: unknown): Promise<RevisionListDto> {
    const { namespace, name } = parseInput(AgentRefDto, ref);
    const agent = await this.require(namespace, name);
    const rows = await this.repository.revisions(agent.id);
    return { namespace, name, current: agent.revision, items: rows.map(revisionView) };
  }

  /** The verdict folded from the release, the live Agent's conditions and any drift. Reads the cluster, never writes. */
  async status(ref: unknown): Promise<StatusDto> {
    const { namespace, name } = parseInput(AgentRefDto, ref);
    const agent = await this.require(namespace, name);
    const release = { namespace, name };
    try {
      const info = await this.helm.status(release);
      const [releaseValues, manifest, liveAgent] = info
        ? await Promise.all([this.helm.getValues(release), this.helm.getManifest(release), this.kube.getAgent(namespace, name)])
        : [null, '', await this.kube.getAgent(namespace, name)];
      const folded = foldStatus({
        namespace,
        name,
        storeRevision: agent.revision,
        storeValues: agent.values as Record<string, unknown>,
        release: info ? { status: info.status, revision: info.revision } : null,
        releaseValues,
        appliedAgent: agentInManifest(manifest),
        liveAgent,
      });
      return { namespace, name, ...folded, releaseStatus: info?.status ?? null, releaseRevision: info?.revision ?? null };
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'backend_error') throw error;
      return { namespace, name, verdict: 'unknown', message: `The cluster could not be read: ${error.message}`, releaseStatus: null, releaseRevision: null, conditions: [], drift: [] };
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

  /** The values helm reports for the release, checked against what was written. */
  private async appliedValues(release: ReleaseRef, written: ChartValues): Promise<ChartValues> {
    const reported = (await this.helm.getValues(release)) as unknown as ChartValues;
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
