import type { AgentRefDto, DeleteAgentDto } from '../api/requests.dto.js';
import type { AgentWithLastOperation } from '../persistence/records.js';
import type { DeleteResultDto } from '../api/responses.dto.js';
import type { WritePlan, Write } from '../runner/write-plan.js';

interface Decided extends Write {
  agent: AgentWithLastOperation;
}

/** Delete: `helm uninstall`; the record and its revisions are kept as deleted. */
export function deleteAgent({ namespace, name }: AgentRefDto, input: DeleteAgentDto): WritePlan<Decided, DeleteResultDto> {
  return {
    kind: 'delete',
    namespace,
    name,
    dryRun: input.dryRun ?? false,
    idempotencyKey: input.requestId,
    request: { expectedVersion: input.expectedVersion },
    expects: { present: true, expectedVersion: input.expectedVersion },
    decide: async ({ agent }) => ({
      agent: agent!,
      journal: { agentId: agent!.id, baseHelmRevision: agent!.helmRevision },
      change: { uninstall: true },
      record: { delete: { agent: agent! } },
    }),
    preview: async ({ agent }, _found, tools) => ({ dryRun: true, deleted: tools.view(agent), releaseRemoved: false }),
    answer: async (_decided, applied, deleted, _found, tools) => ({ dryRun: false, deleted: tools.view(deleted), releaseRemoved: applied.releaseRemoved ?? false }),
    recorded: async ({ agent }) => ({ dryRun: false, deleted: agent, releaseRemoved: true }),
  };
}
