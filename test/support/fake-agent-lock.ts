import { randomUUID } from 'node:crypto';
import { AgentBusy, type HeldLease, type LockMode } from '../../libs/agents/src/runner/agent-lock.js';
import type { AgentHolding } from '../../libs/agents/src/runner/ports.js';

/**
 * A FAKE agent lock (AgentHolding): it runs the work at once, holding nothing, or refuses it with
 * AgentBusy as AgentLock refuses a contender past its wait, for an agent a test marks `busy`. It
 * notes each hold, so a unit suite sees how the runner took the agent. Waiting, renewing and
 * taking over leases across replicas are AgentLock's, tested against the real store (gates.int-spec.ts).
 */
export class FakeAgentLock implements AgentHolding {
  /** Each hold asked for: the agent and the mode. */
  readonly holds: string[] = [];
  /** Agents (`namespace/name`) another holder keeps: a hold of them is refused. */
  readonly busy = new Set<string>();
  /** Set on the next lease handed out: as if a renewal found it taken over while the work ran. */
  loseNext = false;

  async hold<T>(ref: { namespace: string; name: string }, mode: LockMode, work: (lease: HeldLease) => Promise<T>, operationId: string = randomUUID()): Promise<T> {
    const key = `${ref.namespace}/${ref.name}`;
    this.holds.push(`${mode} ${key}`);
    if (this.busy.has(key)) {
      throw new AgentBusy(`agent ${key} is held by operation op-of-another-holder on replica replica-b`, { owner: 'replica-b', operationId: 'op-of-another-holder', expiresAt: new Date(Date.now() + 5_000) });
    }
    const lease: HeldLease = { operationId, lost: this.loseNext };
    this.loseNext = false;
    return work(lease);
  }
}
