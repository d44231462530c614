import { isDeepStrictEqual } from 'node:util';
import { toolsetWarnings } from '@app/toolset';
import type { AgentRefDto, UpdateAgentDto } from '../api/requests.dto.js';
import type { AgentWithLastOperation } from '../persistence/records.js';
import type { ProblemDto, UpdateResultDto } from '../api/responses.dto.js';
import { pickSpec, toChartValues, type AgentOrigin, type AgentSpec, type ChartValues } from '../domain/agent-spec.js';
import { problems } from '../api/views.js';
import { appliedValues } from '../runner/write-runner.js';
import type { PlanTools, WritePlan } from '../runner/write-plan.js';
import { requireAgent } from './checks.js';

/** The values of a chart major other than the spec's own fields, which an update keeps. */
function beyondSpec(values: ChartValues): Record<string, unknown> {
  const own = new Set(Object.keys(toChartValues({ modelConfig: '', toolset: [] })));
  return Object.fromEntries(Object.entries(values).filter(([key]) => !own.has(key)));
}

interface Checked {
  agent: AgentWithLastOperation;
  spec: AgentSpec;
  before: ChartValues;
  after: ChartValues;
  /** The values stay, only the blueprint origin moves (an upgrade to a version with the same values): no helm run, no revision. */
  originOnly: boolean;
  /** What the modelConfig check could not check (checked when the update names another ModelConfig; a missing one is refused). */
  modelWarnings: ProblemDto[];
}

/**
 * Update: the fields sent replace theirs (toolset, labels, annotations whole); one `helm upgrade`, a new revision.
 * `origin`: an upgrade to another version of the agent's blueprint (recorded with the change). When
 * the values stay the same, the agent is only moved to that version: journaled, no helm run, no revision.
 */
export function updateAgent(tools: PlanTools, { namespace, name }: AgentRefDto, input: UpdateAgentDto, origin?: AgentOrigin): WritePlan<Checked, UpdateResultDto> {
  const patch = pickSpec(input);
  const dryRun = input.dryRun ?? false;
  const warnings = (spec: AgentSpec, modelWarnings: ProblemDto[] = []) => [...problems(toolsetWarnings(spec.toolset)), ...modelWarnings];
  const unchangedAnswer = ({ agent, spec, before, after, modelWarnings }: Checked, recorded = agent): UpdateResultDto => ({
    dryRun, changed: false, before, after, agent: tools.view(recorded), manifests: '', warnings: warnings(spec, modelWarnings),
  });
  return {
    kind: 'update',
    namespace,
    name,
    dryRun,
    idempotencyKey: input.requestId,
    request: { ...patch, expectedVersion: input.expectedVersion, ...(origin ? { blueprint: origin } : {}) },
    async check() {
      const agent = await requireAgent(tools, namespace, name, input.expectedVersion);
      const spec = { ...agent.spec, ...patch };
      // Values the spec does not hold (chart major 1's Muster server, written by a rollout's migration) stay as they are.
      const after = { ...beyondSpec(agent.values), ...toChartValues(spec) } as ChartValues;
      const sameValues = isDeepStrictEqual(agent.values, after);
      const moves = origin !== undefined && (agent.origin?.blueprint !== origin.blueprint || agent.origin?.version !== origin.version);
      // Only a modelConfig the update moves to is checked: an update of other fields is not refused for a ModelConfig that went missing since.
      const movesModel = patch.modelConfig !== undefined && patch.modelConfig !== agent.spec.modelConfig;
      const modelWarnings = movesModel ? ((await tools.modelConfigs?.check(namespace, patch.modelConfig!)) ?? []) : [];
      return { agent, spec, before: agent.values, after, originOnly: sameValues && moves, modelWarnings };
    },
    async unchanged(checked) {
      if (!isDeepStrictEqual(checked.before, checked.after)) return undefined;
      return checked.originOnly && !dryRun ? undefined : unchangedAnswer(checked);
    },
    async preview({ agent, spec, before, after, modelWarnings }) {
      const manifests = await tools.helm.template({ namespace, name }, tools.chart, after);
      return { dryRun: true, changed: true, before, after, agent: tools.view(agent), manifests, warnings: warnings(spec, modelWarnings) };
    },
    journal: ({ agent, spec, after, originOnly }) => ({
      agentId: agent.id,
      intent: { spec, values: after, origin },
      baseHelmRevision: agent.helmRevision,
      ...(originOnly && { step: `checks passed: the values stay; moving ${namespace}/${name} to version ${origin!.version} of blueprint ${origin!.blueprint}` }),
    }),
    async apply({ agent, after, originOnly }) {
      if (originOnly) return { helmRevision: agent.helmRevision, values: agent.values, manifests: '' };
      const release = await tools.helm.upgradeInstall({ namespace, name }, tools.chart, after);
      return { helmRevision: release.revision, values: appliedValues({ namespace, name }, release.values, after), manifests: release.manifest };
    },
    record: ({ agent, spec, after, originOnly }, applied, operationId) =>
      originOnly
        ? tools.repository.recordOriginMove(agent, origin!, operationId)
        : tools.repository.recordChange(agent, {
            spec, values: applied.values ?? after, helmRevision: applied.helmRevision, kind: 'update', actor: tools.caller.actor, operationId, chart: tools.chart, origin,
          }),
    answer: async (checked, applied, recorded) =>
      checked.originOnly
        ? unchangedAnswer(checked, recorded)
        : { dryRun: false, changed: true, before: checked.before, after: applied.values ?? checked.after, agent: tools.view(recorded), manifests: applied.manifests, warnings: warnings(checked.spec, checked.modelWarnings) },
    recorded: async ({ agent, revision, previous, manifests }) => ({
      dryRun: false, changed: revision !== null, before: previous?.values ?? agent.values, after: revision?.values ?? agent.values, agent, manifests,
      warnings: warnings(revision?.spec ?? agent.spec),
    }),
  };
}
