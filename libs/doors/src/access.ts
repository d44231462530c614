import { Inject, Injectable, Logger } from '@nestjs/common';
import { ANONYMOUS, Authorizer, namespacePatternToSqlLike, type Principal } from '@app/auth';
import { AppError, OperationContexts, type Caller } from '@app/common';
import { auditOf, type JournalReader } from './audit-entry.js';
import { RefusalJournal } from './refusal-journal.js';
import { isAdmin } from './redaction.js';

/** The write an operation's dry run or validation stands for. */
export const WRITE_OF_VALIDATE = { create: 'create_agent', update: 'update_agent' } as const;

/**
 * The policy, for both doors: refusals are journaled (the audit trail) and answered 403 naming
 * operation, namespace and principal. `for(caller)` binds it to one caller, the value the door
 * built (libs/common/src/caller.ts); nothing here reads the ambient operation context.
 */
@Injectable()
export class AgentAccess {
  private readonly logger = new Logger('Audit');

  constructor(
    private readonly authorizer: Authorizer,
    @Inject(RefusalJournal) private readonly refusals: RefusalJournal,
  ) {}

  /** The policy as it applies to `caller`. */
  for(caller: Caller): CallerAccess {
    return new CallerAccess(caller, this);
  }

  /** Who `caller` was verified to be (anonymous when no door verified anyone). */
  principalOf(caller: Caller): Principal {
    return (caller.principal as Principal | undefined) ?? ANONYMOUS;
  }

  /** Refuses (403, journaled) unless `caller` may perform `operation` in `namespace` (without one: somewhere). */
  async authorize(caller: Caller, operation: string, target: { namespace?: string; name?: string } = {}): Promise<void> {
    const principal = this.principalOf(caller);
    OperationContexts.learn({ subject: principal.subject, operation, agent: target.namespace && target.name ? `${target.namespace}/${target.name}` : undefined });
    try {
      this.authorizer.authorize(principal, operation, target.namespace);
    } catch (error) {
      if (error instanceof AppError && error.code === 'forbidden') await this.journal(caller, operation, target, error.message);
      throw error;
    }
  }

  /** Where `caller` may perform `operation`; `all` when everywhere. */
  namespacesFor(caller: Caller, operation: string): ReturnType<Authorizer['namespacesFor']> {
    return this.authorizer.namespacesFor(this.principalOf(caller), operation);
  }

  /** Whether `caller` may perform `operation` in `namespace`, without a refusal or a journal entry. */
  isAllowed(caller: Caller, operation: string, namespace?: string): boolean {
    return this.authorizer.isAllowed(this.principalOf(caller), operation, namespace);
  }

  /** An admin is granted every operation in every namespace (`*` on `*`): sees paths and helm's own words. */
  isAdmin(caller: Caller): boolean {
    return isAdmin(this.authorizer, this.principalOf(caller));
  }

  /**
   * Refuses `operation` on `target` for `caller` (403), journaled as the policy's refusals are: for a
   * rule an operation decides itself (a change's proposer deciding it, an approver without the role).
   */
  async refuse(caller: Caller, operation: string, target: { namespace?: string; name?: string }, message: string): Promise<never> {
    await this.journal(caller, operation, target, message);
    throw new AppError('forbidden', message);
  }

  private async journal(caller: Caller, operation: string, target: { namespace?: string; name?: string }, message: string): Promise<void> {
    const entry = auditOf(caller, operation);
    try {
      await this.refusals.journalRefusal({ ...entry, namespace: target.namespace ?? '*', name: target.name ?? '', errorMessage: message });
    } catch (error) {
      this.logger.error(`journaling the refusal of ${operation} for ${entry.subject ?? entry.actor} failed: ${(error as Error).message}`);
    }
  }
}

/** The policy bound to one caller: what an operation's authorization and scoping read. */
export class CallerAccess {
  constructor(
    readonly caller: Caller,
    private readonly access: AgentAccess,
  ) {}

  get principal(): Principal {
    return this.access.principalOf(this.caller);
  }

  /** Refuses (403, journaled) unless the caller may perform `operation` in `namespace` (without one: somewhere). */
  authorize(operation: string, target: { namespace?: string; name?: string } = {}): Promise<void> {
    return this.access.authorize(this.caller, operation, target);
  }

  /**
   * validate_agent, and the write it stands for (create_agent or update_agent), in its namespace.
   * A validation answers its violations rather than refusing the request, so a namespace, name or
   * mode it finds invalid still arrives here: an invalid namespace is checked as "somewhere" (no
   * grant decides on a namespace no agent can be in, and the audit trail never holds it), an
   * invalid name is left out of the audit entry, and an unknown mode stands for a create.
   */
  async authorizeValidate(command: { input: { namespace: string; name: string; mode?: string }; violations: { path: string }[] }): Promise<void> {
    const { input, violations } = command;
    const invalid = (path: string) => violations.some((v) => v.path === path);
    const target = invalid('namespace') ? {} : invalid('name') ? { namespace: input.namespace } : { namespace: input.namespace, name: input.name };
    await this.authorize('validate_agent', target);
    await this.authorize(WRITE_OF_VALIDATE[input.mode === 'update' ? 'update' : 'create'], target);
  }

  /** Refuses `operation` on `target` (403, journaled) with `message`: a rule the operation decides itself. */
  refuse(operation: string, target: { namespace?: string; name?: string }, message: string): Promise<never> {
    return this.access.refuse(this.caller, operation, target, message);
  }

  /** Whether the caller may perform `operation` in `namespace`, without a refusal or a journal entry. */
  isAllowed(operation: string, namespace?: string): boolean {
    return this.access.isAllowed(this.caller, operation, namespace);
  }

  /** Where the caller may perform `operation`, as SQL LIKE operands; undefined when everywhere. */
  namespaceLike(operation: string): string[] | undefined {
    const scope = this.access.namespacesFor(this.caller, operation);
    return scope.all ? undefined : scope.patterns.map(namespacePatternToSqlLike);
  }

  /** The caller's namespace patterns for `operation`; undefined when everywhere. */
  namespacePatterns(operation: string): string[] | undefined {
    const scope = this.access.namespacesFor(this.caller, operation);
    return scope.all ? undefined : scope.patterns;
  }

  isAdmin(): boolean {
    return this.access.isAdmin(this.caller);
  }

  /** The caller as a reader of the journal (list_operations). */
  journalReader(): JournalReader {
    const { subject, method } = this.principal;
    return { subject, method, admin: this.isAdmin() };
  }
}
