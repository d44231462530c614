import { AppError } from '@app/common';
import type { AgentRecord, AgentWithLastOperation } from '../persistence/records.js';
import type { PlanTools } from '../runner/write-plan.js';
import type { OwnerEvidenceReader } from '../cluster/release-owners.js';
import { gitopsOwner, ownedMessage, ownerName } from '../domain/gitops-owner.js';

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

/**
 * A live write to a release Flux or Argo CD applies from git is refused (409 gitops_owned, docs/contract.md
 * §13), naming the owner: the tool would undo it on its next sync. Read from the cluster on every
 * write (domain/gitops-owner.ts decides), never from the store: the owner can appear at any time.
 * Environmental: the same request may pass once the owner lets go, so an idempotency key never keeps it.
 */
export async function refuseGitopsOwned(owners: OwnerEvidenceReader | undefined, target: { namespace: string; name: string; operation: string }): Promise<void> {
  const evidence = await owners?.evidence(target.namespace, target.name);
  const owner = evidence ? gitopsOwner(evidence) : null;
  if (!owner) return;
  throw new AppError('gitops_owned', ownedMessage(owner, target, target.operation), [
    { path: 'owner', message: `${ownerName(owner)} (${owner.apiVersion}), seen on the ${owner.seenOn} (${owner.key})` },
  ]).fromEnvironment();
}
