import { isDeepStrictEqual } from 'node:util';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { AppConfig, AppError, Caller, OperationContexts } from '@app/common';
import { ChartSources, HelmClient, type ChartSource } from '@app/helm';
import { Tracing } from '@app/telemetry';
import { chartValuesOf, type AgentRecord, type AgentWithLastOperation, type OperationRecord } from '../persistence/records.js';
import { AgentsRepository } from '../persistence/agents.repository.js';
import type { AgentDto } from '../api/responses.dto.js';
import { intentChart, type ChartValues, type IntentChart, type OperationKind } from '../domain/agent-spec.js';
import { agentView, recordView } from '../api/views.js';
import { auditOf } from '../persistence/journal.records.js';
import { OperationRecovery } from '../application/operation-recovery.service.js';
import { AgentLock, type HeldLease, type LockMode } from './agent-lock.js';
import { configuredChart } from './configured-chart.js';
import { IdempotencyGate, type ClaimedKey } from './idempotency-gate.js';
import type { AgentHolding, AgentWriteStore } from './ports.js';
import { recordWrite } from './record-write.js';
import { ShutdownGate } from './shutdown-gate.js';
import { UncertainWrite } from './uncertain-write.js';
import type { Applied, Change, Found, PlanTools, RecordOf, Write, WritePlan } from './write-plan.js';
import { ReleaseOwners, type OwnerEvidenceReader } from '../cluster/release-owners.js';
import { ModelConfigCheck, type ModelConfigGate } from '../model-configs/model-config-check.js';
import { gitopsOwnerOf, nameTaken, ownedWarning, refuseGitopsOwned, requireAgent } from '../use-cases/checks.js';

/** What the one helm call of each kind does, as the caller is told before it runs. */
const HELM_STEP: Record<OperationKind, string> = { create: 'installing', update: 'upgrading', rollback: 'rolling back', delete: 'uninstalling' };

/**
 * The order every state change follows, written once: idempotency claim → (a dry run: checks and
 * its answer) → the shutdown gate → the agent's lock (waiting in line) → settle interrupted
 * operations → checks (the plan's, then whether Flux or Argo CD owns the release) → journal the intent → the change (one helm call) → record → answer, composed
 * after the record transaction returned → the key's answer kept. Each state change is a plan: a
 * caller's write (use-cases/*.ts), an adoption, a reconcile action.
 * A real run checks only under the lock, where every other replica's write counts: checking
 * before it too would cost a store round trip and decide nothing the second check does not.
 */
@Injectable()
export class WriteRunner {
  private readonly logger = new Logger(WriteRunner.name);

  constructor(
    private readonly config: AppConfig,
    @Inject(AgentsRepository) private readonly repository: AgentWriteStore,
    private readonly helm: HelmClient,
    private readonly gate: ShutdownGate,
    @Inject(AgentLock) private readonly lock: AgentHolding,
    private readonly keys: IdempotencyGate,
    private readonly recovery: OperationRecovery,
    /** Where the chart comes from (an OCI AGENT_CHART pulled once, the bundled one while it cannot be); without it, AppConfig.agentChart as given. */
    @Optional() private readonly charts?: ChartSources,
    /** Who else manages a release (Flux, Argo CD), read on every write; without it (unit suites without a cluster) not asked. */
    @Optional() @Inject(ReleaseOwners) private readonly owners?: OwnerEvidenceReader,
    /** Checks a write's modelConfig against the namespace's ModelConfigs; without it (suites without a cluster) not checked. */
    @Optional() @Inject(ModelConfigCheck) private readonly modelConfigs?: ModelConfigGate,
  ) {}

  /**
   * The chart writes use now (ChartSources.configured: AGENT_CHART, or the bundled chart while an OCI
   * AGENT_CHART cannot be pulled); validate_agent renders with it too.
   */
  chart(): Promise<ChartSource> {
    return configuredChart(this.config, this.charts);
  }

  /** What plans work with, for `caller`. */
  private tools(caller: Caller, chart: ChartSource): PlanTools {
    return { repository: this.repository, helm: this.helm, chart, caller, view: recordView };
  }

  /** An agent read without its last operation (an earlier run's, by id) as answers show it. */
  private async view(record: AgentRecord): Promise<AgentDto> {
    return agentView(record, await this.repository.lastOperation(record.namespace, record.name, record.id));
  }

  /**
   * Runs the state change `plan` describes (a use case: use-cases/*.ts) for `caller`.
   * `options.chart`: the chart the plan installs or upgrades to instead of the configured one (a
   * rollout's target, from ChartSources.resolve), which the agent's record then names.
   */
  async run<D extends Write, A>(caller: Caller, plan: WritePlan<D, A>, options: { chart?: ChartSource } = {}): Promise<A> {
    const tools = this.tools(caller, options.chart ?? (await this.chart()));
    const key = plan.dryRun ? undefined : plan.idempotencyKey;
    // Without a key there is nothing to claim or keep: the write runs as asked.
    if (!key) return plan.dryRun ? this.dryRun(plan, tools) : this.exclusive(plan, tools);
    const hashed = { op: plan.kind, ref: { namespace: plan.namespace, name: plan.name }, request: plan.request };
    return this.keys.once(caller, key, hashed, (claimed) => this.exclusive(plan, tools, claimed), {
      settle: () => this.held(plan, async () => void (await this.recovery.settle(plan.namespace, plan.name))),
      recorded: (operationId) => this.recorded(plan, operationId),
      replayed: (answer, sent) => this.stillStands(plan, answer, sent),
    });
  }

  /** A dry run: the checks and the plan's preview, nothing written; what is pending is settled first, as the write would. */
  private async dryRun<D extends Write, A>(plan: WritePlan<D, A>, tools: PlanTools): Promise<A> {
    await this.settledForPreview(plan);
    const found = await this.find(plan, []);
    const decided = await this.decide(plan, found, tools);
    const unchanged = await plan.unchanged?.(decided, found, tools);
    return unchanged ?? this.warnedIfOwned(plan, await plan.preview(decided, found, tools));
  }

  /**
   * What the plan `expects` of the store (the name free, or the agent at the expected version), and
   * the modelConfig check when the write moves the agent to another ModelConfig.
   */
  private async find<D extends Write, A>(plan: WritePlan<D, A>, stuck: OperationRecord[]): Promise<Found> {
    const { namespace, name, expects } = plan;
    let agent: AgentWithLastOperation | null = null;
    if (expects === 'absent') {
      const taken = await nameTaken(this.repository, namespace, name);
      if (taken) throw taken;
    } else if (expects) {
      agent = await requireAgent(this.repository, namespace, name, expects.expectedVersion);
    }
    const checks = plan.modelConfig !== undefined && plan.modelConfig !== agent?.spec.modelConfig;
    const modelWarnings = checks ? ((await this.modelConfigs?.check(namespace, plan.modelConfig!)) ?? []) : [];
    return { agent, modelWarnings, stuck };
  }

  private decide<D extends Write, A>(plan: WritePlan<D, A>, found: Found, tools: PlanTools): Promise<D> {
    if (plan.decide) return plan.decide(found, tools);
    if (!plan.write) throw new Error(`the ${plan.kind} plan of ${plan.namespace}/${plan.name} has neither a write nor decide`);
    return Promise.resolve(plan.write);
  }

  /**
   * A dry run answers whoever owns the release (docs/contract.md §13); one whose answer carries
   * warnings (an update's) says the write itself would be refused, naming the owner. A failed read
   * of the owner leaves the dry run's answer as it is: the write would read it again.
   */
  private async warnedIfOwned<D extends Write, A>(plan: WritePlan<D, A>, answer: A): Promise<A> {
    const warnings = (answer as { warnings?: unknown }).warnings;
    if (plan.checkOwner === false || !Array.isArray(warnings)) return answer;
    const target = { namespace: plan.namespace, name: plan.name, operation: plan.operation ?? `${plan.kind}_agent` };
    const owner = await gitopsOwnerOf(this.owners, target).catch(() => null);
    if (owner) warnings.push(ownedWarning(owner, target));
    return answer;
  }

  /** `work` holding the agent as the plan takes it, through the shutdown gate. */
  private async held<T>(plan: { namespace: string; name: string; lock?: LockMode }, work: (lease: HeldLease) => Promise<T>): Promise<T> {
    const leave = this.gate.enter();
    try {
      return await this.lock.hold(plan, plan.lock ?? 'write', work);
    } finally {
      leave();
    }
  }

  /**
   * A dry run answers as the write would: an earlier write left pending (a dead replica, a helm
   * run that holds the release pending-*) is settled first, as the write settles it, and what the
   * write would refuse (409 while helm holds the release) the dry run refuses too. Nothing of the
   * dry run itself is written; with nothing pending it takes no lock.
   */
  private async settledForPreview<D extends Write, A>(plan: WritePlan<D, A>): Promise<void> {
    const { namespace, name } = plan;
    if (plan.settle === false || (await this.repository.pendingOperations({ namespace, name })).length === 0) return;
    await this.held(plan, () => this.recovery.settle(namespace, name, { freeStuckRelease: plan.freeStuckRelease }));
  }

  private exclusive<D extends Write, A>(plan: WritePlan<D, A>, tools: PlanTools, claimed?: ClaimedKey): Promise<A> {
    const { namespace, name } = plan;
    return this.held(plan, async (lease) => {
      const stuck = plan.settle === false ? [] : await this.recovery.settle(namespace, name, { freeStuckRelease: plan.freeStuckRelease });
      const found = await this.find(plan, stuck);
      const decided = await this.decide(plan, found, tools);
      const unchanged = await plan.unchanged?.(decided, found, tools);
      if (unchanged !== undefined) return unchanged;
      // After the plan's own checks (a missing agent, a stale version answer as before) and only for a write that changes something.
      if (plan.checkOwner !== false) await refuseGitopsOwned(this.owners, { namespace, name, operation: plan.operation ?? `${plan.kind}_agent` });
      const change = () => this.change(plan, tools, decided, found, lease, claimed);
      const traced = plan.trace?.(decided);
      return traced ? Tracing.span(traced.name, { root: true, attributes: traced.attributes }, change) : change();
    });
  }

  /** Journal → the change → record → answer, holding the agent. */
  private async change<D extends Write, A>(plan: WritePlan<D, A>, tools: PlanTools, decided: D, found: Found, lease: HeldLease, claimed?: ClaimedKey): Promise<A> {
    const { namespace, name } = plan;
    const { caller } = tools;
    const { kind = plan.kind, request = plan.request, step, intent, ...entry } = decided.journal;
    const operation = await this.repository.startOperation({
      id: lease.operationId,
      kind,
      namespace,
      name,
      request,
      actor: caller.actor,
      audit: auditOf(caller, plan.operation ?? `${plan.kind}_agent`),
      owner: this.config.REPLICA_ID,
      idempotencyKey: claimed?.key,
      intent: intent && { ...intent, chart: intent.chart ?? chartOfChange(decided.change, tools.chart) },
      ...entry,
    });
    OperationContexts.journaled(operation.id);
    await OperationContexts.step(step ?? `checks passed: ${HELM_STEP[kind]} the helm release ${namespace}/${name}`);
    const applied = await this.journaled(operation, () => this.apply(plan, tools, decided.change, operation.id));
    const recorded = await this.record(operation, lease, applied.helmRevision, () => this.recordOf(plan, tools, decided.record, applied, operation.id));
    // Under the lease still: no sweep resolves them meanwhile. The change is recorded by now; one
    // left pending here is settled by the next write or sweep (helm no longer holds it).
    if (found.stuck.length > 0) {
      await this.recovery.supersede(found.stuck, operation.id).catch((error: unknown) => {
        this.logger.warn(`the ${kind} of ${namespace}/${name} landed, but closing the operations it freed failed (the next write or sweep settles them): ${(error as Error).message}`);
      });
    }
    try {
      await plan.after?.(decided, operation.id, tools);
      return await plan.answer(decided, applied, recorded as AgentWithLastOperation, found, tools);
    } catch (error) {
      // Recorded already: the key must not be forgotten (a retry would run the write again); it
      // lapses, and the retry answers from what the operation recorded.
      throw new UncertainWrite('backend_error', `the ${kind} of ${namespace}/${name} was recorded (operation ${operation.id}), but answering it failed: ${(error as Error).message}; read the agent, or retry with the same idempotency key`);
    }
  }

  /** The change a plan decided, carried out: one helm call for most; what helm reports of it wins over what was written. */
  private async apply<D extends Write, A>(plan: WritePlan<D, A>, tools: PlanTools, change: Change, operationId: string): Promise<Applied> {
    const ref = { namespace: plan.namespace, name: plan.name };
    if ('install' in change) {
      const release = await this.helm.install(ref, tools.chart, change.install.values);
      return { helmRevision: release.revision, values: appliedValues(ref, release.values, change.install.values), manifests: release.manifest };
    }
    if ('upgrade' in change) {
      const { values, chart = tools.chart, first } = change.upgrade;
      if (first) await this.helm.upgradeInstall(ref, first.chart, first.values);
      const release = await this.helm.upgradeInstall(ref, chart, values);
      return { helmRevision: release.revision, values: appliedValues(ref, release.values, values), manifests: release.manifest, chart };
    }
    if ('uninstall' in change) return { helmRevision: null, values: null, manifests: '', releaseRemoved: await this.helm.uninstall(ref) };
    if ('none' in change) return change.none;
    return change.run(operationId);
  }

  /** What a plan decided to record (record-write.ts), with what was applied, by whom and in which operation. */
  private recordOf<D extends Write, A>(plan: WritePlan<D, A>, tools: PlanTools, record: RecordOf, applied: Applied, operationId: string): Promise<unknown> {
    const { namespace, name } = plan;
    return recordWrite(this.repository, record, { namespace, name, helmRevision: applied.helmRevision, values: applied.values, chart: tools.chart, applied: applied.chart, actor: tools.caller.actor, operationId });
  }

  /** The answer of an earlier run of this request that recorded its outcome but could not answer (it crashed, or the store failed). */
  private async recorded<D extends Write, A>(plan: WritePlan<D, A>, operationId: string): Promise<A> {
    const op = await this.repository.operation(operationId);
    const agent = op?.agentId ? await this.repository.agentById(op.agentId) : null;
    if (!op || !agent || !plan.recorded) throw new AppError('conflict', `the first request with this idempotency key ran as operation ${operationId}, whose agent the store no longer holds: send a new key`);
    const revision = await this.repository.revisionOfOperation(operationId);
    const previous = revision && revision.revision > 1 ? await this.repository.revision(agent.id, revision.revision - 1) : null;
    const manifests = op.helmRevision !== null ? ((await this.helm.status({ namespace: op.namespace, name: op.name }, op.helmRevision).catch(() => null))?.manifest ?? '') : '';
    return plan.recorded({ agent: await this.view(agent), revision, previous, manifests });
  }

  /** A replayed answer about an agent that was deleted since is refused, saying so: it no longer describes anything. */
  private async stillStands<D extends Write, A>(plan: WritePlan<D, A>, answer: A, sent: string): Promise<void> {
    if (plan.kind === 'delete') return;
    const id = (answer as { agent?: { id?: string } | null }).agent?.id;
    const agent = id ? await this.repository.agentById(id) : null;
    if (agent?.state !== 'deleted') return;
    throw new AppError(
      'conflict',
      `the request with idempotency key "${sent}" was answered before (the ${plan.kind} of ${plan.namespace}/${plan.name}, revision ${(answer as { agent: { revision: number } }).agent.revision}), ` +
        `but that agent was deleted since (${agent.deletedAt?.toISOString() ?? 'at an unknown time'}, by ${agent.updatedBy}): the first answer no longer describes anything; send a new key to ${plan.kind} it again`,
      [{ path: 'requestId', message: `agent ${agent.id} was deleted after this key's first answer` }],
    );
  }

  /** Runs the change; on failure the operation is closed failed with helm's message. */
  private async journaled<T>(operation: OperationRecord, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      const failure = error instanceof AppError ? error : new AppError('backend_error', `helm failed: ${(error as Error).message}`);
      await this.repository.failOperation(operation.id, failure.code, failure.message);
      this.logger.warn(`${operation.kind} ${operation.namespace}/${operation.name} failed (operation ${operation.id}): ${failure.message}`);
      // helm failing against the cluster may have left part of the write (a release pending-install): not a refusal to forget.
      throw failure.code === 'backend_error' ? UncertainWrite.of(failure) : failure;
    }
  }

  /**
   * Records what was applied. When that cannot be done (the store failed, or this replica lost
   * its lock on the agent) the operation stays pending, to be recorded from what helm holds by
   * the next write on the agent or the recovery sweep, and the caller is told exactly that.
   */
  private async record<R>(operation: OperationRecord, lease: HeldLease, helmRevision: number | null, write: () => Promise<R>): Promise<R> {
    const applied = `helm applied the ${operation.kind} of ${operation.namespace}/${operation.name}${helmRevision ? ` (release revision ${helmRevision})` : ''}`;
    const after = `operation ${operation.id} stays pending and is recorded from what helm holds by the next write on this agent or the recovery sweep; a retry with the same idempotency key gets its answer, else read the agent again before retrying`;
    if (lease.lost) throw new UncertainWrite('backend_error', `${applied}, but this replica lost its lock on the agent before recording it; ${after}`);
    try {
      return await write();
    } catch (error) {
      this.logger.error(`recording operation ${operation.id} failed: ${(error as Error).stack ?? String(error)}`);
      throw new UncertainWrite('backend_error', `${applied}, but recording it in the store failed (${(error as Error).message}); ${after}`);
    }
  }
}

/**
 * The chart an install or upgrade applies, as its intent names it: recovery records the write with
 * exactly that chart (the bundled one while it stands in for AGENT_CHART, a rollout's target).
 */
function chartOfChange(change: Change, chart: ChartSource): IntentChart | undefined {
  if ('install' in change) return intentChart(chart);
  if ('upgrade' in change) return intentChart(change.upgrade.chart ?? chart);
  return undefined;
}

const valuesLogger = new Logger('HelmValues');

/** The values helm reports for the revision it applied; a difference from what was written is logged, helm's win. */
export function appliedValues(target: { namespace: string; name: string }, reported: Record<string, unknown>, written: ChartValues): ChartValues {
  if (!isDeepStrictEqual(reported, written)) valuesLogger.warn(`helm reports other values for ${target.namespace}/${target.name} than were written; recording helm's`);
  return chartValuesOf(reported);
}
