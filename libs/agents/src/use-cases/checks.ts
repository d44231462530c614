import { AppError } from '@app/common';
import type { AgentRecord, AgentWithLastOperation } from '../persistence/records.js';
import type { PlanTools } from '../runner/write-plan.js';

/** The active agent of that name, at the expected version when one is given. */
export async function requireAgent(tools: PlanTools, namespace: string, name: string, expectedVersion?: number): Promise<AgentWithLastOperation> {
  const agent = await tools.repository.findActive(namespace, name);
  if (!agent) throw AppError.notFound(namespace, name);
  checkVersion(agent, expectedVersion);
  return agent;
}

/** Optimistic concurrency: a stale write is refused naming the current version. */
export function checkVersion(agent: AgentRecord, expected: number | undefined): void {
  if (expected === undefined || agent.version === expected) return;
  throw new AppError(
    'precondition_failed',
    `agent ${agent.namespace}/${agent.name} is at version ${agent.version}, not ${expected}: read it again (get_agent), re-apply your change to what it holds now, and send version ${agent.version}`,
    [{ path: 'expectedVersion', message: `the current version is ${agent.version}` }],
  );
}
