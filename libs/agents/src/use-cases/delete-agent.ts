import type { AgentRefDto, DeleteAgentDto } from '../api/requests.dto.js';
import type { AgentWithLastOperation } from '../persistence/records.js';
import type { DeleteResultDto } from '../api/responses.dto.js';
import { requireAgent } from './checks.js';
import type { PlanTools, WritePlan } from '../runner/write-plan.js';

/** Delete: `helm uninstall`; the record and its revisions are kept as deleted. */
export function deleteAgent(tools: PlanTools, { namespace, name }: AgentRefDto, input: DeleteAgentDto): WritePlan<AgentWithLastOperation, DeleteResultDto> {
  return {
    kind: 'delete',
    namespace,
    name,
    dryRun: input.dryRun ?? false,
    idempotencyKey: input.requestId,
    request: { expectedVersion: input.expectedVersion },
    check: () => requireAgent(tools, namespace, name, input.expectedVersion),
    preview: async (agent) => ({ dryRun: true, deleted: tools.view(agent), releaseRemoved: false }),
    journal: (agent) => ({ agentId: agent.id, baseHelmRevision: agent.helmRevision }),
    async apply() {
      const releaseRemoved = await tools.helm.uninstall({ namespace, name });
      return { helmRevision: null, values: null, manifests: '', releaseRemoved };
    },
    record: (agent, _applied, operationId) => tools.repository.recordDelete(agent, operationId, tools.caller.actor),
    answer: async (_agent, applied, deleted) => ({ dryRun: false, deleted: tools.view(deleted), releaseRemoved: applied.releaseRemoved ?? false }),
    recorded: async ({ agent }) => ({ dryRun: false, deleted: agent, releaseRemoved: true }),
  };
}
