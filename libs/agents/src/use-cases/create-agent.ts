import { AppError } from '@app/common';
import { toolsetWarnings } from '@app/toolset';
import type { CreateAgentDto } from '../api/requests.dto.js';
import type { CreateResultDto, ProblemDto } from '../api/responses.dto.js';
import { intentChart, pickSpec, toChartValues, type AgentOrigin, type AgentSpec } from '../domain/agent-spec.js';
import { problems } from '../api/views.js';
import { appliedValues } from '../runner/write-runner.js';
import type { PlanTools, WritePlan } from '../runner/write-plan.js';
import type { AgentWriteStore } from '../runner/ports.js';

interface Checked {
  spec: AgentSpec;
  /** What the modelConfig check could not check (a missing ModelConfig is refused in check). */
  modelWarnings: ProblemDto[];
}

/**
 * Create: a new release of the agent chart (`helm install`, which refuses a name in use) and revision 1.
 * `origin`: the blueprint whose tool asked for it (recorded with the agent).
 */
export function createAgent(tools: PlanTools, input: CreateAgentDto, origin?: AgentOrigin): WritePlan<Checked, CreateResultDto> {
  const { namespace, name } = input;
  const spec = pickSpec(input) as AgentSpec;
  const values = toChartValues(spec);
  const warnings = problems(toolsetWarnings(spec.toolset));
  return {
    kind: 'create',
    namespace,
    name,
    dryRun: input.dryRun ?? false,
    idempotencyKey: input.requestId,
    request: { ...spec, namespace, name, ...(origin ? { blueprint: origin } : {}) },
    // helm install refuses a name whose release exists, as before; there is no release yet for anyone to own.
    checkOwner: false,
    async check() {
      const taken = await nameTaken(tools.repository, namespace, name);
      if (taken) throw taken;
      return { spec, modelWarnings: (await tools.modelConfigs?.check(namespace, spec.modelConfig)) ?? [] };
    },
    async preview({ modelWarnings }) {
      const manifests = await tools.helm.template({ namespace, name }, tools.chart, values);
      return { dryRun: true, agent: null, values, manifests, warnings: [...warnings, ...modelWarnings] };
    },
    // The chart it installs goes with the intent: recovery records the create with exactly that chart (the bundled one, while it stands in for AGENT_CHART).
    journal: () => ({ intent: { spec, values, origin, chart: intentChart(tools.chart) }, baseHelmRevision: null }),
    async apply() {
      const release = await tools.helm.install({ namespace, name }, tools.chart, values);
      return { helmRevision: release.revision, values: appliedValues(input, release.values, values), manifests: release.manifest };
    },
    record: (_checked, applied, operationId) =>
      tools.repository.recordCreate(namespace, name, tools.chart, {
        spec, values: applied.values ?? values, helmRevision: applied.helmRevision, kind: 'create', actor: tools.caller.actor, operationId, origin,
      }),
    answer: async ({ modelWarnings }, applied, agent) => ({ dryRun: false, agent: tools.view(agent), values: applied.values ?? values, manifests: applied.manifests, warnings: [...warnings, ...modelWarnings] }),
    recorded: async ({ agent, revision, manifests }) => ({ dryRun: false, agent, values: revision?.values ?? values, manifests, warnings }),
  };
}

/**
 * Whether an active agent holds the name: the create's refusal (409) when one does, else null. The
 * one place this is decided for a caller; validate_agent (mode create) answers the same refusal as a
 * violation. Under the agent's lock it decides; the unique activeKey backs it in the store.
 */
export async function nameTaken(store: Pick<AgentWriteStore, 'findActive'>, namespace: string, name: string): Promise<AppError | null> {
  return (await store.findActive(namespace, name)) ? exists(namespace, name) : null;
}

function exists(namespace: string, name: string): AppError {
  return new AppError(
    'conflict',
    `agent ${namespace}/${name} already exists: update it (PATCH /api/v1/agents/${namespace}/${name}, update_agent) or choose another name`,
    [{ path: 'name', message: 'an agent with this name exists in this namespace' }],
  );
}
