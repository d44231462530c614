import { isDeepStrictEqual } from 'node:util';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { ANONYMOUS, Authorizer, type CompiledApprovalRule, type Principal } from '@app/auth';
import { AppError, type Caller } from '@app/common';
import { auditOf } from '@app/doors';
import type { ProposedChangeDto } from '../api/responses.dto.js';
import { manifestDiff } from '../domain/spec-diff.js';
import { ReleaseOwners, type OwnerEvidenceReader } from '../cluster/release-owners.js';
import { refuseGitopsOwned } from '../use-cases/checks.js';
import { ChangesRepository, type ChangeRecord } from './changes.repository.js';

/** What the write's dry run told, in the shape every proposable write can give it. */
export interface PlannedWrite {
  /** The agent version planned on (its If-Match when applied); null for a create. */
  plannedVersion: number | null;
  before: object | null;
  after: object | null;
  warnings: unknown[];
}

/** A proposable write as the service takes it: the request, and the dry run and rendering it is planned with. */
export interface Proposal {
  operation: string;
  namespace: string;
  name: string;
  input: Record<string, unknown>;
  origin?: Record<string, unknown>;
  /** The write's dry run, through the write runner (helm template only). */
  dryRun(): Promise<PlannedWrite & { answer: object }>;
  /** The manifests `values` render to ('' for none): the diff's two sides. */
  render(values: object | null): Promise<string>;
}

/** The ids and location of a change, as writes and reviews name it. */
export const changeLocation = (id: string) => `/api/v1/changes/${id}`;

/**
 * Where a write that an approval rule selects becomes a proposal instead of running (docs/contract.md §11, docs/approvals.md):
 * the services ask `ruleFor` before the write runner, and hand the write to `propose` when a rule
 * selects it, so both doors answer alike. A write carrying
 * out an approved change (`caller.change`) and a dry run pass as today.
 */
@Injectable()
export class ChangeGate {
  constructor(
    private readonly authorizer: Authorizer,
    private readonly changes: ChangesRepository,
    @Optional() @Inject(ReleaseOwners) private readonly owners?: OwnerEvidenceReader,
  ) {}

  /** The rule that makes this write a proposal; undefined when it runs now. */
  ruleFor(caller: Caller, operation: string, namespace: string, dryRun: boolean | undefined): CompiledApprovalRule | undefined {
    if (dryRun || caller.change) return undefined;
    return this.authorizer.approvalFor(principalOf(caller), operation, namespace);
  }

  /** Whether `principal` holds `role` in `namespace` (by a binding of that role): who may decide a change. */
  holdsRole(principal: Principal, role: string, namespace: string): boolean {
    return this.authorizer.holdsRole(principal, role, namespace);
  }

  /** Who may approve under `role` in `namespace`, as the policy binds it. */
  approversOf(role: string, namespace: string) {
    return this.authorizer.holdersOf(role, namespace);
  }

  /**
   * The write `rule` selected (ruleFor) as a proposal: its dry run's answer with `status:
   * pending_approval` and the change. An update that would change nothing answers its dry run
   * (nothing to approve). A write no rule selects never reaches here with its request.
   */
  async propose<A extends object>(caller: Caller, rule: CompiledApprovalRule, write: Proposal): Promise<A> {
    const principal = principalOf(caller);
    const key = typeof write.input.requestId === 'string' ? write.input.requestId : undefined;
    const request = { input: withoutKey(write.input), ...(write.origin && { origin: write.origin }) };
    const earlier = key === undefined ? null : await this.changes.findByKey(principal.subject, key);
    if (earlier) return this.replay<A>(earlier, write.operation, request);
    // A release Flux or Argo CD applies from git would refuse the apply (docs/contract.md §13): refused
    // now, as the write itself is, rather than stored for approvers to approve in vain.
    if (write.operation !== 'create_agent') await refuseGitopsOwned(this.owners, write);
    const planned = await write.dryRun();
    if ((planned.answer as { changed?: boolean }).changed === false) return planned.answer as A;
    const [current, proposed] = await Promise.all([write.render(planned.before), write.render(planned.after)]);
    const diff = manifestDiff(`${write.namespace}/${write.name}`, current, proposed, { from: 'current', to: 'proposed' });
    const change = await this.changes.create(principal.subject, key, {
      operation: write.operation,
      namespace: write.namespace,
      name: write.name,
      request,
      caller: withoutSession(caller),
      proposerSession: caller.mcpSession ?? null,
      plannedVersion: planned.plannedVersion,
      preview: { values: { before: planned.before, after: planned.after }, warnings: planned.warnings, answer: planned.answer },
      diff,
      rule: rule.at,
      approvers: rule.approvers,
      required: rule.required,
      expiresAt: new Date((await this.changes.now()).getTime() + rule.expiresAfterMs),
    });
    if (change.created === false) return this.replay<A>(change, write.operation, request);
    await this.changes.journal({
      ...auditOf(caller, write.operation),
      namespace: write.namespace,
      name: write.name,
      state: 'proposed',
      note: `change ${change.id}: proposed for approval by ${rule.approvers} (${rule.required} needed, policy ${rule.at})`,
      request: { change: change.id },
    });
    return { ...planned.answer, status: 'pending_approval', change: this.summary(change) } as A;
  }

  /**
   * A retry of a proposed write with the same idempotency key gets the same change (as a retried
   * write gets its first answer); the key sent with another request is refused, as for a write.
   */
  private replay<A>(earlier: ChangeRecord, operation: string, request: ChangeRecord['request']): A {
    const same = earlier.operation === operation && isDeepStrictEqual(JSON.parse(JSON.stringify(request)), earlier.request);
    if (!same) {
      throw new AppError('conflict', `requestId was already used for change ${earlier.id} (${earlier.operation} ${earlier.namespace}/${earlier.name}) with other arguments: send a new requestId for another write`, [
        { path: 'requestId', message: `already used for change ${earlier.id}` },
      ]);
    }
    return { ...(earlier.preview.answer ?? {}), status: 'pending_approval', change: this.summary(earlier) } as A;
  }

  summary(change: ChangeRecord): ProposedChangeDto {
    return {
      id: change.id,
      location: changeLocation(change.id),
      approvers: this.approversOf(change.approvers, change.namespace),
      required: change.required,
      diff: change.diff,
      expiresAt: change.expiresAt.toISOString(),
    };
  }
}

/** The proposer as the apply runs it: the session it proposed in is told the decision, it is no part of the write. */
function withoutSession(caller: Caller): Record<string, unknown> {
  const { mcpSession: _session, ...rest } = caller;
  return { ...rest };
}

function principalOf(caller: Caller): Principal {
  return (caller.principal as Principal | undefined) ?? ANONYMOUS;
}

/** The request as stored: its idempotency key and dry-run flag are the apply's own (the change id; false). */
function withoutKey(input: Record<string, unknown>): Record<string, unknown> {
  const { requestId: _key, dryRun: _dryRun, ...rest } = input;
  return rest;
}
