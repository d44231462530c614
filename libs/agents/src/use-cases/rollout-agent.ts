import type { ChartSource } from '@app/helm';
import type { AgentDto } from '../api/responses.dto.js';
import type { AgentWithLastOperation } from '../persistence/records.js';
import { intentChart, type ChartValues } from '../domain/agent-spec.js';
import { chartIdentity } from '../domain/chart-identity.js';
import type { PlanTools, WritePlan, Write } from '../runner/write-plan.js';

/** What one agent's move in a rollout answers the rollout. */
export interface RolloutStep {
  changed: boolean;
  agent: AgentDto;
  /** The helm revision the agent stands at after the step. */
  helmRevision: number | null;
}

interface Moving extends Write {
  agent: AgentWithLastOperation;
  onTarget: boolean;
}

/** helm leaves an object so annotated in place when a release stops rendering it. */
export const KEEP_ANNOTATION = 'helm.sh/resource-policy';

/**
 * A move to another chart major (0.x → 1.x): the values the target major takes (chart-migrations.ts)
 * and the chart the agent runs now, which first marks the old object to be kept (zero gap).
 */
export interface MajorSwitch {
  from: ChartSource;
  values: Record<string, unknown>;
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
  ref: { namespace: string; name: string },
  input: { target: ChartSource; expectedVersion: number; requestId: string; rollout: string; switchMajor?: MajorSwitch },
): WritePlan<Moving, RolloutStep> {
  const switching = input.switchMajor;
  const { namespace, name } = ref;
  const wanted = chartIdentity(input.target);
  const step = (tools: PlanTools, agent: AgentDto | AgentWithLastOperation, changed: boolean, helmRevision: number | null): RolloutStep => ({
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
    expects: { present: true, expectedVersion: input.expectedVersion },
    async decide({ agent: found }) {
      const agent = found!;
      // Expand: the old object is marked to stay when the release stops rendering it, then the release
      // moves to the new major beside it. The rollout removes the old object once the new one is healthy.
      const values = switching ? (switching.values as unknown as ChartValues) : agent.values;
      const first = switching && { chart: switching.from, values: { ...agent.values, annotations: { ...agent.values.annotations, [KEEP_ANNOTATION]: 'keep' } } };
      return {
        agent,
        onTarget: agent.chart.name === wanted.name && agent.chart.version !== null && agent.chart.version === wanted.version,
        journal: {
          agentId: agent.id,
          intent: { spec: agent.spec, values, chart: intentChart(input.target) },
          baseHelmRevision: agent.helmRevision,
          step: `checks passed: upgrading the helm release ${namespace}/${name} to chart ${wanted.name} ${wanted.version ?? ''} (rollout ${input.rollout})`.trim(),
        },
        change: { upgrade: { chart: input.target, values, ...(first && { first }) } },
        record: { change: { agent, spec: agent.spec, values, kind: 'update', chart: input.target } },
      };
    },
    unchanged: async ({ agent, onTarget }, _found, tools) => (onTarget ? step(tools, agent, false, agent.helmRevision) : undefined),
    preview: async ({ agent }, _found, tools) => step(tools, agent, true, agent.helmRevision),
    answer: async (_decided, applied, recorded, _found, tools) => step(tools, recorded, true, applied.helmRevision),
    recorded: async ({ agent, revision }) => ({ changed: revision !== null, agent, helmRevision: revision?.helmRevision ?? null }),
  };
}

/**
 * A wave that failed its gate returns each agent it moved to where it stood: `helm upgrade` to the
 * chart and values of its revision before the move, recorded as a rollback revision naming that
 * chart. An upgrade, not `helm rollback`: after a move across majors the old object was kept outside
 * the release, and only an upgrade takes such an object back into the release (a rollback refuses
 * it), so the old object serves throughout.
 */
export function returnFromChart(
  ref: { namespace: string; name: string },
  input: { chart: ChartSource; values: ChartValues; revision: number; requestId: string; rollout: string },
): WritePlan<Write & { agent: AgentWithLastOperation }, RolloutStep> {
  const { namespace, name } = ref;
  return {
    kind: 'rollback',
    operation: ROLLOUT_OPERATION,
    namespace,
    name,
    dryRun: false,
    idempotencyKey: input.requestId,
    request: { rollout: input.rollout, revision: input.revision },
    expects: { present: true },
    decide: async ({ agent }) => ({
      agent: agent!,
      journal: {
        agentId: agent!.id,
        intent: { spec: agent!.spec, values: input.values, rolledBackTo: input.revision, chart: intentChart(input.chart) },
        baseHelmRevision: agent!.helmRevision,
        step: `checks passed: returning the helm release ${namespace}/${name} to its revision ${input.revision}'s chart and values (rollout ${input.rollout} stopped)`,
      },
      change: { upgrade: { chart: input.chart, values: input.values } },
      record: { change: { agent: agent!, spec: agent!.spec, values: input.values, kind: 'rollback', rolledBackTo: input.revision, chart: input.chart } },
    }),
    preview: async ({ agent }, _found, tools) => ({ changed: true, agent: tools.view(agent), helmRevision: agent.helmRevision }),
    answer: async (_decided, applied, recorded, _found, tools) => ({ changed: true, agent: tools.view(recorded), helmRevision: applied.helmRevision }),
    recorded: async ({ agent, revision }) => ({ changed: true, agent, helmRevision: revision?.helmRevision ?? null }),
  };
}
