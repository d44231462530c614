import { Injectable } from '@nestjs/common';
import { Prisma, Store } from '@app/store';
import type { RolloutAgentState, RolloutState } from './rollout.rules.js';
import { appendEvent, type NewChangeEvent } from '../events/outbox.js';

/** Which agents a rollout moves; every field narrows (AND), an empty selector takes every active agent. */
export interface RolloutSelector {
  namespaces?: string[];
  labels?: Record<string, string>;
  blueprint?: string;
  /** `namespace/name` of each agent. */
  agents?: string[];
}

/** What a rollout was asked to do, as stored. */
export interface RolloutRequest {
  selector: RolloutSelector;
  waves: number[];
  gate: { timeoutSeconds: number };
  failureBudget: number;
}

export interface RolloutRecord {
  id: string;
  state: RolloutState;
  chart: { ref: string; version: string | null };
  request: RolloutRequest;
  wave: number;
  failures: number;
  message: string | null;
  createdBy: string;
  caller: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

/** A chart an agent stood on: its reference, version and name as recorded. */
export interface ChartFrom {
  ref?: string;
  version?: string | null;
  name?: string | null;
}

export interface RolloutAgentRecord {
  position: number;
  wave: number;
  agentId: string;
  namespace: string;
  name: string;
  plannedVersion: number;
  /** The chart the agent was on when the rollout was planned (stored as JSON). */
  fromChart: ChartFrom | null;
  fromRevision: number;
  state: RolloutAgentState;
  reason: string | null;
  operationId: string | null;
}

/** An active agent a selector picked, with what a rollout plans on. */
export interface SelectedAgent {
  id: string;
  namespace: string;
  name: string;
  version: number;
  revision: number;
  helmRevision: number | null;
  chartRef: string;
  chartName: string | null;
  chartVersion: string | null;
}

const json = (value: unknown) => value as Prisma.InputJsonValue;

/** Rollouts and their agents in the store; the only rollout code that touches Prisma. */
@Injectable()
export class RolloutsRepository {
  constructor(private readonly store: Store) {}

  private get db() {
    return this.store.client;
  }

  /** The active agents a selector picks, by namespace and name. */
  async select(selector: RolloutSelector): Promise<SelectedAgent[]> {
    const named = (selector.agents ?? []).map((ref) => {
      const [namespace, name] = ref.split('/');
      return { namespace, name };
    });
    const rows = await this.db.agent.findMany({
      where: {
        state: 'active',
        ...(selector.namespaces?.length ? { namespace: { in: selector.namespaces } } : {}),
        ...(selector.blueprint ? { blueprintName: selector.blueprint } : {}),
        ...(named.length ? { OR: named } : {}),
        AND: Object.entries(selector.labels ?? {}).map(([key, value]) => ({ labels: { some: { key, value } } })),
      },
      select: { id: true, namespace: true, name: true, version: true, revision: true, helmRevision: true, chartRef: true, chartName: true, chartVersion: true },
      orderBy: [{ namespace: 'asc' }, { name: 'asc' }],
    });
    return rows;
  }

  async create(rollout: Omit<RolloutRecord, 'createdAt' | 'updatedAt' | 'finishedAt' | 'wave' | 'failures' | 'message'>, agents: RolloutAgentRecord[]): Promise<void> {
    await this.db.$transaction(async (tx) => {
      await tx.rollout.create({
        data: {
          id: rollout.id, state: rollout.state, chartRef: rollout.chart.ref, chartVersion: rollout.chart.version, request: json(rollout.request), createdBy: rollout.createdBy, caller: json(rollout.caller),
        },
      });
      await tx.rolloutAgent.createMany({ data: agents.map((agent) => ({ rolloutId: rollout.id, ...agent, fromChart: agent.fromChart && JSON.stringify(agent.fromChart) })) });
      await appendEvent(tx, rolloutEvent(rollout.state === 'running' ? 'started' : rollout.state, rollout.id, rollout.createdBy, {
        state: rollout.state, chart: rollout.chart, agents: agents.length, waves: new Set(agents.map((agent) => agent.wave)).size,
      }));
    });
  }

  async find(id: string): Promise<RolloutRecord | null> {
    const row = await this.db.rollout.findUnique({ where: { id } });
    return row && toRollout(row);
  }

  async agents(id: string): Promise<RolloutAgentRecord[]> {
    const rows = await this.db.rolloutAgent.findMany({ where: { rolloutId: id }, orderBy: { position: 'asc' } });
    return rows.map(toRolloutAgent);
  }

  /** Newest first; `state` narrows. */
  async list(filter: { state?: RolloutState; limit: number }): Promise<RolloutRecord[]> {
    const rows = await this.db.rollout.findMany({ where: filter.state ? { state: filter.state } : {}, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: filter.limit });
    return rows.map(toRollout);
  }

  /** Rollouts some replica should be moving. */
  async running(): Promise<string[]> {
    const rows = await this.db.rollout.findMany({ where: { state: 'running' }, select: { id: true }, orderBy: { createdAt: 'asc' } });
    return rows.map((row) => row.id);
  }

  /** Moves a rollout from one of `from` to `to`; false when it was in no such state (someone else moved it first). */
  async transition(id: string, from: readonly RolloutState[], to: RolloutState, message?: string): Promise<boolean> {
    const finished = to === 'cancelled' || to === 'succeeded' || to === 'failed';
    return this.db.$transaction(async (tx) => {
      const moved = await tx.rollout.updateMany({
        where: { id, state: { in: [...from] } },
        data: { state: to, ...(message !== undefined && { message }), ...(finished && { finishedAt: new Date() }) },
      });
      if (moved.count !== 1) return false;
      const rollout = await tx.rollout.findUniqueOrThrow({ where: { id } });
      await appendEvent(tx, rolloutEvent(to === 'running' ? 'resumed' : to, id, rollout.createdBy, { state: to, from, wave: rollout.wave, failures: rollout.failures, message: rollout.message }));
      return true;
    });
  }

  async progress(id: string, data: { wave?: number; failures?: number }): Promise<void> {
    await this.db.rollout.update({ where: { id }, data });
  }

  async settleAgent(id: string, position: number, data: { state: RolloutAgentState; reason?: string | null; operationId?: string | null }): Promise<void> {
    await this.db.rolloutAgent.update({ where: { rolloutId_position: { rolloutId: id, position } }, data });
  }

  /** Every agent of the rollout still pending is skipped, saying why (a stop or a cancel). */
  async skipPending(id: string, reason: string): Promise<void> {
    await this.db.rolloutAgent.updateMany({ where: { rolloutId: id, state: 'pending' }, data: { state: 'skipped', reason } });
  }
}

function toRollout(row: {
  id: string; state: string; chartRef: string; chartVersion: string | null; request: unknown; wave: number; failures: number; message: string | null;
  createdBy: string; caller: unknown; createdAt: Date; updatedAt: Date; finishedAt: Date | null;
}): RolloutRecord {
  return {
    id: row.id,
    state: row.state as RolloutState,
    chart: { ref: row.chartRef, version: row.chartVersion },
    request: row.request as RolloutRequest,
    wave: row.wave,
    failures: row.failures,
    message: row.message,
    createdBy: row.createdBy,
    caller: row.caller as Record<string, unknown>,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    finishedAt: row.finishedAt,
  };
}

function toRolloutAgent(row: Omit<RolloutAgentRecord, 'state' | 'fromChart'> & { state: string; fromChart: string | null; rolloutId: string; updatedAt: Date }): RolloutAgentRecord {
  const { rolloutId: _rollout, updatedAt: _updated, ...agent } = row;
  return { ...agent, state: agent.state as RolloutAgentState, fromChart: agent.fromChart === null ? null : (JSON.parse(agent.fromChart) as ChartFrom) };
}

/** A rollout's event (docs/contract.md §14): `io.agent-manager.rollout.<started|paused|resumed|cancelled|succeeded|failed>`, subject its id. */
function rolloutEvent(what: string, id: string, actor: string, data: Record<string, unknown>): NewChangeEvent {
  return { type: `rollout.${what}`, subject: id, data: { rolloutId: id, actor, ...data } };
}
