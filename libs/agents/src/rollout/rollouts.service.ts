import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { AppConfig, AppError, OperationContexts, type Caller } from '@app/common';
import { ChartSources, HelmClient, type ResolvedChart } from '@app/helm';
import { KAGENT_KINDS, KubeClient } from '@app/kube';
import { AgentsRepository } from '../persistence/agents.repository.js';
import { AgentLeaseRepository } from '../persistence/lease.repository.js';
import { agentView } from '../api/views.js';
import { chartIdentity } from '../domain/chart-identity.js';
import { WriteRunner } from '../runner/write-runner.js';
import { KEEP_ANNOTATION, moveToChart, returnFromChart, type MajorSwitch } from '../use-cases/rollout-agent.js';
import { manifestDiff } from '../domain/spec-diff.js';
import { gateVerdict, overBudget, planWaves, templateVerdict, type GateVerdict, type RolloutState } from './rollout.rules.js';
import { chartMajor, migrateValues, type SharedMusterServer, type ValuesMigration } from '../domain/chart-migrations.js';
import type { AgentRecord } from '../persistence/records.js';
import { RolloutsRepository, type RolloutAgentRecord, type RolloutRecord, type RolloutRequest } from './rollouts.repository.js';
import type { ListRolloutsQueryDto, RolloutDto, RolloutListDto, RolloutPlanDto, RolloutRefDto, StartRolloutDto, StartRolloutResultDto } from './rollouts.dto.js';

/** How often a replica looks for running rollouts nobody moves (a restart, another replica's death). */
const POLL_MS = 2_000;
/** How often a wave's gate reads its agents' live objects. */
const GATE_POLL_MS = 1_000;
/** How often a caller waiting on a rollout (wait: true) is told what changed. */
const FOLLOW_POLL_MS = 500;
/** Agents of one wave moved at once. */
const WAVE_CONCURRENCY = 4;
const DEFAULT_WAVES = [1, 5];
const DEFAULT_GATE_SECONDS = 300;

/** The lease a replica holds while it moves a rollout; agent leases are `namespace/name`, so it never meets one. */
export const rolloutLease = (id: string) => `rollout:${id}`;

/**
 * Fleet rollouts (docs/rollouts.md): a chart moved to the agents a selector picks, wave by wave.
 * Each agent moves through the one write runner (its own journal entry, lease and If-Match on the
 * version the rollout planned on); each wave is gated on its agents' live Agents reporting
 * Accepted and Ready; a wave past the failure budget is returned to where it stood and the rollout
 * stops. Rollouts are stored: whichever replica takes a running rollout's lease moves it on, from
 * what its agents recorded, after a restart too.
 */
@Injectable()
export class FleetRollouts implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Rollouts');
  private readonly term = randomUUID();
  private readonly moving = new Map<string, Promise<void>>();
  private timer?: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly config: AppConfig,
    private readonly rollouts: RolloutsRepository,
    private readonly agents: AgentsRepository,
    private readonly leases: AgentLeaseRepository,
    private readonly runner: WriteRunner,
    private readonly helm: HelmClient,
    private readonly charts: ChartSources,
    private readonly kube: KubeClient,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.backgroundWork) return;
    this.timer = setInterval(() => void this.pickUp(), POLL_MS);
    this.timer.unref();
    void this.pickUp();
  }

  /** Stops between agents: the rollout stays running in the store, and the next replica (or this one restarted) takes it on. */
  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await Promise.allSettled(this.moving.values());
  }

  /** Plans a rollout; a dry run answers the plan per agent, otherwise it is stored and starts moving. */
  async start(caller: Caller, input: StartRolloutDto): Promise<StartRolloutResultDto> {
    // The chart is found first: a reference that cannot be read refuses the rollout before anything is stored.
    const target = await this.charts.resolve(input.chart, input.version);
    const request: RolloutRequest = {
      selector: input.selector ?? {},
      waves: input.waves ?? DEFAULT_WAVES,
      gate: { timeoutSeconds: input.gateTimeoutSeconds ?? DEFAULT_GATE_SECONDS },
      failureBudget: input.failureBudget ?? 0,
    };
    const selected = await this.rollouts.select(request.selector);
    if (selected.length === 0) {
      throw new AppError('invalid_request', 'the selector picks no active agent: widen it (namespaces, labels, blueprint, agents), or list the agents first', [{ path: 'selector', message: 'picks no agent' }]);
    }
    const waves = planWaves(selected.length, request.waves);
    if (input.dryRun) return { dryRun: true, plan: await this.plan(target, request, selected, waves), rollout: null };
    const id = `r-${randomBytes(6).toString('hex')}`;
    await this.rollouts.create(
      { id, state: 'running', chart: { ref: target.source, version: target.chartVersion }, request, createdBy: caller.actor, caller: { ...caller } },
      selected.map((agent, position) => ({
        position,
        wave: waves[position],
        agentId: agent.id,
        namespace: agent.namespace,
        name: agent.name,
        plannedVersion: agent.version,
        fromChart: { ref: agent.chartRef, version: agent.chartVersion, name: agent.chartName },
        fromRevision: agent.revision,
        state: 'pending',
        reason: null,
        operationId: null,
      })),
    );
    this.logger.log(`rollout ${id} started by ${caller.actor}: ${selected.length} agent(s) to ${target.name} ${target.chartVersion ?? ''} (${target.source}) in ${waves.at(-1)! + 1} wave(s)`);
    void this.pickUp();
    return { dryRun: false, plan: null, rollout: input.wait ? await this.follow(id) : await this.get({ id }) };
  }

  /**
   * Waits until the rollout stops moving (finished, paused, cancelled), telling the caller each agent
   * settled and each wave begun as it happens (over MCP: notifications/message), and answers it then.
   */
  private async follow(id: string): Promise<RolloutDto> {
    const told = new Map<string, string>();
    let wave = -1;
    for (;;) {
      const rollout = await this.get({ id });
      if (rollout.state === 'running' && rollout.wave !== wave) {
        wave = rollout.wave;
        await OperationContexts.step(`rollout ${id}: wave ${wave + 1} of ${new Set(rollout.agents.map((a) => a.wave)).size} moving`);
      }
      for (const agent of rollout.agents) {
        const key = `${agent.namespace}/${agent.name}`;
        if (agent.state === 'pending' || told.get(key) === agent.state) continue;
        told.set(key, agent.state);
        await OperationContexts.step(`rollout ${id}: ${key} ${agent.state}${agent.reason ? ` (${agent.reason})` : ''}`);
      }
      if (rollout.state !== 'running' || this.closed) return rollout;
      await sleep(FOLLOW_POLL_MS);
    }
  }

  async get({ id }: RolloutRefDto): Promise<RolloutDto> {
    const rollout = await this.rollouts.find(id);
    if (!rollout) throw new AppError('not_found', `no rollout ${id}: list them with list_fleet_rollouts`, [{ path: 'id', message: 'no such rollout' }]);
    return rolloutView(rollout, await this.rollouts.agents(id));
  }

  async list(query: ListRolloutsQueryDto): Promise<RolloutListDto> {
    const rollouts = await this.rollouts.list({ state: query.state, limit: query.limit ?? 20 });
    const items = [];
    for (const rollout of rollouts) items.push({ ...rolloutView(rollout, await this.rollouts.agents(rollout.id)), agents: [] });
    return { items };
  }

  /** Stops the rollout between agents (an agent being moved finishes); resume moves it on. */
  pause(caller: Caller, ref: RolloutRefDto): Promise<RolloutDto> {
    return this.move(ref, ['running'], 'paused', `paused by ${caller.actor}`);
  }

  resume(caller: Caller, ref: RolloutRefDto): Promise<RolloutDto> {
    return this.move(ref, ['paused'], 'running', `resumed by ${caller.actor}`).finally(() => void this.pickUp());
  }

  /** Ends the rollout: agents not moved yet are skipped; agents already moved stay where they are (roll them back one by one if needed). */
  async cancel(caller: Caller, ref: RolloutRefDto): Promise<RolloutDto> {
    const reason = `cancelled by ${caller.actor}`;
    await this.move(ref, ['running', 'paused'], 'cancelled', reason);
    await this.rollouts.skipPending(ref.id, reason);
    return this.get(ref);
  }

  private async move(ref: RolloutRefDto, from: readonly RolloutState[], to: RolloutState, message: string): Promise<RolloutDto> {
    const before = await this.get(ref);
    if (!(await this.rollouts.transition(ref.id, from, to, message))) {
      throw new AppError('conflict', `rollout ${ref.id} is ${before.state}: only a rollout that is ${from.join(' or ')} can be made ${to}`, [{ path: 'id', message: `the rollout is ${before.state}` }]);
    }
    this.logger.log(`rollout ${ref.id} ${to}: ${message}`);
    return this.get(ref);
  }

  /** The dry run: per agent, the chart and values from → to and the rendered manifests' diff. */
  private async plan(target: ResolvedChart, request: RolloutRequest, selected: Awaited<ReturnType<RolloutsRepository['select']>>, waves: number[]): Promise<RolloutPlanDto> {
    const to = chartIdentity(target);
    const items = [];
    for (const [position, row] of selected.entries()) {
      const agent = await this.agents.findActive(row.namespace, row.name);
      if (!agent) continue;
      const from = { name: agent.chart.name, version: agent.chart.version };
      const unchanged = from.name === to.name && from.version !== null && from.version === to.version;
      const release = { namespace: agent.namespace, name: agent.name };
      const migration = unchanged ? null : await this.migration(agent, from.version, to.version);
      const valuesAfter = migration?.values ?? agent.values;
      const [before, after] = unchanged ? ['', ''] : await Promise.all([
        this.helm.template(release, { ref: row.chartRef, ...(row.chartVersion && !isLocal(row.chartRef) && { version: row.chartVersion }) }, agent.values),
        migration && migration.missing.length > 0 ? Promise.resolve('') : this.helm.template(release, target, valuesAfter),
      ]);
      items.push({
        namespace: agent.namespace,
        name: agent.name,
        wave: waves[position],
        action: unchanged ? 'unchanged' : 'upgrade',
        from,
        to,
        valuesBefore: agent.values,
        valuesAfter: valuesAfter as typeof agent.values,
        fields: migration?.carried ?? [],
        notCarried: [...(migration?.notCarried ?? []), ...(migration?.missing ?? [])].map(({ field, reason }) => `${field}: ${reason}`),
        manifestDiff: manifestDiff(`${agent.namespace}/${agent.name}`, before, after, { from: `${from.name} ${from.version ?? '?'}`, to: `${to.name} ${to.version ?? '?'}` }),
        agent: agentView(agent, agent.lastOperation),
      });
    }
    return { dryRun: true, chart: target.source, version: target.chartVersion, waves: request.waves, items };
  }

  /**
   * The values migration when the target is another chart major than the agent runs (0.x → 1.x,
   * chart-migrations.ts), null within a major. What 1.x needs that the 0.x values cannot say (Muster's
   * URL) is read from the shared RemoteMCPServer the 0.x Agent binds, as the caller.
   */
  private async migration(agent: AgentRecord, from: string | null, to: string | null): Promise<ValuesMigration | null> {
    const [fromMajor, toMajor] = [chartMajor(from ?? '0'), chartMajor(to ?? '0')];
    if (fromMajor === toMajor) return null;
    if (fromMajor !== '0' || toMajor !== '1') {
      throw new AppError('invalid_request', `no values migration is declared from chart major ${fromMajor} to ${toMajor}: agent-manager moves agents from 0.x to 1.x only`, [{ path: 'version', message: `from ${fromMajor}.x to ${toMajor}.x is not declared` }]);
    }
    const values = agent.values as unknown as Record<string, unknown>;
    const serverName = ((values.muster as { name?: string } | undefined)?.name) ?? 'muster';
    const shared = await this.kube.getObject<{ spec: SharedMusterServer }>(KAGENT_KINDS.remoteMcpServer, agent.namespace, serverName).catch(() => null);
    return migrateValues('0', '1', values, { musterServer: shared?.spec ?? null });
  }

  /** What a move to another chart major needs (the values for the target, the chart it runs now), or undefined within a major. */
  private async majorSwitch(agent: RolloutAgentRecord, target: ResolvedChart): Promise<MajorSwitch | undefined> {
    const from = agent.fromChart ?? {};
    if (chartMajor(from.version ?? '0') === chartMajor(target.chartVersion ?? '0')) return undefined;
    const record = await this.agents.findActive(agent.namespace, agent.name);
    if (!record || !from.ref) return undefined; // the move refuses it itself (not_found)
    const migration = (await this.migration(record, from.version ?? null, target.chartVersion))!;
    if (migration.missing.length > 0) {
      throw new AppError('invalid_request', `cannot move to chart ${target.chartVersion}: ${migration.missing.map((m) => `${m.field}: ${m.reason}`).join('; ')}`);
    }
    return { from: await this.charts.resolve(from.ref, from.version ?? undefined), values: migration.values };
  }

  /** Takes on every running rollout no replica moves now. */
  private async pickUp(): Promise<void> {
    if (this.closed) return;
    let ids: string[];
    try {
      ids = await this.rollouts.running();
    } catch (error) {
      return this.logger.debug(`looking for running rollouts failed, tried again shortly: ${(error as Error).message}`);
    }
    for (const id of ids) {
      if (this.moving.has(id) || this.closed) continue;
      const run = this.takeOn(id).finally(() => this.moving.delete(id));
      this.moving.set(id, run);
    }
  }

  private async takeOn(id: string): Promise<void> {
    const ttlMs = this.config.LEASE_TTL_SECONDS * 1000;
    const owner = `rollouts@${this.config.REPLICA_ID}`;
    const lease = await this.leases.acquire(rolloutLease(id), owner, this.term, ttlMs).catch(() => ({ acquired: false as const }));
    if (!lease.acquired) return;
    let lost = false;
    const stop = this.leases.keepAlive(rolloutLease(id), owner, this.term, ttlMs, (message, gone) => {
      if (gone) lost = true;
      this.logger.warn(`rollout ${id}: ${message}`);
    });
    try {
      await this.drive(id, () => lost);
    } catch (error) {
      this.logger.warn(`rollout ${id} stopped on this replica and is taken on again shortly: ${(error as Error).message}`);
    } finally {
      stop();
      await this.leases.release(rolloutLease(id), owner, this.term).catch(() => undefined);
    }
  }

  /** Moves the rollout on, wave by wave, until it finishes, is paused or cancelled, or this replica stops. */
  private async drive(id: string, lost: () => boolean): Promise<void> {
    for (;;) {
      const rollout = await this.rollouts.find(id);
      if (!rollout || rollout.state !== 'running' || this.closed || lost()) return;
      const agents = await this.rollouts.agents(id);
      const wave = agents.find((agent) => agent.state === 'pending')?.wave;
      if (wave === undefined) {
        const last = agents.reduce((max, agent) => Math.max(max, agent.wave), 0);
        await this.rollouts.progress(id, { wave: last + 1 });
        if (await this.rollouts.transition(id, ['running'], 'succeeded', summary(agents))) this.logger.log(`rollout ${id} succeeded: ${summary(agents)}`);
        return;
      }
      if (wave !== rollout.wave) await this.rollouts.progress(id, { wave });
      const finished = await this.runWave(rollout, agents.filter((agent) => agent.wave === wave), lost);
      if (!finished) return; // paused, cancelled, or this replica stops: the agents record how far it came
    }
  }

  /** One wave: moves its pending agents, gates it, and stops the rollout when it is past the budget. False when it stopped early. */
  private async runWave(rollout: RolloutRecord, wave: RolloutAgentRecord[], lost: () => boolean): Promise<boolean> {
    const caller = callerOf(rollout);
    // Found again on every replica that takes the rollout on (an OCI chart: pulled once into its cache).
    const target = await this.charts.resolve(rollout.chart.ref, rollout.chart.version ?? undefined);
    const pending = wave.filter((agent) => agent.state === 'pending');
    let stopped = false;
    await pool(pending, WAVE_CONCURRENCY, async (agent) => {
      if (stopped || !(await this.stillRunning(rollout.id)) || lost()) return void (stopped = true);
      await this.moveOne(rollout, caller, target, agent);
    });
    if (stopped) return false;

    const settled = await this.rollouts.agents(rollout.id);
    const moved = settled.filter((agent) => agent.wave === wave[0].wave && agent.state === 'upgraded');
    const unhealthy = await this.gate(rollout, moved, target);
    const failedMoves = settled.filter((agent) => agent.wave === wave[0].wave && agent.state === 'failed').length;
    const failures = rollout.failures + failedMoves + unhealthy.size;
    await this.rollouts.progress(rollout.id, { failures });
    const n = wave[0].wave + 1;
    if (overBudget(failures, rollout.request.failureBudget)) {
      const why = `wave ${n} failed its gate: ${failures} agent(s) failed in all, over the failure budget of ${rollout.request.failureBudget}`;
      this.logger.warn(`rollout ${rollout.id}: ${why}; returning the wave's agents to where they stood`);
      for (const agent of moved) await this.returnOne(rollout, caller, agent, unhealthy.get(agent.position) ?? `rolled back with wave ${n}, which failed its gate`);
      await this.rollouts.skipPending(rollout.id, `not moved: ${why}`);
      await this.rollouts.transition(rollout.id, ['running', 'paused'], 'failed', `${why}; its agents were rolled back`);
      return false;
    }
    for (const agent of moved) if (unhealthy.has(agent.position)) await this.returnOne(rollout, caller, agent, unhealthy.get(agent.position)!);
    await this.contract(moved.filter((agent) => !unhealthy.has(agent.position)), target);
    return true;
  }

  /**
   * Contract: once an agent moved to another chart major serves from its new objects, the object the
   * old major rendered (kept by helm through the move) is removed, as the service. Until then it serves.
   */
  private async contract(healthy: RolloutAgentRecord[], target: ResolvedChart): Promise<void> {
    for (const agent of healthy) {
      const from = agent.fromChart ?? {};
      if (chartMajor(from.version ?? '0') !== '0' || chartMajor(target.chartVersion ?? '0') !== '1') continue;
      await OperationContexts.asService(() => this.kube.deleteObject(KAGENT_KINDS.agent, agent.namespace, agent.name)).catch((error: unknown) => {
        this.logger.warn(`rollout: ${agent.namespace}/${agent.name} serves from its 1.x objects, but removing its 0.x Agent failed (delete it by hand): ${(error as Error).message}`);
      });
    }
  }

  private async stillRunning(id: string): Promise<boolean> {
    return (await this.rollouts.find(id))?.state === 'running' && !this.closed;
  }

  /** One agent moved through the write runner, as the rollout's starter; what happened is recorded on the rollout. */
  private async moveOne(rollout: RolloutRecord, caller: Caller, target: ResolvedChart, agent: RolloutAgentRecord): Promise<void> {
    const ref = { namespace: agent.namespace, name: agent.name };
    try {
      const step = await asCaller(caller, async () => {
        const switchMajor = await this.majorSwitch(agent, target);
        return this.runner.run(caller, moveToChart(ref, { target, expectedVersion: agent.plannedVersion, requestId: `${rollout.id}-move-${agent.position}`, rollout: rollout.id, switchMajor }));
      });
      await this.rollouts.settleAgent(rollout.id, agent.position, {
        state: step.changed ? 'upgraded' : 'unchanged',
        reason: step.changed ? null : 'already on the target chart',
        operationId: step.agent.lastOperation?.id ?? null,
      });
    } catch (error) {
      const failure = error instanceof AppError ? error : new AppError('backend_error', (error as Error).message);
      if (failure.code === 'unavailable') throw failure; // this replica stops: another takes the rollout on
      const changed = failure.code === 'precondition_failed' || failure.code === 'not_found';
      await this.rollouts.settleAgent(rollout.id, agent.position, {
        state: changed ? 'skipped' : 'failed',
        reason: changed ? `changed since the rollout was planned (${failure.message}); start another rollout for it` : failure.message,
      });
    }
  }

  /** Returns a moved agent to the chart and values of its revision before the rollout. */
  private async returnOne(rollout: RolloutRecord, caller: Caller, agent: RolloutAgentRecord, reason: string): Promise<void> {
    const ref = { namespace: agent.namespace, name: agent.name };
    const from = agent.fromChart ?? {};
    try {
      const record = await this.agents.findActive(agent.namespace, agent.name);
      const revision = record ? await this.agents.revision(record.id, agent.fromRevision) : null;
      if (!revision || !from.ref) throw new AppError('backend_error', `its revision ${agent.fromRevision} before the rollout is not in the store`);
      const chart = await this.charts.resolve(from.ref, from.version ?? undefined);
      const step = await asCaller(caller, () =>
        this.runner.run(caller, returnFromChart(ref, { chart, values: revision.values, revision: agent.fromRevision, requestId: `${rollout.id}-return-${agent.position}`, rollout: rollout.id })),
      );
      // helm 3's three-way merge takes a kept object back without the annotation's removal: said here, or a later uninstall would leave the Agent behind.
      await OperationContexts.asService(() => this.kube.patchObject(KAGENT_KINDS.agent, agent.namespace, agent.name, { metadata: { annotations: { [KEEP_ANNOTATION]: null } } }));
      await this.rollouts.settleAgent(rollout.id, agent.position, { state: 'rolledBack', reason, operationId: step.agent.lastOperation?.id ?? null });
    } catch (error) {
      await this.rollouts.settleAgent(rollout.id, agent.position, { state: 'failed', reason: `${reason}; rolling it back failed: ${(error as Error).message} (roll it back with rollback_agent)` });
    }
  }

  /** The wave's health gate: each moved agent's live Agent reports Accepted and Ready within the timeout. Answers the unhealthy ones, with why. */
  private async gate(rollout: RolloutRecord, moved: RolloutAgentRecord[], target: ResolvedChart): Promise<Map<number, string>> {
    const major = chartMajor(target.chartVersion ?? '0');
    const verdictOf = async (agent: RolloutAgentRecord): Promise<GateVerdict> =>
      major === '1'
        ? templateVerdict(await OperationContexts.asService(() => this.kube.getObject(KAGENT_KINDS.agentTemplate, agent.namespace, agent.name)).catch(() => null))
        : gateVerdict(await OperationContexts.asService(() => this.kube.getAgent(agent.namespace, agent.name)).catch(() => null));
    const deadline = Date.now() + rollout.request.gate.timeoutSeconds * 1000;
    const waiting = new Map(moved.map((agent) => [agent.position, agent]));
    const unhealthy = new Map<number, string>();
    const last = new Map<number, string>();
    while (waiting.size > 0 && !this.closed) {
      for (const agent of [...waiting.values()]) {
        const verdict = await verdictOf(agent);
        if (verdict.healthy) waiting.delete(agent.position);
        else if (verdict.final) {
          waiting.delete(agent.position);
          unhealthy.set(agent.position, `unhealthy after the upgrade: ${verdict.reason}`);
        } else last.set(agent.position, verdict.reason);
      }
      if (waiting.size === 0 || Date.now() >= deadline) break;
      await sleep(GATE_POLL_MS);
    }
    for (const agent of waiting.values()) unhealthy.set(agent.position, `not healthy within ${rollout.request.gate.timeoutSeconds} s: ${last.get(agent.position) ?? 'no answer'}`);
    return unhealthy;
  }
}

function isLocal(ref: string): boolean {
  return ref.startsWith('/') || ref.startsWith('.');
}

/** The rollout's writes act as whoever started it: their actor in the journal, their identity for helm under KUBE_IMPERSONATE. */
function callerOf(rollout: RolloutRecord): Caller {
  const stored = rollout.caller as Partial<Caller>;
  return { actor: stored.actor ?? rollout.createdBy, door: stored.door ?? 'internal', requestId: `rollout-${rollout.id}`, principal: stored.principal, client: stored.client, note: stored.note };
}

function asCaller<T>(caller: Caller, fn: () => Promise<T>): Promise<T> {
  return OperationContexts.run({ door: caller.door, actor: caller.actor, principal: caller.principal, client: caller.client, note: caller.note, requestId: caller.requestId }, fn);
}

async function pool<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) await work(items[next++]);
  }));
}

function counts(agents: RolloutAgentRecord[]): RolloutDto['counts'] {
  const counted = { pending: 0, upgraded: 0, unchanged: 0, failed: 0, rolledBack: 0, skipped: 0 };
  for (const agent of agents) counted[agent.state]++;
  return counted;
}

function summary(agents: RolloutAgentRecord[]): string {
  return Object.entries(counts(agents)).filter(([, n]) => n > 0).map(([state, n]) => `${n} ${state}`).join(', ');
}

function rolloutView(rollout: RolloutRecord, agents: RolloutAgentRecord[]): RolloutDto {
  const { request } = rollout;
  return {
    id: rollout.id,
    state: rollout.state,
    chart: rollout.chart.ref,
    version: rollout.chart.version,
    waves: request.waves,
    wave: rollout.wave,
    gateTimeoutSeconds: request.gate.timeoutSeconds,
    failureBudget: request.failureBudget,
    failures: rollout.failures,
    message: rollout.message,
    selector: request.selector,
    createdBy: rollout.createdBy,
    createdAt: rollout.createdAt.toISOString(),
    updatedAt: rollout.updatedAt.toISOString(),
    finishedAt: rollout.finishedAt?.toISOString() ?? null,
    counts: counts(agents),
    agents: agents.map((agent) => {
      const from = agent.fromChart;
      return {
        namespace: agent.namespace,
        name: agent.name,
        wave: agent.wave,
        state: agent.state,
        reason: agent.reason,
        from: from ? { name: from.name ?? chartIdentity({ ref: from.ref ?? '' }).name, version: from.version ?? null } : null,
        plannedVersion: agent.plannedVersion,
        operationId: agent.operationId,
      };
    }),
  };
}

