import { isDeepStrictEqual } from 'node:util';
import { toolsetWarnings } from '@app/toolset';
import type { AgentRefDto, UpdateAgentDto } from '../agents.dto.js';
import type { AgentWithLastOperation } from '../agents.records.js';
import type { UpdateResultDto } from '../agents.responses.js';
import { pickSpec, toChartValues, type AgentOrigin, type AgentSpec, type ChartValues } from '../agents.types.js';
import { problems } from '../agents.views.js';
import { requireAgent } from './checks.js';
import { appliedValues } from './write-pipeline.js';
import type { PlanTools, WritePlan } from './write-plan.js';

interface Checked {
  agent: AgentWithLastOperation;
  spec: AgentSpec;
  before: ChartValues;
  after: ChartValues;
}

/**
 * Update: the fields sent replace theirs (toolset, labels, annotations whole); one `helm upgrade`, a new revision.
 * `origin`: an upgrade to another version of the agent's blueprint (recorded with the change).
 */
export function updateAgent(tools: PlanTools, { namespace, name }: AgentRefDto, input: UpdateAgentDto, origin?: AgentOrigin): WritePlan<Checked, UpdateResultDto> {
  const patch = pickSpec(input);
  const warnings = (spec: AgentSpec) => problems(toolsetWarnings(spec.toolset));
  return {
    kind: 'update',
    namespace,
    name,
    dryRun: input.dryRun ?? false,
    idempotencyKey: input.requestId,
    request: { ...patch, expectedVersion: input.expectedVersion, ...(origin ? { blueprint: origin } : {}) },
    async check() {
      const agent = await requireAgent(tools, namespace, name, input.expectedVersion);
      const spec = { ...agent.spec, ...patch };
      return { agent, spec, before: agent.values, after: toChartValues(spec) };
    },
    async unchanged({ agent, spec, before, after }) {
      if (!isDeepStrictEqual(before, after)) return undefined;
      return { dryRun: input.dryRun ?? false, changed: false, before, after, agent: tools.view(agent), manifests: '', warnings: warnings(spec) };
    },
    async preview({ agent, spec, before, after }) {
      const manifests = await tools.helm.template({ namespace, name }, tools.chart, after);
      return { dryRun: true, changed: true, before, after, agent: tools.view(agent), manifests, warnings: warnings(spec) };
    },
    journal: ({ agent, spec, after }) => ({ agentId: agent.id, intent: { spec, values: after, origin }, baseHelmRevision: agent.helmRevision }),
    async apply({ after }) {
      const release = await tools.helm.upgradeInstall({ namespace, name }, tools.chart, after);
      return { helmRevision: release.revision, values: appliedValues({ namespace, name }, release.values, after), manifests: release.manifest };
    },
    record: ({ agent, spec, after }, applied, operationId, keep) =>
      tools.repository.recordChange(agent, {
        spec, values: applied.values ?? after, helmRevision: applied.helmRevision, kind: 'update', actor: tools.actor, operationId, chart: tools.chart, origin,
      }, keep),
    answer: async ({ before, after, spec }, applied, agent) => ({
      dryRun: false, changed: true, before, after: applied.values ?? after, agent, manifests: applied.manifests, warnings: warnings(spec),
    }),
    recorded: async ({ agent, revision, previous, manifests }) => ({
      dryRun: false, changed: true, before: previous?.values ?? agent.values, after: revision?.values ?? agent.values, agent, manifests,
      warnings: warnings(revision?.spec ?? agent.spec),
    }),
  };
}
