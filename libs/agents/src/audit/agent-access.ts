import { Injectable, Logger } from '@nestjs/common';
import { ANONYMOUS, Authorizer, namespacePatternToSqlLike, type Principal } from '@app/auth';
import { AppError, OperationContexts } from '@app/common';
import { AgentsRepository } from '../agents.repository.js';
import { auditOf, type JournalReader } from './audit.records.js';
import { isAdmin } from './backend-errors.js';

/** The write an operation's dry run or validation stands for. */
export const WRITE_OF_VALIDATE = { create: 'create_agent', update: 'update_agent' } as const;

/**
 * The policy applied to the current operation context, for both doors: refusals are journaled
 * (the audit trail) and answered 403 naming operation, namespace and principal. One provider,
 * injected wherever a call is authorized (OperationDoors, and the use cases that authorize a
 * further operation, e.g. a blueprint upgrade's update_agent per holder).
 */
@Injectable()
export class AgentAccess {
  private readonly logger = new Logger('Audit');

  constructor(
    private readonly authorizer: Authorizer,
    private readonly repository: AgentsRepository,
  ) {}

  /** The caller of the current context (anonymous when no door set one). */
  principal(): Principal {
    return (OperationContexts.current().principal as Principal | undefined) ?? ANONYMOUS;
  }

  /** Refuses (403, journaled) unless the caller may perform `operation` in `namespace` (without one: somewhere). */
  async authorize(operation: string, target: { namespace?: string; name?: string } = {}): Promise<void> {
    OperationContexts.learn({ subject: this.principal().subject, operation, agent: target.namespace && target.name ? `${target.namespace}/${target.name}` : undefined });
    try {
      this.authorizer.authorize(this.principal(), operation, target.namespace);
    } catch (error) {
      if (error instanceof AppError && error.code === 'forbidden') await this.journal(operation, target, error.message);
      throw error;
    }
  }

  /** Where the caller may perform `operation`, as SQL LIKE operands; undefined when everywhere. */
  namespaceLike(operation: string): string[] | undefined {
    const scope = this.authorizer.namespacesFor(this.principal(), operation);
    return scope.all ? undefined : scope.patterns.map(namespacePatternToSqlLike);
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

  /** The caller's namespace patterns for `operation`; undefined when everywhere. */
  namespacePatterns(operation: string): string[] | undefined {
    const scope = this.authorizer.namespacesFor(this.principal(), operation);
    return scope.all ? undefined : scope.patterns;
  }

  /** An admin is granted every operation in every namespace (`*` on `*`): sees paths and helm's own words. */
  isAdmin(): boolean {
    return isAdmin(this.authorizer, this.principal());
  }

  /** The caller as a reader of the journal (list_operations). */
  journalReader(): JournalReader {
    const { subject, method } = this.principal();
    return { subject, method, admin: this.isAdmin() };
  }

  private async journal(operation: string, target: { namespace?: string; name?: string }, message: string): Promise<void> {
    const entry = auditOf(OperationContexts.current(), operation);
    try {
      await this.repository.journalRefusal({ ...entry, namespace: target.namespace ?? '*', name: target.name ?? '', errorMessage: message });
    } catch (error) {
      this.logger.error(`journaling the refusal of ${operation} for ${entry.subject ?? entry.actor} failed: ${(error as Error).message}`);
    }
  }
}
