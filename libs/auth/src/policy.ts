import { parse } from 'yaml';
import { ConfigError } from '@app/common';
import { isNamespacePattern, namespaceMatcher } from './namespace-pattern.js';

/**
 * The authorization policy (AUTHZ_POLICY_FILE): roles grant operations (named as the MCP tools
 * are, `*` for all) or other roles; bindings give a role to subjects and groups in namespaces.
 *
 *   roles:
 *     viewer: [get_info, list_agents, get_agent]
 *     editor: [viewer, create_agent]
 *   bindings:
 *     - role: editor
 *       groups: [team-payments]
 *       namespaces: ["payments-*"]
 */
export interface CompiledBinding {
  /** Where the binding is in the file, e.g. `bindings[2]`. */
  at: string;
  role: string;
  operations: ReadonlySet<string>;
  /** `*` among the subjects binds every authenticated principal. */
  subjects: ReadonlySet<string>;
  groups: ReadonlySet<string>;
  namespaces: readonly string[];
  matches: (namespace: string) => boolean;
}

/**
 * An approval rule (docs/approvals.md): the writes it selects (operations, callers as a binding
 * selects them, namespaces) become proposals that `required` distinct people holding the
 * `approvers` role in the change's namespace approve, never the proposer, within `expiresAfterMs`.
 */
export interface CompiledApprovalRule {
  /** Where the rule is in the file, e.g. `approvals[0]`. */
  at: string;
  operations: ReadonlySet<string>;
  subjects: ReadonlySet<string>;
  groups: ReadonlySet<string>;
  namespaces: readonly string[];
  matches: (namespace: string) => boolean;
  /** The role whose bindings say who may approve (it grants approve_change). */
  approvers: string;
  required: number;
  expiresAfterMs: number;
}

export interface CompiledPolicy {
  /** Every operation the service serves, in its order. */
  operations: readonly string[];
  bindings: readonly CompiledBinding[];
  /** Absent or empty: no write needs approval. */
  approvals?: readonly CompiledApprovalRule[];
}

/** The writes an approval rule can select: the agent writes, whose dry run is the proposal's diff. */
export const APPROVABLE_OPERATIONS: readonly string[] = ['create_agent', 'update_agent', 'delete_agent', 'rollback_agent'];
const APPROVAL_KEYS = new Set(['operations', 'namespaces', 'subjects', 'groups', 'approvers', 'required', 'expiresAfter']);
const DEFAULT_EXPIRY_MS = 24 * 3600_000;
const DURATION = /^(\d+)(s|m|h|d)$/;
const DURATION_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3600_000, d: 86_400_000 };

/** A policy that cannot be used: `problems` name each role or binding and its position. */
export class PolicyError extends ConfigError {
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`AUTHZ_POLICY_FILE ${source} is not usable:\n  ${problems.join('\n  ')}`);
    this.name = 'PolicyError';
  }
}

const ROLE_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,62}$/;
/**
 * A blueprint's own tool (docs/contract.md §9), granted by name (`blueprint:incident_helper`) or all of them
 * (`blueprint:*`): blueprints come and go at run time, so the policy names them by this form.
 */
export const BLUEPRINT_GRANT = /^blueprint:(\*|[a-z][a-z0-9_]{0,62})$/;
const BINDING_KEYS = new Set(['role', 'subjects', 'groups', 'namespaces']);

/** Parses YAML (or JSON) policy text against the operations the service serves. */
export function parsePolicy(text: string, operations: readonly string[], source = 'AUTHZ_POLICY_FILE'): CompiledPolicy {
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    throw new PolicyError(source, [`not YAML: ${(error as Error).message.split('\n')[0]}`]);
  }
  return compilePolicy(document, operations, source);
}

/** Validates a policy document and resolves every binding's role to the operations it grants. */
export function compilePolicy(document: unknown, operations: readonly string[], source = 'AUTHZ_POLICY_FILE'): CompiledPolicy {
  if (!isMapping(document)) throw new PolicyError(source, ['the policy must be a mapping with "roles" and "bindings"']);
  const problems: string[] = [];
  for (const key of Object.keys(document).filter((k) => k !== 'roles' && k !== 'bindings' && k !== 'approvals')) {
    problems.push(`unknown key "${key}": a policy has "roles", "bindings" and (optionally) "approvals"`);
  }
  const roles = readRoles(document.roles, new Set(operations), problems);
  const resolved = resolveRoles(roles, operations, problems);
  const bindings = readBindings(document.bindings, resolved, problems);
  const approvals = readApprovals(document.approvals, resolved, new Set(operations), problems);
  if (problems.length > 0) throw new PolicyError(source, problems);
  return { operations: [...operations], bindings, approvals };
}

/** Role name → its entries, each an operation, `*` or a role; problems for names that are none of them. */
function readRoles(raw: unknown, operations: ReadonlySet<string>, problems: string[]): Map<string, string[]> {
  const roles = new Map<string, string[]>();
  if (!isMapping(raw)) {
    problems.push('roles: must be a mapping of role names to lists of operations and roles, e.g. viewer: [get_info, list_agents]');
    return roles;
  }
  for (const [name, entries] of Object.entries(raw)) {
    if (!ROLE_NAME.test(name)) problems.push(`roles.${name}: a role name starts with a letter and holds letters, digits, ".", "_" or "-"`);
    else if (operations.has(name)) problems.push(`roles.${name}: a role cannot take an operation's name`);
    else if (!Array.isArray(entries) || entries.length === 0 || !entries.every((e) => typeof e === 'string')) {
      problems.push(`roles.${name}: must be a non-empty list of operations and roles`);
    } else roles.set(name, entries as string[]);
  }
  const known = `operations: ${[...operations].join(', ')}; roles: ${[...roles.keys()].join(', ') || '(none)'}`;
  for (const [name, entries] of roles) {
    entries.forEach((entry, index) => {
      if (entry !== '*' && !operations.has(entry) && !roles.has(entry) && !BLUEPRINT_GRANT.test(entry)) {
        problems.push(`roles.${name}[${index}]: "${entry}" is neither an operation nor a role (${known})`);
      }
    });
  }
  return roles;
}

/** Each role's operations, following included roles; a cycle is reported once, from the role it is met at. */
function resolveRoles(roles: Map<string, string[]>, operations: readonly string[], problems: string[]): Map<string, Set<string>> {
  const resolved = new Map<string, Set<string>>();
  const reported = new Set<string>();
  const visit = (name: string, path: string[]): Set<string> => {
    const done = resolved.get(name);
    if (done) return done;
    if (path.includes(name)) {
      const cycle = path.slice(path.indexOf(name));
      if (!cycle.some((r) => reported.has(r))) problems.push(`roles.${cycle[0]}: role cycle ${[...cycle, name].join(' → ')}`);
      cycle.forEach((r) => reported.add(r));
      return new Set();
    }
    const granted = new Set<string>();
    for (const entry of roles.get(name) ?? []) {
      if (entry === '*') [...operations, 'blueprint:*'].forEach((op) => granted.add(op));
      else if (roles.has(entry)) visit(entry, [...path, name]).forEach((op) => granted.add(op));
      else granted.add(entry);
    }
    resolved.set(name, granted);
    return granted;
  };
  for (const name of roles.keys()) visit(name, []);
  return resolved;
}

function readBindings(raw: unknown, roles: Map<string, Set<string>>, problems: string[]): CompiledBinding[] {
  if (!Array.isArray(raw)) {
    problems.push('bindings: must be a list of {role, subjects and/or groups, namespaces}');
    return [];
  }
  return raw.flatMap((entry: unknown, index) => {
    const binding = readBinding(entry, `bindings[${index}]`, roles, problems);
    return binding ? [binding] : [];
  });
}

function readBinding(raw: unknown, at: string, roles: Map<string, Set<string>>, problems: string[]): CompiledBinding | undefined {
  if (!isMapping(raw)) {
    problems.push(`${at}: must be a mapping {role, subjects and/or groups, namespaces}`);
    return undefined;
  }
  const before = problems.length;
  const named = typeof raw.role === 'string' ? `${at} (role ${raw.role})` : at;
  for (const key of Object.keys(raw).filter((k) => !BINDING_KEYS.has(k))) {
    problems.push(`${named}: unknown key "${key}"; a binding has role, subjects, groups and namespaces`);
  }
  if (typeof raw.role !== 'string') problems.push(`${at}.role: names the role the binding grants`);
  else if (!roles.has(raw.role)) problems.push(`${at}.role: unknown role "${raw.role}" (roles: ${[...roles.keys()].join(', ') || '(none)'})`);
  const subjects = names(raw.subjects, `${named}.subjects`, problems);
  const groups = names(raw.groups, `${named}.groups`, problems);
  if (subjects.length === 0 && groups.length === 0) problems.push(`${named}: names no subject and no group; a binding grants its role to subjects, groups or both`);
  const unreadable = problems.length;
  const namespaces = names(raw.namespaces, `${named}.namespaces`, problems);
  if (namespaces.length === 0 && problems.length === unreadable) {
    problems.push(`${named}.namespaces: names no namespace; list the namespace patterns the role applies in, e.g. ["payments-*"] or ["*"]`);
  }
  namespaces.forEach((pattern, index) => {
    if (!isNamespacePattern(pattern)) {
      problems.push(`${named}.namespaces[${index}]: "${pattern}" is not a namespace pattern: lower-case letters, digits and "-", with "*" for any run of them`);
    }
  });
  if (problems.length > before) return undefined;
  const matchers = namespaces.map(namespaceMatcher);
  return {
    at,
    role: raw.role as string,
    operations: roles.get(raw.role as string)!,
    subjects: new Set(subjects),
    groups: new Set(groups),
    namespaces,
    matches: (namespace) => matchers.some((match) => match(namespace)),
  };
}

function readApprovals(raw: unknown, roles: Map<string, Set<string>>, served: ReadonlySet<string>, problems: string[]): CompiledApprovalRule[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    problems.push('approvals: must be a list of {operations, namespaces, subjects and/or groups, approvers, required, expiresAfter}');
    return [];
  }
  return raw.flatMap((entry: unknown, index) => {
    const rule = readApprovalRule(entry, `approvals[${index}]`, roles, served, problems);
    return rule ? [rule] : [];
  });
}

/** One approval rule, each problem naming it (`approvals[0]`) and the field. */
function readApprovalRule(raw: unknown, at: string, roles: Map<string, Set<string>>, served: ReadonlySet<string>, problems: string[]): CompiledApprovalRule | undefined {
  if (!isMapping(raw)) {
    problems.push(`${at}: must be a mapping {operations, namespaces, subjects and/or groups, approvers, required, expiresAfter}`);
    return undefined;
  }
  const before = problems.length;
  for (const key of Object.keys(raw).filter((k) => !APPROVAL_KEYS.has(k))) {
    problems.push(`${at}: unknown key "${key}"; an approval rule has ${[...APPROVAL_KEYS].join(', ')}`);
  }
  const operations = names(raw.operations, `${at}.operations`, problems);
  if (operations.length === 0 && problems.length === before) problems.push(`${at}.operations: names no operation; list the writes that need approval, e.g. [update_agent, delete_agent]`);
  operations.forEach((operation, index) => {
    if (!APPROVABLE_OPERATIONS.includes(operation) || !served.has(operation)) {
      problems.push(`${at}.operations[${index}]: "${operation}" is not an operation that can need approval (${APPROVABLE_OPERATIONS.join(', ')})`);
    }
  });
  const subjects = names(raw.subjects, `${at}.subjects`, problems);
  const groups = names(raw.groups, `${at}.groups`, problems);
  if (subjects.length === 0 && groups.length === 0) problems.push(`${at}: names no subject and no group; a rule selects the callers whose writes need approval, as a binding does ("*" among subjects: everyone)`);
  const namespaces = names(raw.namespaces, `${at}.namespaces`, problems);
  if (namespaces.length === 0) problems.push(`${at}.namespaces: names no namespace; list the namespace patterns where these writes need approval, e.g. ["prod-*"]`);
  namespaces.forEach((pattern, index) => {
    if (!isNamespacePattern(pattern)) problems.push(`${at}.namespaces[${index}]: "${pattern}" is not a namespace pattern: lower-case letters, digits and "-", with "*" for any run of them`);
  });
  if (typeof raw.approvers !== 'string') problems.push(`${at}.approvers: names the role whose holders approve, e.g. approvers: approver`);
  else if (!roles.has(raw.approvers)) problems.push(`${at}.approvers: unknown role "${raw.approvers}" (roles: ${[...roles.keys()].join(', ') || '(none)'})`);
  else if (!roles.get(raw.approvers)!.has('approve_change')) problems.push(`${at}.approvers: role "${raw.approvers}" does not grant approve_change; add approve_change to it, or name a role that grants it`);
  const required = raw.required ?? 1;
  if (typeof required !== 'number' || !Number.isInteger(required) || required < 1) problems.push(`${at}.required: must be a whole number of distinct approvers, at least 1 (default 1)`);
  const expiresAfterMs = duration(raw.expiresAfter, `${at}.expiresAfter`, problems);
  if (problems.length > before) return undefined;
  const matchers = namespaces.map(namespaceMatcher);
  return {
    at,
    operations: new Set(operations),
    subjects: new Set(subjects),
    groups: new Set(groups),
    namespaces,
    matches: (namespace) => matchers.some((match) => match(namespace)),
    approvers: raw.approvers as string,
    required: required as number,
    expiresAfterMs,
  };
}

/** `30m`, `24h`, `7d`, `90s` in milliseconds (default 24h). */
function duration(raw: unknown, at: string, problems: string[]): number {
  if (raw === undefined || raw === null) return DEFAULT_EXPIRY_MS;
  const match = typeof raw === 'string' ? DURATION.exec(raw) : null;
  if (!match || Number(match[1]) < 1) {
    problems.push(`${at}: "${String(raw)}" is not a duration: a whole number and s, m, h or d, e.g. 24h (default 24h)`);
    return DEFAULT_EXPIRY_MS;
  }
  return Number(match[1]) * DURATION_MS[match[2]];
}

function names(raw: unknown, at: string, problems: string[]): string[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw) || !raw.every((n) => typeof n === 'string' && n !== '' && n === n.trim())) {
    problems.push(`${at}: must be a list of names`);
    return [];
  }
  return raw as string[];
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
