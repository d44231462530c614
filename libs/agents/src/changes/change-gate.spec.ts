import { describe, expect, it } from '@jest/globals';
import { AppError, type Caller } from '@app/common';
import type { Authorizer, CompiledApprovalRule } from '@app/auth';
import type { OwnerEvidenceReader } from '../cluster/release-owners.js';
import type { OwnerEvidence } from '../domain/gitops-owner.js';
import { ChangeGate, type Proposal } from './change-gate.js';
import type { ChangesRepository } from './changes.repository.js';

const RULE = { at: 'approvals[0]', approvers: 'approver', required: 1, expiresAfterMs: 3_600_000 } as unknown as CompiledApprovalRule;
const caller = { actor: 'llm-bot', door: 'mcp', requestId: 'r1', principal: { subject: 'llm-bot', groups: ['llm-agents'] } } as unknown as Caller;
const FLUX_LABELS = { 'helm.toolkit.fluxcd.io/name': 'agents-hr', 'helm.toolkit.fluxcd.io/namespace': 'flux-apps' };

/** A gate whose every write needs approval (a fake policy), over a fake store that records what is created, and owners read from `evidence`. */
function gate(evidence: Omit<OwnerEvidence, 'namespace' | 'name'> | null) {
  const created: unknown[] = [];
  const authorizer = { approvalFor: () => RULE, holdersOf: () => ['alice'] } as unknown as Authorizer;
  const changes = {
    findByKey: async () => null,
    now: async () => new Date('2026-12-03T12:00:00Z'),
    create: async (_subject: string, _key: string | undefined, change: object) => {
      created.push(change);
      return { ...change, id: 'ch-1', created: true, expiresAt: new Date('2026-12-04T12:00:00Z') };
    },
    journal: async () => undefined,
  } as unknown as ChangesRepository;
  const owners: OwnerEvidenceReader = { evidence: async (namespace, name) => evidence && { namespace, name, ...evidence } };
  return { gate: new ChangeGate(authorizer, changes, owners), created };
}

function proposal(operation: string): Proposal {
  return {
    operation,
    namespace: 'prod-payments',
    name: 'reviewer',
    input: { namespace: 'prod-payments', name: 'reviewer', modelConfig: 'm', toolset: ['preset:read-only'] },
    dryRun: async () => ({ plannedVersion: operation === 'create_agent' ? null : 3, before: null, after: { modelConfig: 'm' }, warnings: [], answer: { changed: true } }),
    render: async (values) => (values ? 'kind: Agent\n' : ''),
  };
}

describe('ChangeGate.propose on a release someone else owns', () => {
  it.each(['update_agent', 'delete_agent', 'rollback_agent'])('refuses a proposed %s with gitops_owned, storing no change', async (operation) => {
    const { gate: g, created } = gate({ live: { labels: FLUX_LABELS } });
    const refused = await g.propose(caller, RULE, proposal(operation)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('gitops_owned');
    expect((refused as AppError).message).toContain('flux-apps/agents-hr');
    expect(created).toHaveLength(0);
  });

  it('stores the proposal when nobody else owns the release', async () => {
    const { gate: g, created } = gate({ live: { labels: {} } });
    const answer = await g.propose<{ status: string }>(caller, RULE, proposal('update_agent'));
    expect(answer?.status).toBe('pending_approval');
    expect(created).toHaveLength(1);
  });

  it('does not ask who owns a release a create has not made yet', async () => {
    const { gate: g, created } = gate({ live: { labels: FLUX_LABELS } });
    const answer = await g.propose<{ status: string }>(caller, RULE, proposal('create_agent'));
    expect(answer?.status).toBe('pending_approval');
    expect(created).toHaveLength(1);
  });
});
