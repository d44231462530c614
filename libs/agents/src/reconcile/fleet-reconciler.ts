import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppConfig, OperationContexts } from '@app/common';
import type { ReleaseRef } from '@app/helm';
import { ClusterState, type LiveAgent } from '@app/kube';
import { Metrics } from '@app/telemetry';
import { AgentsRepository, type StoreSideRow } from '../persistence/agents.repository.js';
import { AgentLeaseRepository } from '../persistence/lease.repository.js';
import { ManifestReader } from '../cluster/manifest-reader.js';
import { decideReconcile } from '../domain/recovery-decision.js';
import type { ReconcileItem } from '../use-cases/reconcile-agent.js';
import { ReconcilerElection } from './reconciler-election.js';
import { WATCHED_FLEET, type WatchedFleet, type WatchedRelease } from './watched-fleet.js';
import { Reconciler } from './reconcile.service.js';

/** How long an agent whose view lags the store (or that a write holds) waits before it is decided again. */
const RETRY_MS = 2_000;
/** How long the watches may take to list before the reconciler says so (it keeps waiting). */
const SYNC_WARNING_MS = 60_000;
/** How long the reconciler waits after the store failed it before it goes on. */
const STORE_RETRY_MS = 10_000;
/** How often a service whose cluster does not answer asks again before it starts its watches. */
const CLUSTER_RETRY_MS = 10_000;
/** Store rows read per query during a full resync. */
const PAGE = 500;

const keyOf = (ref: ReleaseRef) => `${ref.namespace}/${ref.name}`;

/** What the view says of one agent, before anyone is asked: nothing to do, ask again later, or decide it for real. */
export type Triage = 'agree' | 'stale' | 'check';

/**
 * Triage of one agent from the watched release and Agent and the store's record, with the decision
 * table itself: `agree` when decideReconcile finds nothing to do, `stale` when the view has not yet
 * seen the release revision the store already recorded (another replica's write, a watch behind),
 * `check` for anything else — decided again from direct reads, under the agent's lock.
 */
export function triage(record: StoreSideRow | null, release: WatchedRelease | null, applied: LiveAgent | null, live: LiveAgent | null): Triage {
  if (record && release && record.helmRevision !== null && release.revision < record.helmRevision) return 'stale';
  if (!record && !release && !live) return 'agree';
  const side = release && { status: release.status, revision: release.revision, values: release.values, lastDeployed: release.lastDeployed, agent: applied };
  const action = decideReconcile({ agent: record && { helmRevision: record.helmRevision, values: record.values }, createIntent: null }, side, live);
  return action.action === 'none' ? 'agree' : 'check';
}

/**
 * The automatic reconciler of a serving replica. Every serving replica watches the agent chart's
 * releases and the live Agents (FleetView, also what status reads use); the one that holds the
 * reconciler lease (ReconcilerElection) decides an agent when its release or live Agent changed,
 * and every agent once per RECONCILE_RESYNC_SECONDS, at most RECONCILE_RATE decisions a second.
 * A decision is made from the view: an agent that agrees costs no helm process, no lease and no
 * write; anything else goes to the Reconciler, which decides it again from direct reads under the
 * agent's lock and acts. Shutdown stops between two agents; the next reconciler resumes.
 */
@Injectable()
export class FleetReconciler implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Reconciler');
  private election?: ReconcilerElection;
  private loop?: Promise<void>;
  private wake?: () => void;
  private closed = false;
  private unsubscribe?: () => void;
  /** Agents whose release, live Agent or record changed since they were last decided. */
  private readonly dirty = new Map<string, ReleaseRef>();
  /** What was last reported of an agent, so a finding is logged and counted once, not at every resync. */
  private readonly findings = new Map<string, string>();
  /** The Agent each release's current revision applied, parsed once per revision. */
  private readonly applied = new Map<string, { revision: number; agent: LiveAgent | null }>();
  private nextResync = 0;
  private probing?: Promise<void>;
  private retry?: NodeJS.Timeout;
  private nextSlot = 0;

  constructor(
    private readonly config: AppConfig,
    private readonly repository: AgentsRepository,
    private readonly leases: AgentLeaseRepository,
    @Inject(WATCHED_FLEET) private readonly view: WatchedFleet,
    private readonly manifests: ManifestReader,
    private readonly reconciler: Reconciler,
    private readonly cluster: ClusterState,
    @Optional() private readonly metrics?: Metrics,
  ) {}

  /** Whether this replica is the reconciler now. */
  get leading(): boolean {
    return this.election?.leading ?? false;
  }

  onApplicationBootstrap(): void {
    if (!this.config.backgroundWork) return;
    this.watchOnceReachable();
    if (!this.config.RECONCILE_AUTOMATIC) return;
    this.metrics?.watchReconciler(() => this.leading);
    this.unsubscribe = this.view.onChange((change) => this.changed(change));
    this.election = new ReconcilerElection(this.leases, `reconciler@${this.config.REPLICA_ID}`, this.config.LEASE_TTL_SECONDS * 1000, (leading) => {
      if (leading) this.begin();
      else this.wake?.();
    });
    this.election.start();
  }

  /**
   * Starts the watches once the cluster's API server accepts connections (asked again every
   * CLUSTER_RETRY_MS until it does): a service pointed at no cluster loads no Kubernetes client.
   */
  private watchOnceReachable(): void {
    const attempt = () => {
      this.probing = this.cluster.problem().then((problem) => {
        if (this.closed) return;
        if (problem === undefined) return this.view.start(this.config.WATCH_NAMESPACES);
        this.retry = setTimeout(attempt, CLUSTER_RETRY_MS);
        this.retry.unref();
      }, () => undefined);
    };
    attempt();
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    await this.probing;
    this.unsubscribe?.();
    this.wake?.();
    await this.loop;
    await this.election?.stop();
    await this.view.stop();
  }

  /** A change the watches saw; before they first synced, the resync that follows covers everything. */
  private changed(change: { namespace: string; name: string }): void {
    if (!this.leading || !this.view.synced) return;
    this.dirty.set(keyOf(change), { namespace: change.namespace, name: change.name });
    this.wake?.();
  }

  /** Became the reconciler: decide everything once, then what changes. */
  private begin(): void {
    this.nextResync = 0;
    this.loop ??= OperationContexts.asService(() => this.run())
      .catch((error: unknown) => this.logger.error(`the reconciler stopped: ${(error as Error).message}`))
      .finally(() => (this.loop = undefined));
  }

  private get running(): boolean {
    return this.leading && !this.closed;
  }

  private async run(): Promise<void> {
    const warning = setTimeout(() => this.logger.warn(`the watches of releases and Agents have not listed after ${SYNC_WARNING_MS / 1000}s: the reconciler waits for them (check the service account may list and watch secrets and agents.kagent.dev)`), SYNC_WARNING_MS);
    while (this.running && !this.view.synced) await this.pause(1_000);
    clearTimeout(warning);
    while (this.running) {
      try {
        if (this.dirty.size > 0) {
          await this.decideChanged();
          continue;
        }
        if (Date.now() >= this.nextResync) {
          await this.resync();
          this.nextResync = Date.now() + this.config.RECONCILE_RESYNC_SECONDS * 1000;
          continue;
        }
        await this.pause(this.nextResync - Date.now());
      } catch (error) {
        // The store failing a read (a resync's page, a changed agent's record): said, and tried again shortly.
        this.logger.warn(`the reconciler could not read the store, it tries again in ${STORE_RETRY_MS / 1000}s: ${(error as Error).message}`);
        await this.pause(STORE_RETRY_MS);
      }
    }
  }

  /** Waits `ms`, or less when something changed or the service stops. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(0, ms));
      timer.unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }

  /** Waits for the next of RECONCILE_RATE decision slots a second (changes and resyncs share them). */
  private async slot(): Promise<void> {
    const now = Date.now();
    const at = Math.max(now, this.nextSlot);
    this.nextSlot = at + 1000 / this.config.RECONCILE_RATE;
    if (at > now) await sleep(at - now);
  }

  private async decideChanged(): Promise<void> {
    const [key, ref] = this.dirty.entries().next().value!;
    this.dirty.delete(key);
    await this.slot();
    const found = await this.repository.findActive(ref.namespace, ref.name).catch((error: unknown) => {
      this.dirty.set(key, ref); // decided once the store answers again
      throw error;
    });
    await this.decide(ref, found && { namespace: found.namespace, name: found.name, helmRevision: found.helmRevision, values: found.values });
  }

  /**
   * Every agent the store or the view knows, decided once, at most RECONCILE_RATE a second;
   * agents that changed meanwhile are decided first. Stops between two agents when the service
   * stops or this replica is no longer the reconciler.
   */
  private async resync(): Promise<void> {
    const started = Date.now();
    const cpu = process.cpuUsage();
    const unseen = new Map(this.view.keys().map((ref) => [keyOf(ref), ref]));
    this.logger.log(`full resync started: every agent decided again, at most ${this.config.RECONCILE_RATE} a second`);
    let decided = 0;
    let acted = 0;
    const pace = async () => {
      while (this.running && this.dirty.size > 0) await this.decideChanged();
      await this.slot();
    };
    let after: StoreSideRow | null = null;
    pages: for (;;) {
      const rows = await this.repository.reconcilePage(after, PAGE);
      for (const row of rows) {
        if (!this.running) break pages;
        await pace();
        unseen.delete(keyOf(row));
        if (await this.decide(row, row)) acted++;
        decided++;
      }
      if (rows.length < PAGE) break;
      after = rows[rows.length - 1];
    }
    for (const ref of unseen.values()) {
      if (!this.running) break;
      await pace();
      if (await this.decide(ref, null)) acted++;
      decided++;
    }
    if (!this.running) return this.logger.log(`full resync interrupted after ${decided} agent(s): the next reconciler starts it again`);
    const used = process.cpuUsage(cpu);
    this.metrics?.reconcilerResync();
    this.logger.log({
      msg: `full resync done: ${decided} agent(s) decided, ${acted} checked against helm, in ${((Date.now() - started) / 1000).toFixed(1)}s`,
      agents: this.view.keys().length,
      decided,
      acted,
      seconds: (Date.now() - started) / 1000,
      cpuSeconds: (used.user + used.system) / 1e6,
    });
  }

  /** One agent: triaged from the view; checked for real when the view sees something to do. True when it was checked. */
  private async decide(ref: ReleaseRef, record: StoreSideRow | null): Promise<boolean> {
    const key = keyOf(ref);
    try {
      const release = this.view.release(ref);
      const live = this.view.agent(ref);
      const verdict = triage(record, release, await this.appliedAgent(key, release), live);
      if (verdict === 'stale') return this.later(ref), false;
      if (verdict === 'agree') {
        this.metrics?.reconcilerAction('none', 'not_needed');
        this.findings.delete(key);
        if (!release) this.applied.delete(key);
        return false;
      }
      const item = await this.reconciler.reconcileOne(ref);
      this.report(item);
      // A release helm holds but the watches do not see: written before agent-manager labelled its releases.
      if (record && !release && item.action !== 'report' && !item.error) await this.label(ref);
      return true;
    } catch (error) {
      this.logger.warn(`deciding ${key} failed, it is decided again at the next change or resync: ${(error as Error).message}`);
      return false;
    }
  }

  private async label(ref: ReleaseRef): Promise<void> {
    const labelled = await this.view.labelRelease(ref);
    if (labelled > 0) this.logger.log(`labelled ${labelled} revision(s) of release ${keyOf(ref)} as agent-manager's (written before it labelled its releases): the watches see it from now on`);
  }

  private later(ref: ReleaseRef): void {
    setTimeout(() => this.changed(ref), RETRY_MS).unref();
  }

  /** What a real check found: an action done is logged by the Reconciler; a finding once; a busy agent later. */
  private report(item: ReconcileItem): void {
    const key = keyOf(item);
    if (item.error === 'busy') return this.later(item);
    if (item.action !== 'report') return void this.findings.delete(key);
    const said = `${item.finding}: ${item.detail}`;
    if (this.findings.get(key) === said) return;
    this.findings.set(key, said);
    this.metrics?.reconcilerFinding(item.finding ?? 'unknown');
    this.logger.warn({ msg: `reconciler found ${key} ${said}`, agent: key, finding: item.finding });
  }

  /** The Agent the release's current revision applied (only a deployed release is compared), parsed once per revision. */
  private async appliedAgent(key: string, release: WatchedRelease | null): Promise<LiveAgent | null> {
    if (!release || release.status !== 'deployed') return null;
    const known = this.applied.get(key);
    if (known?.revision === release.revision) return known.agent;
    const agent = await this.manifests.agentIn(release.manifest);
    this.applied.set(key, { revision: release.revision, agent });
    return agent;
  }
}
