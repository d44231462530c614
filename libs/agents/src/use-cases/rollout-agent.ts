import type { ChartSource } from '@app/helm';
import { AppError } from '@app/common';
import type { AgentDto } from '../api/responses.dto.js';
import type { AgentWithLastOperation } from '../persistence/records.js';
import { chartIdentity } from '../domain/chart-identity.js';
import { appliedValues } from '../runner/write-runner.js';
import type { PlanTools, WritePlan } from '../runner/write-plan.js';
import { requireAgent } from './checks.js';

/** What one agent's move in a rollout answers the rollout. */
export interface RolloutStep {
  changed: boolean;
  agent: AgentDto;
  /** The helm revision the agent stands at after the step. */
  helmRevision: number | null;
}

interface Moving {
  agent: AgentWithLastOperation;
  onTarget: boolean;
}

/** The journal's operation for a rollout's writes: the policy grants them as start_fleet_rollout. */
const ROLLOUT_OPERATION = 'start_fleet_rollout';

/**
 * A rollout moves one agent to `target`: its values as they are, one `helm upgrade` to the target
 * chart, a new revision recording the chart. Planned on `expectedVersion` (If-Match): an agent
 * changed since the rollout was planned is refused, and the rollout reports it. An agent already on
 * the target chart's name and version is unchanged. The key makes a resumed rollout's retry answer
 * from the first run (or settle it) instead of upgrading twice.
 */
export function moveToChart(
  tools: PlanTools,
  ref: { namespace: string; name: string },
  input: { target: ChartSource; expectedVersion: number; requestId: string; rollout: string },
): WritePlan<Moving, RolloutStep> {
  const { namespace, name } = ref;
  const wanted = chartIdentity(input.target);
  const step = (agent: AgentDto | AgentWithLastOperation, changed: boolean, helmRevision: number | null): RolloutStep => ({
    changed,
    agent: 'origin' in agent ? tools.view(agent) : agent,
    helmRevision,
  });
  return {
    kind: 'update',
    operation: ROLLOUT_OPERATION,
    namespace,
    name,
    dryRun: false,
    idempotencyKey: input.requestId,
    request: { rollout: input.rollout, chart: input.target.ref, version: input.target.version ?? null, expectedVersion: input.expectedVersion },
    async check() {
      const agent = await requireAgent(tools, namespace, name, input.expectedVersion);
      return { agent, onTarget: agent.chart.name === wanted.name && agent.chart.version !== null && agent.chart.version === wanted.version };
    },
    unchanged: async ({ agent, onTarget }) => (onTarget ? step(agent, false, agent.helmRevision) : undefined),
    preview: async ({ agent }) => step(agent, true, agent.helmRevision),
    journal: ({ agent }) => ({
      agentId: agent.id,
      intent: { spec: agent.spec, values: agent.values },
      baseHelmRevision: agent.helmRevision,
      step: `checks passed: upgrading the helm release ${namespace}/${name} to chart ${wanted.name} ${wanted.version ?? ''} (rollout ${input.rollout})`.trim(),
    }),
    async apply({ agent }) {
      const release = await tools.helm.upgradeInstall(ref, input.target, agent.values);
      return { helmRevision: release.revision, values: appliedValues(ref, release.values, agent.values), manifests: release.manifest, chart: input.target };
    },
    record: ({ agent }, applied, operationId) =>
      tools.repository.recordChange(agent, {
        spec: agent.spec, values: applied.values ?? agent.values, helmRevision: applied.helmRevision, kind: 'update', actor: tools.caller.actor, operationId, chart: input.target,
      }),
    answer: async (_checked, applied, recorded) => step(recorded, true, applied.helmRevision),
    recorded: async ({ agent, revision }) => step(agent, revision !== null, revision?.helmRevision ?? null),
  };
}

/**
 * A wave that failed its gate returns each agent it moved to where it stood: `helm rollback` to the
 * helm revision before the move, which restores that revision's own chart and values, recorded as a
 * rollback revision naming the chart it returned to.
 */
export function returnFromChart(
  tools: PlanTools,
  ref: { namespace: string; name: string },
  input: { helmRevision: number; chart: ChartSource; revision: number; requestId: string; rollout: string },
): WritePlan<AgentWithLastOperation, RolloutStep> {
  const { namespace, name } = ref;
  return {
    kind: 'rollback',
    operation: ROLLOUT_OPERATION,
    namespace,
    name,
    dryRun: false,
    idempotencyKey: input.requestId,
    request: { rollout: input.rollout, helmRevision: input.helmRevision, revision: input.revision },
    check: () => requireAgent(tools, namespace, name),
    preview: async (agent) => ({ changed: true, agent: tools.view(agent), helmRevision: agent.helmRevision }),
    journal: (agent) => ({
      agentId: agent.id,
      intent: { spec: agent.spec, values: agent.values, rolledBackTo: input.revision },
      baseHelmRevision: agent.helmRevision,
      step: `checks passed: rolling the helm release ${namespace}/${name} back to its revision ${input.helmRevision} (rollout ${input.rollout} stopped)`,
    }),
    async apply(agent) {
      await tools.helm.rollback(ref, input.helmRevision);
      const info = await tools.helm.status(ref);
      if (!info) throw new AppError('backend_error', `helm rolled back ${namespace}/${name} but then reports no release: check it with helm history`);
      return { helmRevision: info.revision, values: appliedValues(ref, info.values, agent.values), manifests: info.manifest, chart: input.chart };
    },
    record: (agent, applied, operationId) =>
      tools.repository.recordChange(agent, {
        spec: agent.spec, values: applied.values ?? agent.values, helmRevision: applied.helmRevision, kind: 'rollback', actor: tools.caller.actor, operationId, rolledBackTo: input.revision, chart: input.chart,
      }),
    answer: async (_agent, applied, recorded) => ({ changed: true, agent: tools.view(recorded), helmRevision: applied.helmRevision }),
    recorded: async ({ agent, revision }) => ({ changed: true, agent, helmRevision: revision?.helmRevision ?? null }),
  };
}
