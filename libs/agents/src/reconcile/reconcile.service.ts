import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { AppConfig, AppError, Caller, OperationContexts } from '@app/common';
import { HelmClient, HelmReleases, type ListedRelease, type ReleaseRef } from '@app/helm';
import { KubeClient } from '@app/kube';
import { readLive, type LiveReader } from '../cluster/live-agent.js';
import { Metrics } from '@app/telemetry';
import { AgentsRepository } from '../persistence/agents.repository.js';
import { ManifestReader } from '../cluster/manifest-reader.js';
import { OperationRecovery } from '../application/operation-recovery.service.js';
import { decideReconcile, type ReleaseSide } from '../domain/recovery-decision.js';
import { AgentBusy } from '../runner/agent-lock.js';
import { WriteRunner } from '../runner/write-runner.js';
import { adoptAgent, AGENT_CHART_NAME, type AdoptResult } from '../use-cases/adopt-agent.js';
import { WATCHED_FLEET, type WatchedFleet } from './watched-fleet.js';
import { reconcileAgent, type Decided, type ReconcileItem, type ReconcileParts } from '../use-cases/reconcile-agent.js';

export { AGENT_CHART_NAME, type AdoptResult, type ReconcileItem };

/**
 * Brings store, helm release and live Agent back into agreement (recovery-decision.ts's
 * decideReconcile), on demand and for the automatic reconciler (fleet-reconciler.ts) when its
 * watches see something to do; and adopts releases of the agent chart the store does not know.
 * Every action is journaled as `reconciler@<replica>`.
 */
@Injectable()
export class Reconciler implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(Reconciler.name);
  private startup?: Promise<void>;
  private closed = false;

  constructor(
    private readonly config: AppConfig,
    private readonly repository: AgentsRepository,
    private readonly helm: HelmClient,
    private readonly releases: HelmReleases,
    @Inject(KubeClient) private readonly kube: LiveReader,
    private readonly recovery: OperationRecovery,
    private readonly runner: WriteRunner,
    private readonly manifests: ManifestReader,
    @Optional() private readonly metrics?: Metrics,
    @Optional() @Inject(WATCHED_FLEET) private readonly fleet?: WatchedFleet,
  ) {}

  get actor(): string {
    return `reconciler@${this.config.REPLICA_ID}`;
  }

  onApplicationBootstrap(): void {
    if (!this.config.backgroundWork) return;
    setImmediate(() => {
      if (!this.closed) this.startup = this.warnAboutLostStore();
    });
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    await this.startup;
  }

  /** What a reconcile action needs of the reconciler: its decision, and the recovery's closing of what it freed. */
  private readonly parts: ReconcileParts = {
    decide: (ref) => this.decide(ref),
    supersede: (ops, by) => this.recovery.supersede(ops, by),
  };

  /**
   * One agent, or every agent the store knows and every release of the agent chart; dryRun lists what it would do.
   * The reconciler reads and acts on the cluster as the service itself, whoever asked (no impersonation).
   */
  reconcile(caller: Caller, target: { namespace?: string; name?: string; dryRun?: boolean }): Promise<{ dryRun: boolean; items: ReconcileItem[] }> {
    return OperationContexts.asService(() => this.reconcileAsService(caller, target));
  }

  private async reconcileAsService(caller: Caller, target: { namespace?: string; name?: string; dryRun?: boolean }): Promise<{ dryRun: boolean; items: ReconcileItem[] }> {
    const dryRun = target.dryRun ?? false;
    if (target.name && !target.namespace) throw new AppError('invalid_request', 'name needs a namespace: pass both, or neither to reconcile every agent', [{ path: 'namespace', message: 'required with name' }]);
    if (!dryRun) await this.recovery.resolvePending();
    return this.pass(caller, target.namespace, target.name, dryRun);
  }

  /** `caller`: who asked for the pass (the sweep: nobody); its actions are journaled as the reconciler's. */
  private async pass(caller: Caller, namespace: string | undefined, name: string | undefined, dryRun: boolean): Promise<{ dryRun: boolean; items: ReconcileItem[] }> {
    const target = { namespace, name };
    const refs = target.namespace && target.name ? [{ namespace: target.namespace, name: target.name }] : await this.names(target.namespace);
    const reconciler = Caller.acting(caller, this.actor);
    const items: ReconcileItem[] = [];
    for (const ref of refs) {
      if (this.closed) throw new AppError('unavailable', `the service is stopping: ${items.length} of ${refs.length} agent(s) were reconciled; retry on a running replica`);
      items.push(await this.one(reconciler, ref, dryRun));
    }
    return { dryRun, items };
  }

  /** One agent decided from direct reads and acted on, for the automatic reconciler (fleet-reconciler.ts), which saw something to do. */
  reconcileOne(ref: ReleaseRef): Promise<ReconcileItem> {
    return OperationContexts.asService(() => this.one(Caller.acting(Caller.internal(), this.actor), ref, false));
  }

  /** Takes a release of the agent chart the store does not know into the store, its helm history as revisions (read as the service itself). */
  adopt(caller: Caller, ref: ReleaseRef & { dryRun?: boolean }, listed?: ListedRelease): Promise<AdoptResult> {
    return OperationContexts.asService(() => this.adoptAsService(caller, ref, listed));
  }

  private async adoptAsService(caller: Caller, ref: ReleaseRef & { dryRun?: boolean }, listed?: ListedRelease): Promise<AdoptResult> {
    const result = await this.runner.run(caller, adoptAgent(this.releases, ref, listed));
    if (!result.dryRun) this.logger.log(`adopted ${ref.namespace}/${ref.name} with ${result.revisions.length} revision(s) from helm`);
    return result;
  }

  /** Adopts every release of the agent chart the store does not know: `agent-manager store rebuild`. */
  rebuild(caller: Caller): Promise<{ adopted: string[]; skipped: { release: string; why: string }[] }> {
    return OperationContexts.asService(() => this.rebuildAsService(caller));
  }

  private async rebuildAsService(caller: Caller): Promise<{ adopted: string[]; skipped: { release: string; why: string }[] }> {
    const adopted: string[] = [];
    const skipped: { release: string; why: string }[] = [];
    for (const release of await this.releases.ofChart(AGENT_CHART_NAME)) {
      const key = `${release.namespace}/${release.name}`;
      if (await this.repository.findActive(release.namespace, release.name)) continue;
      try {
        await this.adopt(caller, release, release);
        adopted.push(key);
      } catch (error) {
        skipped.push({ release: key, why: (error as Error).message });
      }
    }
    return { adopted, skipped };
  }

  /** Every agent the store knows and every release of the agent chart: from the watches when they are synced, else from `helm list`. */
  private async names(namespace?: string): Promise<ReleaseRef[]> {
    const known = new Map<string, ReleaseRef>();
    for (const ref of await this.repository.activeNames()) known.set(`${ref.namespace}/${ref.name}`, ref);
    const released = this.fleet?.synced ? this.fleet.keys() : await this.releases.ofChart(AGENT_CHART_NAME);
    for (const r of released) known.set(`${r.namespace}/${r.name}`, { namespace: r.namespace, name: r.name });
    return [...known.values()].filter((ref) => namespace === undefined || ref.namespace === namespace).sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
  }

  /** Decides and acts on one agent through the write runner, as the service's own work: a live write holding it is left alone. */
  private async one(reconciler: Caller, ref: ReleaseRef, dryRun: boolean): Promise<ReconcileItem> {
    const item = await this.oneUncounted(reconciler, ref, dryRun);
    this.metrics?.reconcilerAction(item.action, item.done ? 'done' : item.error === 'busy' ? 'skipped' : item.error ? 'failed' : dryRun ? 'planned' : 'not_needed');
    return item;
  }

  private async oneUncounted(reconciler: Caller, ref: ReleaseRef, dryRun: boolean): Promise<ReconcileItem> {
    try {
      const item = await this.runner.run(reconciler, reconcileAgent(this.parts, ref, dryRun));
      if (item.done) this.logger.warn(`reconciled ${ref.namespace}/${ref.name}: ${item.detail}`);
      return item;
    } catch (error) {
      if (error instanceof AgentBusy) return { ...ref, action: 'none', detail: `a write holds the agent (operation ${error.holder.operationId}): reconciled after it`, done: false, error: 'busy' };
      return { ...ref, action: 'none', detail: 'reading or acting on the agent failed', done: false, error: (error as Error).message };
    }
  }

  private async decide(ref: ReleaseRef): Promise<Decided> {
    const agent = await this.repository.findActive(ref.namespace, ref.name);
    const createOp = agent ? null : await this.repository.unrecordedCreate(ref.namespace, ref.name);
    const intent = createOp?.intent ? { ...createOp.intent, operationId: createOp.id, state: createOp.state } : null;
    const info = await this.helm.status(ref);
    const lastDeployed = info?.status.startsWith('pending') ? await this.releases.lastDeployed(ref) : (info?.revision ?? null);
    // The Agent the release applied, for the drift status reports too (compareDrift): only a deployed release is compared.
    const applied = info?.status === 'deployed' ? await this.manifests.agentIn(info.manifest) : null;
    const release: ReleaseSide | null = info && { status: info.status, revision: info.revision, values: info.values, lastDeployed, agent: applied };
    const live = await readLive(this.kube, applied, ref.namespace, ref.name);
    const action = decideReconcile({ agent: agent && { helmRevision: agent.helmRevision, values: agent.values }, createIntent: intent?.values ?? null }, release, live);
    return { action, agent, intent };
  }

  /** At start: an empty store facing releases of the agent chart was probably lost; say so and how to adopt. */
  private async warnAboutLostStore(): Promise<void> {
    try {
      if ((await this.repository.countAgents()) > 0) return;
      // The watched releases when there are watches (no listing of every release in the cluster), else helm's list.
      const watched = this.fleet && (await this.fleet.whenSynced(60_000)) ? this.fleet.keys().filter((ref) => this.fleet!.release(ref)) : undefined;
      if (this.closed) return;
      const found = watched ?? (await this.releases.ofChart(AGENT_CHART_NAME));
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

