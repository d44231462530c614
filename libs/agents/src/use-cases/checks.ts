import { AppError, type ErrorDetail } from '@app/common';
import type { AgentRecord, AgentWithLastOperation } from '../persistence/records.js';
import type { AgentWriteStore } from '../runner/ports.js';
import type { OwnerEvidenceReader } from '../cluster/release-owners.js';
import { gitopsOwner, ownedMessage, ownerName, type GitopsOwner } from '../domain/gitops-owner.js';

/** The active agent of that name, at the expected version when one is given. */
export async function requireAgent(store: Pick<AgentWriteStore, 'findActive'>, namespace: string, name: string, expectedVersion?: number): Promise<AgentWithLastOperation> {
  const agent = await store.findActive(namespace, name);
  if (!agent) throw AppError.notFound(namespace, name);
  checkVersion(agent, expectedVersion);
  return agent;
}

/**
 * Whether an active agent holds the name: the create's refusal (409) when one does, else null. The
 * one place this is decided for a caller; validate_agent (mode create) answers the same refusal as a
 * violation. Under the agent's lock it decides; the unique activeKey backs it in the store.
 */
export async function nameTaken(store: Pick<AgentWriteStore, 'findActive'>, namespace: string, name: string): Promise<AppError | null> {
  if (!(await store.findActive(namespace, name))) return null;
  return new AppError(
    'conflict',
    `agent ${namespace}/${name} already exists: update it (PATCH /api/v1/agents/${namespace}/${name}, update_agent) or choose another name`,
    [{ path: 'name', message: 'an agent with this name exists in this namespace' }],
  );
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

/** Flux's or Argo CD's object that manages the release, read afresh (domain/gitops-owner.ts decides); null when none, or when the cluster cannot be asked. */
export async function gitopsOwnerOf(owners: OwnerEvidenceReader | undefined, target: { namespace: string; name: string }): Promise<GitopsOwner | null> {
  const evidence = await owners?.evidence(target.namespace, target.name);
  return evidence ? gitopsOwner(evidence) : null;
}

/**
 * A live write to a release Flux or Argo CD applies from git is refused (409 gitops_owned, docs/contract.md
 * §13), naming the owner: the tool would undo it on its next sync. Read from the cluster on every
 * write, never from the store: the owner can appear at any time. Environmental: the same request
 * may pass once the owner lets go, so an idempotency key never keeps the refusal.
 */
export async function refuseGitopsOwned(owners: OwnerEvidenceReader | undefined, target: { namespace: string; name: string; operation: string }): Promise<void> {
  const owner = await gitopsOwnerOf(owners, target);
  if (!owner) return;
  throw new AppError('gitops_owned', ownedMessage(owner, target, target.operation), [
    { path: 'owner', message: `${ownerName(owner)} (${owner.apiVersion}), seen on the ${owner.seenOn} (${owner.key})` },
  ]).fromEnvironment();
}

/** A dry run's warning that the write itself would be refused: the owner, and to change it in git. */
export function ownedWarning(owner: GitopsOwner, target: { namespace: string; name: string; operation: string }): ErrorDetail {
  return { path: 'owner', message: `the write would be refused (gitops_owned): ${ownedMessage(owner, target, target.operation)}` };
}
