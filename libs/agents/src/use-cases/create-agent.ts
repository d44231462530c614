import { toolsetWarnings } from '@app/toolset';
import type { CreateAgentDto } from '../api/requests.dto.js';
import type { CreateResultDto } from '../api/responses.dto.js';
import { specAndValues, type AgentOrigin } from '../domain/agent-spec.js';
import { problems } from '../api/views.js';
import type { WritePlan, Write } from '../runner/write-plan.js';

/**
 * Create: a new release of the agent chart (`helm install`, which refuses a name in use) and revision 1,
 * as data: the runner checks that the name is free and the modelConfig exists, then installs and records.
 * `origin`: the blueprint whose tool asked for it (recorded with the agent). The chart is the run's (the
 * configured one, or the bundled one standing in for it); the runner names it in the intent and the record.
 */
export function createAgent(input: CreateAgentDto, origin?: AgentOrigin): WritePlan<Write, CreateResultDto> {
  const { namespace, name } = input;
  const { spec, values } = specAndValues(input);
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
    expects: 'absent',
    modelConfig: spec.modelConfig,
    write: {
      journal: { intent: { spec, values, origin }, baseHelmRevision: null },
      change: { install: { values } },
      record: { create: { spec, values, origin } },
    },
    async preview(_write, { modelWarnings }, tools) {
      const manifests = await tools.helm.template({ namespace, name }, tools.chart, values);
      return { dryRun: true, agent: null, values, manifests, warnings: [...warnings, ...modelWarnings] };
    },
    answer: async (_write, applied, agent, { modelWarnings }, tools) => ({
      dryRun: false, agent: tools.view(agent), values: applied.values ?? values, manifests: applied.manifests, warnings: [...warnings, ...modelWarnings],
    }),
    recorded: async ({ agent, revision, manifests }) => ({ dryRun: false, agent, values: revision?.values ?? values, manifests, warnings }),
  };
}
