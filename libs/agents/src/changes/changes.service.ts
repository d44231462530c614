import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { AppConfig, AppError, Caller, OperationContexts, PeriodicSweep } from '@app/common';
import { UncertainWrite } from '../runner/uncertain-write.js';
import { auditOf, type CallerAccess } from '@app/doors';
import { McpHttpSessions, type McpNotice } from '@app/mcp';
import { AgentsService } from '../application/agents.service.js';
import type { AgentOrigin } from '../domain/agent-spec.js';
import type { CreateAgentDto, DeleteAgentDto, RollbackAgentDto, UpdateAgentDto } from '../api/requests.dto.js';
import { ChangeGate, changeLocation } from './change-gate.js';
import type { ChangeDecisionDto, ChangeDto, ChangeListDto, ChangeRefDto, ListChangesQueryDto } from './changes.dto.js';
import { ChangesRepository, type ChangeRecord } from './changes.repository.js';

/**
 * Reviewing and applying proposals (docs/contract.md §11, docs/approvals.md): who may read, approve, reject or withdraw
 * a change, its expiry, and the apply: the last required approval runs the proposer's write
 * through AgentsService (the one write runner) as the proposer, with If-Match on the version it
 * was planned on and the change id as its idempotency key.
 */
@Injectable()
export class ChangesService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Changes');
  private readonly sweeps = new PeriodicSweep(
    () => this.sweepOnce(),
    (error) => this.logger.warn(`the changes sweep failed, the next one tries again: ${error.message}`),
  );

  constructor(
    private readonly changes: ChangesRepository,
    private readonly gate: ChangeGate,
    private readonly agents: AgentsService,
    private readonly config: AppConfig,
    private readonly mcp: McpHttpSessions,
  ) {}

  /**
   * The changes sweep, every LEASE_TTL_SECONDS as the recovery sweep of operations: a change left
   * `applying` is finished without waiting for someone to read it, and a pending one past its expiry
   * becomes `expired` (and its proposer's session is told). A command (stdio MCP, store rebuild) runs none.
   */
  onApplicationBootstrap(): void {
    if (!this.config.backgroundWork) return;
    this.sweeps.start(this.staleMs);
  }

  /** Waits for the change being finished; the rest waits for the next sweep, here or on another replica. */
  async onModuleDestroy(): Promise<void> {
    await this.sweeps.stop();
  }

  /**
   * Finishes the changes nobody reads: each stalled `applying` one is claimed by one replica (a
   * conditional UPDATE on its version) and its write re-run under the change id as its idempotency
   * key, so a write that already landed answers from the journal and helm never runs twice; each
   * pending one past its expiry is expired. One pass at a time; never rejects (it runs from a timer).
   */
  sweep(): Promise<void> {
    return this.sweeps.run();
  }

  private async sweepOnce(): Promise<void> {
    const now = await this.changes.now();
    for (const change of await this.changes.unsettled(new Date(now.getTime() - this.staleMs), now, SWEEP_BATCH)) {
      if (this.sweeps.stopped) return;
      await this.expired(change).catch((error: unknown) => {
        this.logger.warn(`change ${change.id} (${change.state}) stays as it is, the next sweep tries again: ${(error as Error).message}`);
      });
    }
  }

  /** How long an `applying` change goes untouched before a reader resumes it. */
  private get staleMs(): number {
    return this.config.LEASE_TTL_SECONDS * 1000;
  }

  /** Newest first, only in namespaces where the caller may read changes. */
  async list(access: CallerAccess, query: ListChangesQueryDto): Promise<ChangeListDto> {
    // Filtered in the store, so the page holds the newest changes the caller may read; the check after it is the policy's own.
    const records = await this.changes.list({ ...query }, 100, access.namespacePatterns('list_changes'));
    const shown = records.filter((change) => access.isAllowed('list_changes', change.namespace));
    return { items: await Promise.all(shown.map((change) => this.expired(change).then((c) => this.view(c)))) };
  }

  async get(access: CallerAccess, { id }: ChangeRefDto): Promise<ChangeDto> {
    return this.view(await this.readable(access, id, 'get_change'));
  }

  /**
   * One approval: by a holder of the rule's approver role in the change's namespace, never the
   * proposer, once per person. The last one needed moves the change to `applying` in the same
   * conditional UPDATE, so exactly one approver's call applies it.
   */
  async approve(access: CallerAccess, { id }: ChangeRefDto, { comment }: ChangeDecisionDto): Promise<ChangeDto> {
    for (let attempt = 0; ; attempt++) {
      const change = await this.decidable(access, id, 'approve_change');
      const subject = access.principal.subject;
      if (change.approvals.some((a) => a.subject === subject)) throw new AppError('conflict', `change ${id} is already approved by ${subject}: it needs ${change.required} distinct approvers`);
      const approvals = [...change.approvals, { subject, actor: access.caller.actor, at: (await this.changes.now()).toISOString(), comment: comment ?? null }];
      const last = approvals.length >= change.required;
      if (!(await this.changes.approve(change, approvals, last))) {
        if (attempt < 3) continue;
        throw new AppError('conflict', `change ${id} moved while this approval was written: read it again (get_change) and approve if it is still pending`);
      }
      await this.journal(access.caller, 'approve_change', change, `change ${id}: approved by ${subject} (${approvals.length} of ${change.required})`, comment);
      const approved = { ...change, approvals, state: last ? ('applying' as const) : change.state };
      return this.view(last ? await this.apply(approved) : approved);
    }
  }

  async reject(access: CallerAccess, { id }: ChangeRefDto, { comment }: ChangeDecisionDto): Promise<ChangeDto> {
    const change = await this.decidable(access, id, 'reject_change');
    return this.close(access, change, 'rejected', 'reject_change', comment);
  }

  /** The proposer takes its change back. */
  async withdraw(access: CallerAccess, { id }: ChangeRefDto, { comment }: ChangeDecisionDto): Promise<ChangeDto> {
    const change = await this.pending(access, id, 'withdraw_change');
    if (change.proposer !== access.principal.subject) {
      await access.refuse('withdraw_change', change, `only the proposer (${change.proposer}) withdraws change ${id}; an approver rejects it with reject_change`);
    }
    return this.close(access, change, 'withdrawn', 'withdraw_change', comment);
  }

  private async close(access: CallerAccess, change: ChangeRecord, state: 'rejected' | 'withdrawn', operation: string, comment?: string): Promise<ChangeDto> {
    const by = access.principal.subject;
    if (!(await this.changes.transition(change.id, 'pending', { state, decidedBy: by, comment: comment ?? null, message: `${state} by ${by}` }))) {
      throw new AppError('conflict', `change ${change.id} was decided meanwhile: read it again with get_change`);
    }
    await this.journal(access.caller, operation, change, `change ${change.id}: ${state} by ${by}`, comment);
    return this.view(await this.decided((await this.changes.find(change.id))!));
  }

  /**
   * The proposer's write, run now as theirs: the Caller stored with the proposal (so the journal names
   * the proposer and the cluster's RBAC governs them under impersonation), a note naming the approvers,
   * If-Match on the version planned on, the change id as the idempotency key (a retry answers from the journal).
   */
  private async apply(change: ChangeRecord): Promise<ChangeRecord> {
    const approvers = change.approvals.map((a) => a.subject).join(', ');
    const caller: Caller = { ...(change.caller as unknown as Caller), note: `change ${change.id} approved by ${approvers}`, change: change.id };
    try {
      // The cluster is called as the proposer (impersonation reads the operation context): the approver's rights do not widen the write.
      const asProposer = { ...OperationContexts.current(), actor: caller.actor, door: caller.door, principal: caller.principal, client: caller.client };
      const answer = await OperationContexts.run(asProposer, () => this.run(caller, change));
      const operationId = operationOf(answer);
      await this.changes.transition(change.id, 'applying', { state: 'applied', operationId, message: `applied as ${change.proposer}'s ${change.operation}, approved by ${approvers}`, result: answer });
    } catch (error) {
      if (error instanceof UncertainWrite) {
        // helm may have applied it: the change stays applying, and a later read resumes it under the same key (answered from the journal).
        this.logger.warn(`change ${change.id}: its write's outcome is not known yet (${error.message}); it is resumed when read after ${this.staleMs / 1000}s`);
        await this.changes.transition(change.id, 'applying', { state: 'applying', message: `applying: its write's outcome is not known yet (${error.message}); read it again later` });
        return (await this.changes.find(change.id))!;
      }
      const failure = error instanceof AppError ? error : new AppError('internal', (error as Error).message);
      const moved = failure.code === 'precondition_failed' || failure.code === 'conflict';
      const message = moved
        ? `not applied: ${change.namespace}/${change.name} moved since the proposal was planned (${failure.message}); propose the change again on the agent as it is now`
        : `not applied: ${failure.message}`;
      this.logger.warn(`change ${change.id} ${moved ? 'conflicted' : 'failed'}: ${failure.message}`);
      await this.changes.transition(change.id, 'applying', { state: moved ? 'conflicted' : 'failed', message });
    }
    return this.decided((await this.changes.find(change.id))!);
  }

  /**
   * Tells the proposer's MCP session that its change was decided (docs/approvals.md): applied,
   * conflicted, failed, rejected or expired; withdrawing is the proposer's own act. The session may
   * be on another replica (McpHttpSessions routes it through the store) or gone (nothing fails).
   */
  private async decided(change: ChangeRecord): Promise<ChangeRecord> {
    if (change.proposerSession === null || !TOLD.has(change.state)) return change;
    const approvers = change.approvals.map((a) => a.subject);
    const decidedBy = change.state === 'rejected' ? [change.decidedBy ?? ''] : change.state === 'expired' ? [] : approvers;
    const data = {
      event: 'change_decided',
      change: change.id,
      location: changeLocation(change.id),
      state: change.state,
      operation: change.operation,
      agent: `${change.namespace}/${change.name}`,
      decidedBy,
      operationId: change.operationId,
      ...(change.comment && { comment: change.comment }),
      ...(change.state !== 'applied' && { error: change.message }),
      message: noticeText(change, decidedBy),
    };
    const notice: McpNotice = { level: change.state === 'applied' ? 'notice' : change.state === 'failed' ? 'error' : 'warning', logger: 'agent-manager/changes', data };
    await this.mcp.notify(change.proposerSession, `${change.id}:${change.state}`, notice);
    return change;
  }

  private run(caller: Caller, change: ChangeRecord): Promise<object> {
    const ref = { namespace: change.namespace, name: change.name };
    const input = { ...change.request.input, requestId: change.id };
    const version = change.plannedVersion === null ? {} : { expectedVersion: change.plannedVersion };
    const origin = change.request.origin as AgentOrigin | undefined;
    switch (change.operation) {
      case 'create_agent':
        return this.agents.create(caller, input as unknown as CreateAgentDto, origin);
      case 'update_agent':
        return this.agents.update(caller, ref, { ...input, ...version } as UpdateAgentDto, origin);
      case 'delete_agent':
        return this.agents.delete(caller, ref, { ...input, ...version } as DeleteAgentDto);
      case 'rollback_agent':
        return this.agents.rollback(caller, ref, { ...input, ...version } as RollbackAgentDto);
      default:
        throw new AppError('internal', `change ${change.id} holds an operation no write carries out: ${change.operation}`);
    }
  }

  /** A change the caller may read: not found when it may not read its namespace (nothing of it is shown). */
  private async readable(access: CallerAccess, id: string, ...operations: string[]): Promise<ChangeRecord> {
    const change = await this.changes.find(id);
    if (!change || !operations.some((operation) => access.isAllowed(operation, change.namespace))) throw new AppError('not_found', `no change ${id} that you may read: list them with list_changes`);
    return this.expired(change);
  }

  private async pending(access: CallerAccess, id: string, operation: string): Promise<ChangeRecord> {
    const change = await this.readable(access, id, 'get_change', operation);
    await access.authorize(operation, { namespace: change.namespace, name: change.name });
    if (change.state !== 'pending') {
      const why = change.state === 'expired' ? `it expired at ${change.expiresAt.toISOString()} unapproved: propose the change again` : `only a pending change can be decided`;
      throw new AppError('conflict', `change ${id} is ${change.state}: ${why}`);
    }
    return change;
  }

  /** A pending change the caller may decide: the rule's approver role in its namespace, never the proposer. */
  private async decidable(access: CallerAccess, id: string, operation: string): Promise<ChangeRecord> {
    const change = await this.pending(access, id, operation);
    const subject = access.principal.subject;
    if (change.proposer === subject) await access.refuse(operation, change, `${subject} proposed change ${id} and cannot decide it: another holder of role ${change.approvers} does (withdraw it with withdraw_change)`);
    if (!this.gate.holdsRole(access.principal, change.approvers, change.namespace)) {
      await access.refuse(operation, change, `${operation} of change ${id} needs role ${change.approvers} bound in namespace "${change.namespace}", which ${subject} does not hold`);
    }
    return change;
  }

  /**
   * A change as it stands now: a pending one past its expiry becomes `expired`, journaled once; an
   * `applying` one untouched for a lease's time (its replica died, or its write's outcome was not
   * known) is resumed by one reader — the write under the change id as its key answers from the
   * journal when it landed, or waits for a first run still going, so it never runs twice.
   */
  private async expired(change: ChangeRecord): Promise<ChangeRecord> {
    const now = (await this.changes.now()).getTime();
    if (change.state === 'applying' && now - change.updatedAt.getTime() > this.staleMs) {
      return (await this.changes.claim(change)) ? this.apply(change) : ((await this.changes.find(change.id)) ?? change);
    }
    if (change.state !== 'pending' || change.expiresAt.getTime() > now) return change;
    const message = `expired at ${change.expiresAt.toISOString()} with ${change.approvals.length} of ${change.required} approvals`;
    if (await this.changes.transition(change.id, 'pending', { state: 'expired', message })) {
      await this.journal(Caller.internal(), 'expire_change', change, `change ${change.id}: ${message}`);
      return this.decided((await this.changes.find(change.id))!);
    }
    return (await this.changes.find(change.id))!;
  }

  private journal(caller: Caller, operation: string, change: ChangeRecord, note: string, comment?: string): Promise<void> {
    return this.changes.journal({ ...auditOf(caller, operation), namespace: change.namespace, name: change.name, state: 'succeeded', note, request: { change: change.id, ...(comment && { comment }) } });
  }

  private view(change: ChangeRecord): ChangeDto {
    const { input } = change.request;
    return {
      id: change.id,
      state: change.state,
      operation: change.operation,
      namespace: change.namespace,
      name: change.name,
      proposer: change.proposer,
      request: input,
      plannedVersion: change.plannedVersion,
      values: change.preview.values,
      diff: change.diff,
      warnings: change.preview.warnings as ChangeDto['warnings'],
      approverRole: change.approvers,
      approvers: this.gate.approversOf(change.approvers, change.namespace),
      required: change.required,
      approvals: change.approvals.map(({ subject, at, comment }) => ({ subject, at, comment })),
      decidedBy: change.decidedBy,
      comment: change.comment,
      message: change.message,
      operationId: change.operationId,
      expiresAt: change.expiresAt.toISOString(),
      createdAt: change.createdAt.toISOString(),
      updatedAt: change.updatedAt.toISOString(),
    };
  }
}

/** What the proposer's session reads, in a sentence an LLM can relay. */
function noticeText(change: ChangeRecord, decidedBy: string[]): string {
  const what = `your change ${change.id} (${change.operation} ${change.namespace}/${change.name})`;
  const by = decidedBy.join(', ');
  switch (change.state) {
    case 'applied':
      return `${what} was approved by ${by} and applied${change.operationId ? ` (operation ${change.operationId}: get_operation)` : ''}`;
    case 'rejected':
      return `${what} was rejected by ${by}${change.comment ? `: ${change.comment}` : ''}`;
    case 'expired':
      return `${what} ${change.message ?? 'expired'}: propose it again if it is still wanted`;
    default:
      return `${what} was approved by ${by} and ${change.state}: ${change.message ?? ''}`;
  }
}

/** How many changes one sweep finishes at most (the next takes the rest). */
const SWEEP_BATCH = 50;

/** The states a proposer's session is told of (withdrawn is its own act; pending and applying are not decided yet). */
const TOLD: ReadonlySet<string> = new Set(['applied', 'conflicted', 'failed', 'rejected', 'expired']);

/** The journal entry of an applied write: its agent's last operation. */
function operationOf(answer: object): string | null {
  const agent = (answer as { agent?: { lastOperation?: { id?: string } | null } | null; deleted?: { lastOperation?: { id?: string } | null } }).agent ?? (answer as { deleted?: { lastOperation?: { id?: string } | null } }).deleted;
  return agent?.lastOperation?.id ?? null;
}
