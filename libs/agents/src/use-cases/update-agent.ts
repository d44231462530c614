import { isDeepStrictEqual } from 'node:util';
import { toolsetWarnings } from '@app/toolset';
import type { AgentRefDto, UpdateAgentDto } from '../api/requests.dto.js';
import type { AgentWithLastOperation } from '../persistence/records.js';
import type { ProblemDto, UpdateResultDto } from '../api/responses.dto.js';
import { pickSpec, toChartValues, type AgentOrigin, type AgentSpec, type ChartValues } from '../domain/agent-spec.js';
import { problems } from '../api/views.js';
import type { Found, PlanTools, WritePlan, Write } from '../runner/write-plan.js';

/** The values of a chart major other than the spec's own fields, which an update keeps. */
function beyondSpec(values: ChartValues): Record<string, unknown> {
  const own = new Set(Object.keys(toChartValues({ modelConfig: '', toolset: [] })));
  return Object.fromEntries(Object.entries(values).filter(([key]) => !own.has(key)));
}

interface Decided extends Write {
  agent: AgentWithLastOperation;
  spec: AgentSpec;
  before: ChartValues;
  after: ChartValues;
  /** The values stay, only the blueprint origin moves (an upgrade to a version with the same values): no helm run, no revision. */
  originOnly: boolean;
}

/**
 * Update: the fields sent replace theirs (toolset, labels, annotations whole); one `helm upgrade`, a new revision.
 * `origin`: an upgrade to another version of the agent's blueprint (recorded with the change). When
 * the values stay the same, the agent is only moved to that version: journaled, no helm run, no revision.
 * Only a modelConfig the update moves to is checked: an update of other fields is not refused for a
 * ModelConfig that went missing since.
 */
export function updateAgent({ namespace, name }: AgentRefDto, input: UpdateAgentDto, origin?: AgentOrigin): WritePlan<Decided, UpdateResultDto> {
  const patch = pickSpec(input);
  const dryRun = input.dryRun ?? false;
  const warnings = (spec: AgentSpec, modelWarnings: ProblemDto[] = []) => [...problems(toolsetWarnings(spec.toolset)), ...modelWarnings];
  const unchangedAnswer = ({ agent, spec, before, after }: Decided, { modelWarnings }: Found, tools: PlanTools, recorded = agent): UpdateResultDto => ({
    dryRun, changed: false, before, after, agent: tools.view(recorded), manifests: '', warnings: warnings(spec, modelWarnings),
  });
  return {
    kind: 'update',
    namespace,
    name,
    dryRun,
    idempotencyKey: input.requestId,
    request: { ...patch, expectedVersion: input.expectedVersion, ...(origin ? { blueprint: origin } : {}) },
    expects: { present: true, expectedVersion: input.expectedVersion },
    modelConfig: patch.modelConfig,
    async decide({ agent: found }) {
      const agent = found!;
      const spec = { ...agent.spec, ...patch };
      // Values the spec does not hold (chart major 1's Muster server, written by a rollout's migration) stay as they are.
      const after = { ...beyondSpec(agent.values), ...toChartValues(spec) } as ChartValues;
      const moves = origin !== undefined && (agent.origin?.blueprint !== origin.blueprint || agent.origin?.version !== origin.version);
      const originOnly = isDeepStrictEqual(agent.values, after) && moves;
      return {
        agent, spec, before: agent.values, after, originOnly,
        journal: {
          agentId: agent.id,
          intent: { spec, values: after, origin },
          baseHelmRevision: agent.helmRevision,
          ...(originOnly && { step: `checks passed: the values stay; moving ${namespace}/${name} to version ${origin!.version} of blueprint ${origin!.blueprint}` }),
        },
        change: originOnly ? { none: { helmRevision: agent.helmRevision, values: agent.values, manifests: '' } } : { upgrade: { values: after } },
        record: originOnly ? { originMove: { agent, origin: origin! } } : { change: { agent, spec, values: after, kind: 'update', origin } },
      };
    },
    async unchanged(decided, found, tools) {
      if (!isDeepStrictEqual(decided.before, decided.after)) return undefined;
      return decided.originOnly && !dryRun ? undefined : unchangedAnswer(decided, found, tools);
    },
    async preview({ agent, spec, before, after }, { modelWarnings }, tools) {
      const manifests = await tools.helm.template({ namespace, name }, tools.chart, after);
      return { dryRun: true, changed: true, before, after, agent: tools.view(agent), manifests, warnings: warnings(spec, modelWarnings) };
    },
    answer: async (decided, applied, recorded, found, tools) =>
      decided.originOnly
        ? unchangedAnswer(decided, found, tools, recorded)
        : { dryRun: false, changed: true, before: decided.before, after: applied.values ?? decided.after, agent: tools.view(recorded), manifests: applied.manifests, warnings: warnings(decided.spec, found.modelWarnings) },
    recorded: async ({ agent, revision, previous, manifests }) => ({
      dryRun: false, changed: revision !== null, before: previous?.values ?? agent.values, after: revision?.values ?? agent.values, agent, manifests,
      warnings: warnings(revision?.spec ?? agent.spec),
    }),
  };
}
