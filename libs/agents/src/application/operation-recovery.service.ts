import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { AppConfig, AppError, OperationContexts, PeriodicSweep } from '@app/common';
import { ChartSources, HelmClient } from '@app/helm';
import { Tracing } from '@app/telemetry';
import { AgentsRepository } from '../persistence/agents.repository.js';
import type { AgentRecord, OperationRecord } from '../persistence/records.js';
import { decideRecovery } from '../domain/recovery-decision.js';
import { AgentBusy, AgentLock } from '../runner/agent-lock.js';
import { configuredChart } from '../runner/configured-chart.js';
import { IdempotencyGate } from '../runner/idempotency-gate.js';
import type { AgentHolding, AgentWriteStore } from '../runner/ports.js';
import { recordWrite } from '../runner/record-write.js';
import type { RecordOf } from '../runner/write-plan.js';

/**
 * What became of an interrupted write; `undecided` says why it stays pending and what to do,
 * and `heldPending` is set when helm itself holds the release pending-* (a rollback can free it).
 */
export type Resolution = 'landed' | 'did-not-land' | { undecided: string; heldPending?: string };

/**
 * Resolves writes left pending by a crashed replica against what the cluster really holds:
 * a change helm applied is recorded as the revision it is; one it did not apply is marked
 * failed; while helm's own state is still pending or unreadable, nothing is guessed and the
 * operation stays pending for the next sweep.
 */
@Injectable()
export class OperationRecovery implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(OperationRecovery.name);
  private readonly sweeps = new PeriodicSweep(
    () => this.resolvePending(),
    (error) => this.logger.warn(`the recovery sweep failed, the next one tries again: ${error.message}`),
  );
  private resolving?: Promise<void>;

  constructor(
    private readonly config: AppConfig,
    @Inject(AgentsRepository) private readonly repository: AgentWriteStore,
    @Inject(AgentLock) private readonly lock: AgentHolding,
    private readonly helm: HelmClient,
    private readonly keys: IdempotencyGate,
    /** The chart for a create journaled without the one it installed (by an earlier version), decided as the write runner decides it. */
    @Optional() private readonly charts?: ChartSources,
  ) {}

  /**
   * The first sweep runs after start, off the way to a healthy /healthz: a write settles its own
   * agent's pending operations anyway. A command (stdio MCP, store rebuild) runs none.
   */
  onApplicationBootstrap(): void {
    if (!this.config.backgroundWork) return;
    this.sweeps.start(this.config.LEASE_TTL_SECONDS * 1000, { now: true });
  }

  /** Waits for the operation being resolved, not for the rest of the sweep: it stops between operations. */
  async onModuleDestroy(): Promise<void> {
    await this.sweeps.stop();
  }

  /** Resolves every pending operation whose replica is gone (no live lease holds it). */
  sweep(): Promise<void> {
    return this.sweeps.run();
  }

  /** Resolves the pending operations no live lease holds, without the follow-ups (one pass at a time). */
  resolvePending(): Promise<void> {
    this.resolving ??= this.sweepOnce().finally(() => (this.resolving = undefined));
    return this.resolving;
  }

  /** Finished journal entries past JOURNAL_RETENTION_DAYS go, a bounded number per sweep; a failure waits for the next sweep. */
  private async purgeJournal(): Promise<void> {
    const days = this.config.JOURNAL_RETENTION_DAYS;
    if (days === 0) return;
    await this.repository.purgeJournal(days * 86_400_000).catch((error: unknown) => {
      this.logger.warn(`removing journal entries older than ${days} days failed, the next sweep tries again: ${(error as Error).message}`);
    });
  }

  private async sweepOnce(): Promise<void> {
    await this.purgeJournal();
    let pending: OperationRecord[];
    try {
      await this.keys.purgeExpired();
      pending = await this.repository.pendingOperations();
    } catch (error) {
      this.logger.warn(`reading pending operations failed: ${(error as Error).message}`);
      return;
    }
    for (const seen of pending) {
      if (this.sweeps.stopped) return; // the next sweep, here or on another replica, takes the rest
      // One operation the store fails on (a read, or closing it failed) stays pending for the next sweep; the others go on.
      await this.sweepOne(seen).catch((error: unknown) => {
        this.logger.warn(`operation ${seen.id} (${seen.kind} ${seen.namespace}/${seen.name}) stays pending, the next sweep tries again: ${(error as Error).message}`);
      });
    }
  }

  /** One operation, under the agent's lock taken as a sweep takes it: a live writer holding the agent settles what is pending itself. */
  private async sweepOne(seen: OperationRecord): Promise<void> {
    const key = `${seen.namespace}/${seen.name}`;
    await this.lock
      .hold(seen, 'sweep', async () => {
        // Read again under the lease: the writer may have closed it since the list was read.
        const op = await this.repository.operation(seen.id);
        // Resolving another replica's operation is work done for a caller: traced, the sweep's reads are not.
        const attributes = { 'agent_manager.operation.id': op?.id, 'agent_manager.operation.kind': op?.kind, 'agent_manager.agent': key };
        if (op?.state === 'pending') await Tracing.span('recover operation', { root: true, attributes }, () => this.resolve(op));
      }, seen.id)
      .catch((error: unknown) => {
        if (!(error instanceof AgentBusy)) throw error;
      });
  }

  /**
   * For a write holding the agent's lease: settles operations an earlier writer left pending
   * (a dead replica, or a write whose recording failed) before the new one runs. With
   * `freeStuckRelease` (a rollback the caller asked to free the release with), operations
   * helm holds pending-* are returned instead of refused, for the caller to close once the
   * rollback landed.
   */
  async settle(namespace: string, name: string, options: { freeStuckRelease?: boolean } = {}): Promise<OperationRecord[]> {
    const stuck: OperationRecord[] = [];
    for (const op of await this.repository.pendingOperations({ namespace, name })) {
      const outcome = await this.resolve(op);
      if (typeof outcome !== 'object') continue;
      if (outcome.heldPending && options.freeStuckRelease) {
        stuck.push(op);
        continue;
      }
      throw new AppError('conflict', `agent ${namespace}/${name} has an interrupted ${op.kind} (operation ${op.id}) whose outcome helm cannot tell yet: ${outcome.undecided}`);
    }
    return stuck;
  }

  /** Closes operations a rollback freed the release of: they never landed, the rollback replaced them. */
  async supersede(ops: OperationRecord[], by: string): Promise<void> {
    for (const op of ops) {
      const message = `interrupted: helm held the release pending from a helm run that never finished; rollback operation ${by} freed it, and this ${op.kind} did not land`;
      await this.repository.failOperation(op.id, 'backend_error', message);
      this.logger.warn(`operation ${op.id}: ${message}`);
    }
  }

  /** Reads helm as the service itself (no impersonation), even inside a caller's write: it finishes someone else's operation. */
  resolve(op: OperationRecord): Promise<Resolution> {
    return OperationContexts.asService(() => this.resolveAsService(op));
  }

  private async resolveAsService(op: OperationRecord): Promise<Resolution> {
    const release = { namespace: op.namespace, name: op.name };
    let info;
    try {
      info = await this.helm.status(release);
    } catch (error) {
      this.logger.warn(`operation ${op.id} (${op.kind} ${op.namespace}/${op.name}) stays pending: ${(error as Error).message}`);
      return { undecided: `helm could not read the release (${(error as Error).message}); retry when the cluster answers` };
    }
    const agent = op.agentId ? await this.repository.agentById(op.agentId) : null;
    const decision = decideRecovery(
      {
        kind: op.kind,
        baseHelmRevision: op.baseHelmRevision,
        values: op.intent?.values ?? null,
        agent: agent ? (agent.state === 'active' ? 'active' : 'inactive') : 'none',
        nameTaken: op.kind === 'create' && (await this.repository.findActive(op.namespace, op.name)) !== null,
      },
      info && { status: info.status, revision: info.revision, values: info.values },
    );
    if (decision.action === 'fail') return this.fail(op, decision.why);
    if (decision.action === 'wait') return this.heldPending(op, decision.heldPending, decision.revision);
    try {
      const record = await this.landedRecord(op, decision.what, agent, info !== null);
      if (record) await recordWrite(this.repository, record, { namespace: op.namespace, name: op.name, helmRevision: info?.revision ?? null, values: null, actor: op.actor, operationId: op.id });
      return this.done(op, 'landed');
    } catch (error) {
      this.logger.warn(`resolving operation ${op.id} failed, it stays pending: ${(error as Error).message}`);
      return { undecided: `recording what helm holds failed (${(error as Error).message}); retry shortly` };
    }
  }

  /**
   * What a write that landed records, from its intent (what it meant to write), as the live write
   * would have recorded it: a create with the chart it installed (its intent's; one journaled
   * without it by an earlier version, with the chart writes use now), a change with the chart it
   * applied. Null when there is nothing to record (no agent, no intent, or no release).
   */
  private async landedRecord(op: OperationRecord, what: 'create' | 'change' | 'delete', agent: AgentRecord | null, released: boolean): Promise<RecordOf | null> {
    const intent = op.intent;
    if (what === 'delete') return agent && { delete: { agent } };
    if (!intent || !released) return null;
    const { spec, values, origin, chart } = intent;
    if (what === 'create') return { create: { spec, values, origin, chart: chart ?? (await configuredChart(this.config, this.charts)) } };
    if (!agent) return null;
    return { change: { agent, spec, values, kind: op.kind === 'rollback' ? 'rollback' : 'update', rolledBackTo: intent.rolledBackTo, origin, chart } };
  }

  private heldPending(op: OperationRecord, status: string, revision: number): Resolution {
    this.logger.warn(`operation ${op.id} stays pending: the release is ${status}`);
    return {
      heldPending: status,
      undecided:
        `helm reports the release ${status} (revision ${revision}); retry in a few seconds. ` +
        `If it stays ${status} for longer than a helm run may last (HELM_TIMEOUT_SECONDS=${this.config.HELM_TIMEOUT_SECONDS}), ` +
        `the helm process that held it is gone: free it with a rollback, rollback_agent (POST /api/v1/agents/${op.namespace}/${op.name}/rollback) ` +
        `with "freeStuckRelease": true and the revision to return to, or \`helm rollback ${op.name} --namespace ${op.namespace}\`, then retry`,
    };
  }

  private done(op: OperationRecord, outcome: Resolution): Resolution {
    this.logger.log(`recovered operation ${op.id}: the ${op.kind} of ${op.namespace}/${op.name} by ${op.owner ?? 'unknown replica'} landed; recorded it`);
    return outcome;
  }

  private async fail(op: OperationRecord, why: string): Promise<Resolution> {
    const message = `interrupted: the replica running this ${op.kind} (${op.owner ?? 'unknown'}) stopped before recording it, and helm shows it did not land (${why})`;
    await this.repository.failOperation(op.id, 'backend_error', message);
    this.logger.warn(`operation ${op.id}: ${message}`);
    return 'did-not-land';
  }
}
