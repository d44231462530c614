import type { LiveAgent, LiveObject } from '@app/kube';

/** What became of one agent in a rollout (docs/rollouts.md). */
export type RolloutAgentState = 'pending' | 'upgraded' | 'unchanged' | 'failed' | 'rolledBack' | 'skipped';
export type RolloutState = 'running' | 'paused' | 'cancelled' | 'succeeded' | 'failed';

export const ROLLOUT_STATES: readonly RolloutState[] = ['running', 'paused', 'cancelled', 'succeeded', 'failed'];
/** A rollout in one of these states never moves again. */
export const FINISHED: readonly RolloutState[] = ['cancelled', 'succeeded', 'failed'];

/**
 * The wave of each of `count` agents, in order: `sizes` are the waves' sizes (a canary first, then
 * batches), the last size repeated until every agent has a wave. [1, 5] for 12 agents: 1, 5, 5, 1.
 */
export function planWaves(count: number, sizes: readonly number[]): number[] {
  const waves: number[] = [];
  let wave = 0;
  let left = sizes[0] ?? count;
  for (let i = 0; i < count; i++) {
    if (left === 0) {
      wave++;
      left = sizes[Math.min(wave, sizes.length - 1)];
    }
    waves.push(wave);
    left--;
  }
  return waves;
}

export type GateVerdict = { healthy: true } | { healthy: false; final: boolean; reason: string };

/**
 * Whether a live Agent passes a wave's health gate: kagent observed the generation the upgrade
 * wrote (when it says which it observed) and reports `Accepted` and `Ready` true. `final`: waiting
 * longer cannot help (a condition is False with the generation observed); otherwise the gate waits
 * until its timeout.
 */
export function gateVerdict(live: LiveAgent | null): GateVerdict {
  if (!live) return { healthy: false, final: false, reason: 'the live Agent does not exist' };
  const { generation } = live.metadata;
  const observed = live.status?.observedGeneration;
  if (generation !== undefined && observed !== undefined && observed < generation) {
    return { healthy: false, final: false, reason: `kagent has not observed generation ${generation} yet (observed ${observed})` };
  }
  const conditions = live.status?.conditions ?? [];
  for (const type of ['Accepted', 'Ready']) {
    const condition = conditions.find((c) => c.type === type);
    if (!condition) return { healthy: false, final: false, reason: `the Agent reports no ${type} condition yet` };
    if (condition.status !== 'True') {
      const why = [condition.reason, condition.message].filter(Boolean).join(': ');
      return { healthy: false, final: condition.status === 'False' && observed !== undefined, reason: `${type} is ${condition.status}${why ? ` (${why})` : ''}` };
    }
  }
  return { healthy: true };
}

/** Whether one more failure stops the rollout: the budget is how many agents may fail in all. */
export function overBudget(failures: number, budget: number): boolean {
  return failures > budget;
}

interface HarnessStatus {
  harness?: string;
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
}

/**
 * The health gate for chart major 1's `kagent.dev/v1alpha3` `AgentTemplate`, which carries no
 * conditions of its own: each Harness that admitted it reports `Ready` in `status.harnesses[]`.
 * Healthy when kagent observed the generation written and every harness reports Ready true; `final`
 * when one reports Ready false for it.
 */
export function templateVerdict(template: LiveObject | null): GateVerdict {
  if (!template) return { healthy: false, final: false, reason: 'the live AgentTemplate does not exist' };
  const { generation } = template.metadata;
  const status = (template.status ?? {}) as { observedGeneration?: number; harnesses?: HarnessStatus[] };
  if (generation !== undefined && status.observedGeneration !== undefined && status.observedGeneration < generation) {
    return { healthy: false, final: false, reason: `kagent has not observed generation ${generation} yet (observed ${status.observedGeneration})` };
  }
  const harnesses = status.harnesses ?? [];
  if (harnesses.length === 0) return { healthy: false, final: false, reason: 'no Harness has admitted the AgentTemplate yet' };
  for (const harness of harnesses) {
    const ready = harness.conditions?.find((c) => c.type === 'Ready');
    const name = harness.harness ?? 'a harness';
    if (!ready) return { healthy: false, final: false, reason: `${name} reports no Ready condition yet` };
    if (ready.status !== 'True') {
      const why = [ready.reason, ready.message].filter(Boolean).join(': ');
      return { healthy: false, final: ready.status === 'False' && status.observedGeneration !== undefined, reason: `${name}: Ready is ${ready.status}${why ? ` (${why})` : ''}` };
    }
  }
  return { healthy: true };
}
