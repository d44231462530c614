import { isDeepStrictEqual } from 'node:util';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { AppConfig, AppError, Caller, OperationContexts } from '@app/common';
import { ChartSources, HelmClient, type ChartSource } from '@app/helm';
import { Tracing } from '@app/telemetry';
import { chartValuesOf, type AgentRecord, type OperationRecord } from '../persistence/records.js';
import { AgentsRepository } from '../persistence/agents.repository.js';
import type { AgentDto } from '../api/responses.dto.js';
import type { ChartValues, OperationKind } from '../domain/agent-spec.js';
import { agentView } from '../api/views.js';
import { auditOf } from '../persistence/journal.records.js';
import { OperationRecovery } from '../application/operation-recovery.service.js';
import { AgentLock, type HeldLease, type LockMode } from './agent-lock.js';
import { configuredChart } from './configured-chart.js';
import { IdempotencyGate, type ClaimedKey } from './idempotency-gate.js';
import type { AgentHolding, AgentWriteStore } from './ports.js';
import { ShutdownGate } from './shutdown-gate.js';
import { UncertainWrite } from './uncertain-write.js';
import type { PlanTools, WritePlan } from './write-plan.js';
import { ReleaseOwners, type OwnerEvidenceReader } from '../cluster/release-owners.js';
import { gitopsOwnerOf, ownedWarning, refuseGitopsOwned } from '../use-cases/checks.js';

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
    return { repository: this.repository, helm: this.helm, chart, caller, view: (record) => agentView(record, record.lastOperation) };
  }

  /** An agent read without its last operation (an earlier run's, by id) as answers show it. */
  private async view(record: AgentRecord): Promise<AgentDto> {
    return agentView(record, await this.repository.lastOperation(record.namespace, record.name, record.id));
  }

  /**
   * Runs the state change `plan` builds for `caller` (a use case: use-cases/*.ts). `options.chart`:
   * the chart the plan installs or upgrades to instead of the configured one (a rollout's target,
   * from ChartSources.resolve), which the agent's record then names.
   */
  async run<C, A, R>(caller: Caller, plan: (tools: PlanTools) => WritePlan<C, A, R>, options: { chart?: ChartSource } = {}): Promise<A> {
    const chart = options.chart ?? (await this.chart());
    return this.runPlan(caller, plan(this.tools(caller, chart)));
  }

  private runPlan<C, A, R>(caller: Caller, plan: WritePlan<C, A, R>): Promise<A> {
    const key = plan.dryRun ? undefined : plan.idempotencyKey;
    const hashed = { op: plan.kind, ref: { namespace: plan.namespace, name: plan.name }, request: plan.request };
    return this.keys.once(
      caller,
      key,
      hashed,
      async (claimed) => {
        if (!plan.dryRun) return this.exclusive(caller, plan, claimed);
        await this.settledForPreview(plan);
        const checked = await plan.check();
        const unchanged = await plan.unchanged?.(checked);
        return unchanged ?? this.warnedIfOwned(plan, await plan.preview(checked));
      },
      {
        settle: () => this.held(plan, async () => void (await this.recovery.settle(plan.namespace, plan.name))),
        recorded: (operationId) => this.recorded(plan, operationId),
        replayed: (answer, sent) => this.stillStands(plan, answer, sent),
      },
    );
  }

  /**
   * A dry run answers whoever owns the release (docs/contract.md §13); one whose answer carries
   * warnings (an update's) says the write itself would be refused, naming the owner. A failed read
   * of the owner leaves the dry run's answer as it is: the write would read it again.
   */
  private async warnedIfOwned<C, A, R>(plan: WritePlan<C, A, R>, answer: A): Promise<A> {
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
  private async settledForPreview<C, A, R>(plan: WritePlan<C, A, R>): Promise<void> {
    const { namespace, name } = plan;
    if (plan.settle === false || (await this.repository.pendingOperations({ namespace, name })).length === 0) return;
    await this.held(plan, () => this.recovery.settle(namespace, name, { freeStuckRelease: plan.freeStuckRelease }));
  }

  private exclusive<C, A, R>(caller: Caller, plan: WritePlan<C, A, R>, claimed?: ClaimedKey): Promise<A> {
    const { namespace, name } = plan;
    return this.held(plan, async (lease) => {
      const stuck = plan.settle === false ? [] : await this.recovery.settle(namespace, name, { freeStuckRelease: plan.freeStuckRelease });
      const checked = await plan.check();
      const unchanged = await plan.unchanged?.(checked);
      if (unchanged !== undefined) return unchanged;
      // After the plan's own checks (a missing agent, a stale version answer as before) and only for a write that changes something.
      if (plan.checkOwner !== false) await refuseGitopsOwned(this.owners, { namespace, name, operation: plan.operation ?? `${plan.kind}_agent` });
      const change = () => this.change(caller, plan, checked, stuck, lease, claimed);
      const traced = plan.trace?.(checked);
      return traced ? Tracing.span(traced.name, { root: true, attributes: traced.attributes }, change) : change();
    });
  }

  /** Journal → the change → record → answer, holding the agent. */
  private async change<C, A, R>(caller: Caller, plan: WritePlan<C, A, R>, checked: C, stuck: OperationRecord[], lease: HeldLease, claimed?: ClaimedKey): Promise<A> {
    const { namespace, name } = plan;
    const { kind = plan.kind, request = plan.request, step, ...entry } = plan.journal(checked);
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
      ...entry,
    });
    OperationContexts.journaled(operation.id);
    await OperationContexts.step(step ?? `checks passed: ${HELM_STEP[kind]} the helm release ${namespace}/${name}`);
    const applied = await this.journaled(operation, () => plan.apply(checked, stuck, operation.id));
    const recorded = await this.record(operation, lease, applied.helmRevision, () => plan.record(checked, applied, operation.id));
    // Under the lease still: no sweep resolves them meanwhile. The change is recorded by now; one
    // left pending here is settled by the next write or sweep (helm no longer holds it).
    if (stuck.length > 0) {
      await this.recovery.supersede(stuck, operation.id).catch((error: unknown) => {
        this.logger.warn(`the ${kind} of ${namespace}/${name} landed, but closing the operations it freed failed (the next write or sweep settles them): ${(error as Error).message}`);
      });
    }
    try {
      await plan.after?.(checked, operation.id);
      return await plan.answer(checked, applied, recorded);
    } catch (error) {
      // Recorded already: the key must not be forgotten (a retry would run the write again); it
      // lapses, and the retry answers from what the operation recorded.
      throw new UncertainWrite('backend_error', `the ${kind} of ${namespace}/${name} was recorded (operation ${operation.id}), but answering it failed: ${(error as Error).message}; read the agent, or retry with the same idempotency key`);
    }
  }

  /** The answer of an earlier run of this request that recorded its outcome but could not answer (it crashed, or the store failed). */
  private async recorded<C, A, R>(plan: WritePlan<C, A, R>, operationId: string): Promise<A> {
    const op = await this.repository.operation(operationId);
    const agent = op?.agentId ? await this.repository.agentById(op.agentId) : null;
    if (!op || !agent || !plan.recorded) throw new AppError('conflict', `the first request with this idempotency key ran as operation ${operationId}, whose agent the store no longer holds: send a new key`);
    const revision = await this.repository.revisionOfOperation(operationId);
    const previous = revision && revision.revision > 1 ? await this.repository.revision(agent.id, revision.revision - 1) : null;
    const manifests = op.helmRevision !== null ? ((await this.helm.status({ namespace: op.namespace, name: op.name }, op.helmRevision).catch(() => null))?.manifest ?? '') : '';
    return plan.recorded({ agent: await this.view(agent), revision, previous, manifests });
  }

  /** A replayed answer about an agent that was deleted since is refused, saying so: it no longer describes anything. */
  private async stillStands<C, A, R>(plan: WritePlan<C, A, R>, answer: A, sent: string): Promise<void> {
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

const valuesLogger = new Logger('HelmValues');

/** The values helm reports for the revision it applied; a difference from what was written is logged, helm's win. */
export function appliedValues(target: { namespace: string; name: string }, reported: Record<string, unknown>, written: ChartValues): ChartValues {
  if (!isDeepStrictEqual(reported, written)) valuesLogger.warn(`helm reports other values for ${target.namespace}/${target.name} than were written; recording helm's`);
  return chartValuesOf(reported);
}
