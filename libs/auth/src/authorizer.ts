import { AppError } from '@app/common';
import { namespaceMatcher } from './namespace-pattern.js';
import { BLUEPRINT_GRANT, type CompiledApprovalRule, type CompiledBinding, type CompiledPolicy } from './policy.js';
import { describePrincipal, type Principal } from './principal.js';

/** A binding's grant of an operation under one namespace pattern, and to whom. */
export interface Grant {
  pattern: string;
  subjects: string[];
  groups: string[];
}

/** Where a principal may perform an operation: everywhere, or in namespaces matching these patterns (maybe none). */
export type NamespaceScope = { all: true } | { all: false; patterns: string[] };

const GRANT_HINT = 'an admin grants it in AUTHZ_POLICY_FILE with a binding of a role that names this operation to this subject or one of its groups';
const NO_POLICY_HINT =
  'authentication is on and no AUTHZ_POLICY_FILE is set, so nothing is granted to anyone yet; ' +
  'an admin writes a policy (roles and bindings) that binds a role to this subject or one of its groups and sets AUTHZ_POLICY_FILE';

/**
 * Decides who may perform which operation in which namespace, from one compiled policy; the same
 * decisions for REST, MCP over HTTP and stdio.
 */
export class Authorizer {
  private readonly known: ReadonlySet<string>;

  private constructor(
    private readonly policy: CompiledPolicy,
    private readonly everyoneAdmin: boolean,
    private readonly hint: string,
  ) {
    this.known = new Set(policy.operations);
  }

  /** The policy of AUTHZ_POLICY_FILE. */
  static fromPolicy(policy: CompiledPolicy): Authorizer {
    return new Authorizer(policy, false, GRANT_HINT);
  }

  /** Authentication off and no policy: every caller is admin. */
  static allowAll(operations: readonly string[]): Authorizer {
    return new Authorizer({ operations: [...operations], bindings: [] }, true, '');
  }

  /** Authentication on and no policy: nothing is granted, and every refusal says how to grant. */
  static denyAll(operations: readonly string[]): Authorizer {
    return new Authorizer({ operations: [...operations], bindings: [] }, false, NO_POLICY_HINT);
  }

  get operations(): readonly string[] {
    return this.policy.operations;
  }

  /** Whether the policy can name `operation`: one the service serves, or a blueprint's tool (`blueprint:<name>`). */
  knows(operation: string): boolean {
    return this.known.has(operation) || BLUEPRINT_GRANT.test(operation);
  }

  /** Whether `principal` may perform `operation` in `namespace` (without one: in at least one namespace). */
  isAllowed(principal: Principal, operation: string, namespace?: string): boolean {
    const scope = this.namespacesFor(principal, operation);
    if (scope.all) return true;
    if (namespace === undefined) return scope.patterns.length > 0;
    return this.bindingsFor(principal, operation).some((binding) => binding.matches(namespace));
  }

  /** Returns when allowed; otherwise throws AppError('forbidden') naming the operation, the namespace and the principal. */
  authorize(principal: Principal, operation: string, namespace?: string): void {
    if (this.isAllowed(principal, operation, namespace)) return;
    const where = namespace === undefined ? 'in any namespace' : `in namespace "${namespace}"`;
    const scope = this.namespacesFor(principal, operation);
    const patterns = scope.all ? [] : scope.patterns;
    const elsewhere = patterns.length > 0 ? ` (it is granted in namespaces ${patterns.map((p) => `"${p}"`).join(', ')})` : '';
    throw new AppError('forbidden', `${operation} ${where} is not granted to ${describePrincipal(principal)}${elsewhere}: ${this.hint}`);
  }

  /** Where `principal` may perform `operation`: for filtering lists (in SQL: namespacePatternToSqlLike). */
  namespacesFor(principal: Principal, operation: string): NamespaceScope {
    this.assertKnown(operation);
    if (this.everyoneAdmin) return { all: true };
    const patterns = [...new Set(this.bindingsFor(principal, operation).flatMap((binding) => binding.namespaces))];
    return patterns.includes('*') ? { all: true } : { all: false, patterns };
  }

  /**
   * Who may perform `operation` in `namespace`, by the policy's namespace pattern that grants it:
   * for answers that must say who can act on something without naming it to the caller.
   */
  grantedIn(operation: string, namespace: string): Grant[] {
    this.assertKnown(operation);
    if (this.everyoneAdmin) return [{ pattern: '*', subjects: ['*'], groups: [] }];
    return this.policy.bindings
      .filter((binding) => binding.operations.has(operation))
      .flatMap((binding) =>
        binding.namespaces
          .filter((pattern) => namespaceMatcher(pattern)(namespace))
          .map((pattern) => ({ pattern, subjects: [...binding.subjects], groups: [...binding.groups] })),
      );
  }

  /** The first approval rule that makes `principal`'s `operation` in `namespace` a proposal (docs/approvals.md); undefined: it runs as today. */
  approvalFor(principal: Principal, operation: string, namespace: string): CompiledApprovalRule | undefined {
    return (this.policy.approvals ?? []).find(
      (rule) => rule.operations.has(operation) && rule.matches(namespace) && (rule.subjects.has('*') || rule.subjects.has(principal.subject) || principal.groups.some((g) => rule.groups.has(g))),
    );
  }

  /** Whether `principal` holds `role` (by a binding of exactly that role) in `namespace`: who may approve under a rule. */
  holdsRole(principal: Principal, role: string, namespace: string): boolean {
    if (this.everyoneAdmin) return true;
    return this.policy.bindings.some((binding) => binding.role === role && binding.matches(namespace) && this.binds(binding, principal));
  }

  /** Who holds `role` in `namespace`, as the bindings name them (a proposal says who may approve it). */
  holdersOf(role: string, namespace: string): Grant[] {
    return this.policy.bindings
      .filter((binding) => binding.role === role)
      .flatMap((binding) =>
        binding.namespaces.filter((pattern) => namespaceMatcher(pattern)(namespace)).map((pattern) => ({ pattern, subjects: [...binding.subjects], groups: [...binding.groups] })),
      );
  }

  /** Whether `principal` is granted any operation anywhere (a blueprint's tool included). */
  grantsAnything(principal: Principal): boolean {
    if (this.everyoneAdmin) return true;
    return this.policy.bindings.some((binding) => binding.operations.size > 0 && this.binds(binding, principal));
  }

  /** The refusal of a principal granted nothing at all (grantsAnything false): what to ask an admin for. */
  nothingGranted(principal: Principal): AppError {
    return new AppError('forbidden', `no operation is granted to ${describePrincipal(principal)} in any namespace: ${this.hint}`);
  }

  /** The operations `principal` may perform in at least one namespace, in the service's order (MCP tools/list). */
  allowedOperations(principal: Principal): string[] {
    return this.policy.operations.filter((operation) => this.isAllowed(principal, operation));
  }

  private bindingsFor(principal: Principal, operation: string): CompiledBinding[] {
    return this.policy.bindings.filter(
      (binding) =>
        (binding.operations.has(operation) || (operation.startsWith('blueprint:') && binding.operations.has('blueprint:*'))) && this.binds(binding, principal),
    );
  }

  private binds(binding: CompiledBinding, principal: Principal): boolean {
    return binding.subjects.has('*') || binding.subjects.has(principal.subject) || principal.groups.some((group) => binding.groups.has(group));
  }

  private assertKnown(operation: string): void {
    // A programming error, not a caller's: every operation served must be one the policy can name.
    if (!this.knows(operation)) throw new Error(`operation "${operation}" is not among the operations given to the policy`);
  }
}
