import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger, Optional, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { AppConfig, AppError, OperationContexts } from '@app/common';
import { HelmClient, HelmReleases, type ListedRelease, type ReleaseRef } from '@app/helm';
import { KubeClient } from '@app/kube';
import { Metrics, Tracing } from '@app/telemetry';
import { AgentLeaseRepository, isRecoveryHolder, recoveryOwner, type LeaseHolder, type LeaseResult } from '../agent-lease.repository.js';
import { AgentWrites } from '../agent-writes.service.js';
import { chartValuesOf, type AgentRecord } from '../agents.records.js';
import { AgentsRepository, type AppliedChange } from '../agents.repository.js';
import type { AgentDto } from '../agents.responses.js';
import type { AgentSpec, ChartValues, OperationIntent, OperationKind } from '../agents.types.js';
import { agentView } from '../agents.views.js';
import { ManifestReader } from '../manifest-reader.js';
import { auditOf } from '../audit/audit.records.js';
import { OperationRecovery } from '../operation-recovery.service.js';
import { decideReconcile, type ReconcileAction, type ReleaseSide } from '../recovery-decision.js';

/** The chart's own name (charts/agent/Chart.yaml): releases of it are agents. */
export const AGENT_CHART_NAME = 'agent';

export interface ReconcileItem {
  namespace: string;
  name: string;
  /** What the decision table chose, with why for a report. */
  action: ReconcileAction['action'];
  finding?: string;
  detail: string;
  /** Set when the action was carried out (never on a dry run or a report). */
  done: boolean;
  /** Set when the agent was skipped (a write holds it) or the action failed. */
  error?: string;
}

export interface AdoptResult {
  dryRun: boolean;
  agent: AgentDto | null;
  /** The helm revisions taken in as agent-manager revisions, oldest first. */
  revisions: { revision: number; helmRevision: number; status: string }[];
}

/**
 * Brings store, helm release and live Agent back into agreement (recovery-decision.ts's
 * decideReconcile), on every recovery sweep and on demand; and adopts releases of the agent
 * chart the store does not know. Every action is journaled as `reconciler@<replica>`.
 */
@Injectable()
export class Reconciler implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(Reconciler.name);
  private startup?: Promise<void>;
  private closed = false;

  constructor(
    private readonly config: AppConfig,
    private readonly repository: AgentsRepository,
    private readonly leases: AgentLeaseRepository,
    private readonly helm: HelmClient,
    private readonly releases: HelmReleases,
    private readonly kube: KubeClient,
    private readonly recovery: OperationRecovery,
    private readonly writes: AgentWrites,
    private readonly manifests: ManifestReader,
    @Optional() private readonly metrics?: Metrics,
  ) {}

  get actor(): string {
    return `reconciler@${this.config.REPLICA_ID}`;
  }

  onApplicationBootstrap(): void {
    if (this.config.RECONCILE_AUTOMATIC) this.recovery.afterSweep(() => this.sweepPass());
    setImmediate(() => {
      if (!this.closed) this.startup = this.warnAboutLostStore();
    });
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    await this.startup;
  }

  /** Why the last automatic pass could not run, while it keeps failing for that reason. */
  private skipped?: string;

  /**
   * One agent, or every agent the store knows and every release of the agent chart; dryRun lists what it would do.
   * The reconciler reads and acts on the cluster as the service itself, whoever asked (no impersonation).
   */
  reconcile(target: { namespace?: string; name?: string; dryRun?: boolean }): Promise<{ dryRun: boolean; items: ReconcileItem[] }> {
    return OperationContexts.asService(() => this.reconcileAsService(target));
  }

  private async reconcileAsService(target: { namespace?: string; name?: string; dryRun?: boolean }): Promise<{ dryRun: boolean; items: ReconcileItem[] }> {
    const dryRun = target.dryRun ?? false;
    if (target.name && !target.namespace) throw new AppError('invalid_request', 'name needs a namespace: pass both, or neither to reconcile every agent', [{ path: 'namespace', message: 'required with name' }]);
    if (!dryRun) await this.recovery.resolvePending();
    return this.pass(target.namespace, target.name, dryRun);
  }

  private async pass(namespace: string | undefined, name: string | undefined, dryRun: boolean): Promise<{ dryRun: boolean; items: ReconcileItem[] }> {
    const target = { namespace, name };
    const refs = target.namespace && target.name ? [{ namespace: target.namespace, name: target.name }] : await this.names(target.namespace);
    const items: ReconcileItem[] = [];
    for (const ref of refs) {
      const item = await this.one(ref, dryRun);
      this.metrics?.reconcilerAction(item.action, item.done ? 'done' : item.error === 'busy' ? 'skipped' : item.error ? 'failed' : dryRun ? 'planned' : 'not_needed');
      items.push(item);
    }
    return { dryRun, items };
  }

  /** Takes a release of the agent chart the store does not know into the store, its helm history as revisions (read as the service itself). */
  adopt(ref: ReleaseRef & { dryRun?: boolean }, listed?: ListedRelease): Promise<AdoptResult> {
    return OperationContexts.asService(() => this.adoptAsService(ref, listed));
  }

  private async adoptAsService(ref: ReleaseRef & { dryRun?: boolean }, listed?: ListedRelease): Promise<AdoptResult> {
    const { namespace, name } = ref;
    const notKnown = async () => {
      if (await this.repository.findActive(namespace, name)) {
        throw new AppError('conflict', `agent ${namespace}/${name} is already in the store: nothing to adopt (reconcile_agents compares it with its release)`);
      }
    };
    await notKnown();
    const release = await this.helm.status(ref);
    if (!release) throw new AppError('not_found', `helm has no release ${namespace}/${name} to adopt: list the cluster's releases with helm list --all-namespaces`);
    // `helm status` does not name the chart; `helm list` does.
    const ofChart = listed ?? (await this.releases.ofChart(AGENT_CHART_NAME)).find((r) => r.namespace === namespace && r.name === name);
    if (!ofChart) {
      throw new AppError('invalid_request', `release ${namespace}/${name} is not of the agent chart (${AGENT_CHART_NAME}): agent-manager adopts only releases of its agent chart`);
    }
    if (release.status !== 'deployed') {
      throw new AppError('conflict', `release ${namespace}/${name} is ${release.status}: reconcile it first (POST /api/v1/reconcile), then adopt it once it is deployed`);
    }
    const history = (await this.releases.revisions(ref)).filter((r) => r.status === 'deployed' || r.status === 'superseded');
    // A release without a toolset is a legacy agent with implicit full access to the gateway (docs/contract.md §5):
    // recorded, it would read as "no tools" and every later write would render an empty toolset.
    if (history.length > 0 && !Array.isArray(history[history.length - 1].values.toolset)) {
      throw new AppError(
        'conflict',
        `release ${namespace}/${name} declares no toolset: it is a legacy agent with implicit full access to the gateway, which agent-manager does not manage; ` +
          `declare its toolset first (e.g. helm upgrade ${name} --namespace ${namespace} --reuse-values --set-json 'toolset=["preset:read-only"]'), then adopt it`,
        [{ path: 'toolset', message: 'the release has no toolset value' }],
      );
    }
    const revisions = history.map((r, at) => ({ revision: at + 1, helmRevision: r.revision, status: r.status }));
    if (ref.dryRun) return { dryRun: true, agent: null, revisions };
    const actor = OperationContexts.current().actor;
    const chart = { ref: this.config.chartRef, version: ofChart.chart.slice(AGENT_CHART_NAME.length + 1) };
    // Checked again under the agent's lease: a concurrent adopt (or a create) may have recorded it meanwhile.
    const agent = await this.writes.exclusive(namespace, name, notKnown, async (operationId) => {
      const changes: AppliedChange[] = history.map((r, at) => change(chartValuesOf(r.values), r.revision, at === 0 ? 'create' : 'update', actor, operationId));
      await this.journal(operationId, 'create', ref, actor, { adopt: true, helmRevisions: revisions.map((r) => r.helmRevision) }, changes[changes.length - 1], undefined, 'adopt_agent');
      return this.repository.recordAdoption(namespace, name, chart, changes, operationId);
    });
    this.logger.log(`adopted ${namespace}/${name} with ${revisions.length} revision(s) from helm`);
    return { dryRun: false, agent: agentView(agent, await this.repository.lastOperation(namespace, name, agent.id)), revisions };
  }

  /** Adopts every release of the agent chart the store does not know: `agent-manager store rebuild`. */
  rebuild(): Promise<{ adopted: string[]; skipped: { release: string; why: string }[] }> {
    return OperationContexts.asService(() => this.rebuildAsService());
  }

  private async rebuildAsService(): Promise<{ adopted: string[]; skipped: { release: string; why: string }[] }> {
    const adopted: string[] = [];
    const skipped: { release: string; why: string }[] = [];
    for (const release of await this.releases.ofChart(AGENT_CHART_NAME)) {
      const key = `${release.namespace}/${release.name}`;
      if (await this.repository.findActive(release.namespace, release.name)) continue;
      try {
        await this.adopt(release, release);
        adopted.push(key);
      } catch (error) {
        skipped.push({ release: key, why: (error as Error).message });
      }
    }
    return { adopted, skipped };
  }

  private async names(namespace?: string): Promise<ReleaseRef[]> {
    const known = new Map<string, ReleaseRef>();
    for (const ref of await this.repository.activeNames()) known.set(`${ref.namespace}/${ref.name}`, ref);
    for (const r of await this.releases.ofChart(AGENT_CHART_NAME)) known.set(`${r.namespace}/${r.name}`, { namespace: r.namespace, name: r.name });
    return [...known.values()].filter((ref) => namespace === undefined || ref.namespace === namespace).sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
  }

  /** Decides and acts on one agent under the recovery lease: a live write holding it is left alone. */
  private async one(ref: ReleaseRef, dryRun: boolean): Promise<ReconcileItem> {
    const key = `${ref.namespace}/${ref.name}`;
    const owner = recoveryOwner(this.config.REPLICA_ID);
    const leaseId = randomUUID();
    const ttl = this.config.LEASE_TTL_SECONDS * 1000;
    if (!dryRun) {
      const lease = await this.acquire(key, owner, leaseId, ttl);
      if (!lease.acquired) return { ...ref, action: 'none', detail: `a write holds the agent (operation ${lease.holder.operationId}): reconciled after it`, done: false, error: 'busy' };
    }
    const stop = dryRun ? () => undefined : this.leases.keepAlive(key, owner, leaseId, ttl, (message) => this.logger.warn(message));
    try {
      const { action, agent, intent } = await this.decide(ref);
      const item: ReconcileItem = { ...ref, action: action.action, detail: describe(action), done: false, ...(action.action === 'report' ? { finding: action.finding } : {}) };
      if (dryRun || action.action === 'none' || action.action === 'report') return item;
      // A pass that acts is traced (its own trace when the sweep runs it); one that finds nothing to do is not.
      const attributes = { 'agent_manager.reconcile.action': action.action, 'agent_manager.agent': key };
      await Tracing.span(`reconcile ${action.action}`, { root: true, attributes }, () => this.act(ref, action, agent, intent));
      this.logger.warn(`reconciled ${key}: ${item.detail}`);
      return { ...item, done: true };
    } catch (error) {
      return { ...ref, action: 'none', detail: 'reading or acting on the agent failed', done: false, error: (error as Error).message };
    } finally {
      stop();
      if (!dryRun) await this.leases.release(key, owner, leaseId).catch(() => undefined);
    }
  }

  /** The agent's lease; a recovery sweep's brief hold (on any replica) is waited out for up to one TTL, a write's is not. */
  private async acquire(key: string, owner: string, leaseId: string, ttl: number): Promise<LeaseResult> {
    const deadline = Date.now() + ttl;
    for (;;) {
      const lease = await this.leases.acquire(key, owner, leaseId, ttl);
      if (lease.acquired || !isRecoveryHolder(lease.holder) || Date.now() > deadline) return lease;
      // Wait by reading, not by inserting (as AgentWrites does): each refused insert is a failed
      // store query in the metrics and an error in PostgreSQL's log, while sweeps contend as a rule.
      let holder: LeaseHolder | null = lease.holder;
      while (holder && isRecoveryHolder(holder) && holder.operationId === lease.holder.operationId && Date.now() <= deadline) {
        await sleep(100);
        holder = await this.leases.holder(key);
      }
    }
  }

  private async decide(ref: ReleaseRef) {
    const agent = await this.repository.findActive(ref.namespace, ref.name);
    const createOp = agent ? null : await this.repository.unrecordedCreate(ref.namespace, ref.name);
    const intent = createOp?.intent ? { ...createOp.intent, operationId: createOp.id, state: createOp.state } : null;
    const info = await this.helm.status(ref);
    const lastDeployed = info?.status.startsWith('pending') ? await this.releases.lastDeployed(ref) : (info?.revision ?? null);
    // The Agent the release applied, for the drift status reports too (compareDrift): only a deployed release is compared.
    const applied = info?.status === 'deployed' ? await this.manifests.agentIn(info.manifest) : null;
    const release: ReleaseSide | null = info && { status: info.status, revision: info.revision, values: info.values, lastDeployed, agent: applied };
    const live = await this.kube.getAgent(ref.namespace, ref.name);
    const action = decideReconcile({ agent: agent && { helmRevision: agent.helmRevision, values: agent.values }, createIntent: intent?.values ?? null }, release, live);
    return { action, agent, intent };
  }

  /** `intent`: the journal's create of this release and what it meant to write (its blueprint origin too). */
  private async act(ref: ReleaseRef, action: ReconcileAction, agent: AgentRecord | null, intent: (OperationIntent & { operationId: string; state: string }) | null) {
    const operationId = randomUUID();
    const chart = { ref: this.config.chartRef, version: this.config.AGENT_CHART_VERSION };
    const request = { reconcile: action.action, ...(intent ? { recovers: intent.operationId } : {}) };
    if (action.action === 'record-create' && intent) {
      const info = await this.helm.status(ref);
      await this.journal(operationId, 'create', ref, this.actor, request, { spec: intent.spec, values: intent.values, origin: intent.origin });
      await this.repository.recordCreate(ref.namespace, ref.name, chart, { ...change(intent.values, info?.revision ?? 1, 'create', this.actor, operationId), spec: intent.spec, origin: intent.origin });
    } else if (action.action === 'uninstall') {
      await this.journal(operationId, 'delete', ref, this.actor, request);
      await this.helm.uninstall(ref);
      await this.repository.succeedOperation(operationId);
    } else if (action.action === 'reinstall') {
      // From the intent: the create's blueprint origin goes with it (a record keeps its own).
      const source: OperationIntent = action.from === 'record' && agent ? { spec: agent.spec, values: agent.values } : { spec: intent!.spec, values: intent!.values, origin: intent!.origin };
      await this.journal(operationId, action.from === 'record' ? 'update' : 'create', ref, this.actor, request, source, agent?.id);
      await this.helm.uninstall(ref);
      const installed = await this.helm.install(ref, chart, source.values);
      const applied = { ...change(chartValuesOf(installed.values), installed.revision, action.from === 'record' ? 'update' : 'create', this.actor, operationId), spec: source.spec, origin: source.origin };
      if (agent) await this.repository.recordChange(agent, applied);
      else await this.repository.recordCreate(ref.namespace, ref.name, chart, applied);
    } else if (action.action === 'rollback' && agent) {
      await this.journal(operationId, 'rollback', ref, this.actor, request, { spec: agent.spec, values: agent.values }, agent.id);
      const stuck = (await this.repository.pendingOperations(ref)).filter((op) => op.id !== operationId); // not this pass's own entry
      await this.helm.rollback(ref, action.to);
      const info = await this.helm.status(ref);
      await this.recovery.supersede(stuck, operationId);
      await this.repository.recordChange(agent, { ...change(chartValuesOf(info?.values ?? {}), info?.revision ?? null, 'rollback', this.actor, operationId), spec: agent.spec });
    } else if (action.action === 'rollback') {
      await this.journal(operationId, 'rollback', ref, this.actor, request);
      await this.helm.rollback(ref, action.to);
      await this.repository.succeedOperation(operationId);
    }
    if (intent?.state === 'pending') await this.recovery.supersede([(await this.repository.operation(intent.operationId))!], operationId);
    // The create's intent is what landed now: a retry of it with its idempotency key answers from this operation.
    if (intent && (action.action === 'record-create' || (action.action === 'reinstall' && action.from === 'intent'))) {
      await this.repository.relinkKeys(intent.operationId, operationId);
    }
  }

  /** Journals the reconciler's own write (`reconcile_agents`) or an adoption (`adopt_agent`), with who asked for it (the sweep: the service itself). */
  private journal(id: string, kind: OperationKind, ref: ReleaseRef, actor: string, request: unknown, intent?: OperationIntent, agentId?: string, operation = 'reconcile_agents') {
    const audit = auditOf(OperationContexts.current(), operation);
    return this.repository.startOperation({ id, kind, ...ref, agentId, request, actor, audit, owner: this.config.REPLICA_ID, intent, baseHelmRevision: null });
  }

  /** Run by the recovery sweep: a full pass, quiet when there is no cluster to compare with. */
  private async sweepPass(): Promise<void> {
    try {
      await OperationContexts.asService(() => this.pass(undefined, undefined, false));
      this.skipped = undefined;
    } catch (error) {
      // A warning when the reason is new (RBAC refusing helm list, an unreachable cluster), not at every sweep.
      const why = (error as Error).message;
      if (why === this.skipped) this.logger.debug(`reconcile pass skipped: ${why}`);
      else this.logger.warn(`automatic reconcile passes are skipped until this is fixed (said once; debug repeats it): ${why}`);
      this.skipped = why;
    }
  }

  /** At start: an empty store facing releases of the agent chart was probably lost; say so and how to adopt. */
  private async warnAboutLostStore(): Promise<void> {
    try {
      if ((await this.repository.countAgents()) > 0) return;
      const found = await this.releases.ofChart(AGENT_CHART_NAME);
      if (found.length === 0) return;
      const names = found.slice(0, 5).map((r) => `${r.namespace}/${r.name}`).join(', ');
      this.logger.warn(
        `the store holds no agents, but the cluster has ${found.length} release(s) of the agent chart (${names}${found.length > 5 ? ', …' : ''}): ` +
          'if the store was lost, run `agent-manager store rebuild` to adopt them all, or adopt one with POST /api/v1/agents/adopt (adopt_agent)',
      );
    } catch (error) {
      this.logger.debug(`could not compare the store with the cluster's releases: ${(error as Error).message}`);
    }
  }
}

function change(values: ChartValues, helmRevision: number | null, kind: 'create' | 'update' | 'rollback', actor: string, operationId: string): AppliedChange {
  return { spec: specOf(values), values, helmRevision, kind, actor, operationId };
}

/** The declared fields behind chart values agent-manager wrote: empty optional fields were not declared. */
export function specOf(values: ChartValues): AgentSpec {
  const spec: AgentSpec = { modelConfig: values.modelConfig, toolset: [...(values.toolset ?? [])] };
  if (values.description) spec.description = values.description;
  if (values.displayName) spec.displayName = values.displayName;
  if (values.systemMessage) spec.systemMessage = values.systemMessage;
  if (values.labels && Object.keys(values.labels).length > 0) spec.labels = { ...values.labels };
  if (values.annotations && Object.keys(values.annotations).length > 0) spec.annotations = { ...values.annotations };
  return spec;
}

function describe(action: ReconcileAction): string {
  switch (action.action) {
    case 'none': return 'store, helm release and Agent agree';
    case 'record-create': return 'helm deployed a create the store did not record: record it (recovered)';
    case 'uninstall': return `uninstall the half-release: ${action.why}`;
    case 'reinstall': return `helm left the install pending: install it again from the ${action.from === 'record' ? "agent's record" : "create's intent"}`;
    case 'rollback': return `helm left a change pending: roll back to revision ${action.to}, the last deployed`;
    case 'report': return action.why;
  }
}
