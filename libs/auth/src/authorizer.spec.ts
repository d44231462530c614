import { describe, expect, it } from '@jest/globals';
import { AppError } from '@app/common';
import { Authorizer } from './authorizer.js';
import { OPERATIONS } from './operations.fixture.js';
import { parsePolicy } from './policy.js';
import type { Principal } from './principal.js';

const POLICY = parsePolicy(
  `
roles:
  viewer: [get_info, list_agents, get_agent, get_agent_status, list_agent_revisions, validate_agent]
  editor: [viewer, create_agent, update_agent, rollback_agent]
  admin: ["*"]
bindings:
  - role: editor
    groups: [team-payments]
    namespaces: ["payments-*", "shared"]
  - role: viewer
    subjects: [alice]
    namespaces: ["*-prod"]
  - role: admin
    subjects: ["token:ci-platform"]
    namespaces: ["*"]
  - role: viewer
    subjects: ["*"]
    namespaces: [sandbox]
`,
  OPERATIONS,
);

const authz = Authorizer.fromPolicy(POLICY);
const payments: Principal = { subject: 'bob@example.com', groups: ['team-payments', 'staff'], method: 'oidc' };
const alice: Principal = { subject: 'alice', groups: [], method: 'oidc' };
const ci: Principal = { subject: 'token:ci-platform', groups: [], method: 'token' };
const stranger: Principal = { subject: 'token:other', groups: ['team-search'], method: 'token' };
const anonymous: Principal = { subject: 'anonymous', groups: [], method: 'anonymous' };

describe(Authorizer.name, () => {
  it.each<[string, Principal, string, string | undefined, boolean]>([
    ['a group member writes in a matching namespace', payments, 'create_agent', 'payments-eu', true],
    ['… and in a second pattern of the binding', payments, 'update_agent', 'shared', true],
    ['… not outside the patterns', payments, 'create_agent', 'search-eu', false],
    ['… not a prefix match without the dash', payments, 'create_agent', 'paymentsx', false],
    ['… not an operation the role lacks', payments, 'delete_agent', 'payments-eu', false],
    ['a subject reads where a suffix pattern matches', alice, 'get_agent', 'checkout-prod', true],
    ['… but may not write there', alice, 'create_agent', 'checkout-prod', false],
    ['… and reads nothing outside', alice, 'list_agents', 'checkout-dev', false],
    ['"*" among subjects binds every principal', stranger, 'list_agents', 'sandbox', true],
    ['the admin token does anything anywhere', ci, 'delete_agent', 'kube-system', true],
    ['without a namespace: granted somewhere', alice, 'get_info', undefined, true],
    ['without a namespace: granted nowhere', payments, 'list_operations', undefined, false],
  ])('%s', (_case, principal, operation, namespace, allowed) => {
    expect(authz.isAllowed(principal, operation, namespace)).toBe(allowed);
  });

  it('says who may perform an operation in a namespace, by the pattern that grants it', () => {
    expect(authz.grantedIn('create_agent', 'payments-eu')).toEqual([
      { pattern: 'payments-*', subjects: [], groups: ['team-payments'] },
      { pattern: '*', subjects: ['token:ci-platform'], groups: [] },
    ]);
    expect(authz.grantedIn('delete_agent', 'payments-eu')).toEqual([{ pattern: '*', subjects: ['token:ci-platform'], groups: [] }]);
    expect(Authorizer.allowAll(OPERATIONS).grantedIn('delete_agent', 'x')).toEqual([{ pattern: '*', subjects: ['*'], groups: [] }]);
  });

  it('refuses with forbidden naming the operation, the namespace, the principal and where it is granted', () => {
    expect(() => authz.authorize(payments, 'create_agent', 'search-eu')).toThrow(AppError);
    expect(() => authz.authorize(payments, 'create_agent', 'search-eu')).toThrow(
      'create_agent in namespace "search-eu" is not granted to bob@example.com (groups: team-payments, staff) (it is granted in namespaces "payments-*", "shared"): ' +
        'an admin grants it in AUTHZ_POLICY_FILE with a binding of a role that names this operation to this subject or one of its groups',
    );
    const error = catchError(() => authz.authorize(stranger, 'delete_agent', 'sandbox'));
    expect(error).toMatchObject({ code: 'forbidden', status: 403 });
    expect(error.message).toMatch(/^delete_agent in namespace "sandbox" is not granted to token:other \(groups: team-search\): an admin grants/);
  });

  it.each<[string, string, string, boolean]>([
    ['a blueprint named in a role', 'blueprint:incident_helper', 'team-a', true],
    ['… only where the binding applies', 'blueprint:incident_helper', 'team-b', false],
    ['… not another blueprint', 'blueprint:explainer', 'team-a', false],
    ['blueprint:* grants every blueprint', 'blueprint:explainer', 'shared', true],
  ])('grants a blueprint\'s tool by name: %s', (_case, operation, namespace, allowed) => {
    const policy = parsePolicy(
      `
roles:
  helper: ["blueprint:incident_helper"]
  every: ["blueprint:*"]
bindings:
  - {role: helper, subjects: [carol], namespaces: ["team-a"]}
  - {role: every, subjects: [carol], namespaces: ["shared"]}
`,
      OPERATIONS,
    );
    const carol: Principal = { subject: 'carol', groups: [], method: 'oidc' };
    expect(Authorizer.fromPolicy(policy).isAllowed(carol, operation, namespace)).toBe(allowed);
    expect(Authorizer.fromPolicy(policy).isAllowed(carol, 'create_agent', namespace)).toBe(false);
  });

  it('the admin role ("*") grants every blueprint\'s tool', () => {
    expect(authz.isAllowed(ci, 'blueprint:anything', 'kube-system')).toBe(true);
    expect(authz.isAllowed(payments, 'blueprint:anything', 'payments-eu')).toBe(false);
  });

  it('answers nothing for an allowed call', () => {
    expect(authz.authorize(payments, 'create_agent', 'payments-eu')).toBeUndefined();
  });

  it.each<[string, Principal, string, unknown]>([
    ['the patterns of every binding that grants it', payments, 'list_agents', { all: false, patterns: ['payments-*', 'shared', 'sandbox'] }],
    ['"*" makes it every namespace', ci, 'list_agents', { all: true }],
    ['none at all', stranger, 'create_agent', { all: false, patterns: [] }],
  ])('namespacesFor: %s', (_case, principal, operation, scope) => {
    expect(authz.namespacesFor(principal, operation)).toEqual(scope);
  });

  it('lists the operations granted in at least one namespace, in the service\'s order', () => {
    expect(authz.allowedOperations(alice)).toEqual(['get_info', 'list_agents', 'get_agent', 'get_agent_status', 'list_agent_revisions', 'validate_agent']);
    expect(authz.allowedOperations(payments)).toEqual([
      'get_info', 'list_agents', 'get_agent', 'get_agent_status', 'list_agent_revisions', 'validate_agent', 'create_agent', 'update_agent', 'rollback_agent',
    ]);
    expect(authz.allowedOperations(ci)).toEqual([...OPERATIONS]);
  });

  it('with auth off and no policy, everyone is admin', () => {
    const open = Authorizer.allowAll(OPERATIONS);
    expect(open.allowedOperations(anonymous)).toEqual([...OPERATIONS]);
    expect(open.namespacesFor(anonymous, 'list_agents')).toEqual({ all: true });
    expect(() => open.authorize(anonymous, 'delete_agent', 'kube-system')).not.toThrow();
  });

  it('with auth on and no policy, nothing is granted and the refusal says how to grant', () => {
    const closed = Authorizer.denyAll(OPERATIONS);
    expect(closed.allowedOperations(ci)).toEqual([]);
    expect(closed.namespacesFor(ci, 'list_agents')).toEqual({ all: false, patterns: [] });
    expect(() => closed.authorize(ci, 'list_agents', 'default')).toThrow(
      'list_agents in namespace "default" is not granted to token:ci-platform: authentication is on and no AUTHZ_POLICY_FILE is set, so nothing is granted to anyone yet; ' +
        'an admin writes a policy (roles and bindings) that binds a role to this subject or one of its groups and sets AUTHZ_POLICY_FILE',
    );
    expect(() => closed.authorize(ci, 'get_info')).toThrow(/^get_info in any namespace is not granted to token:ci-platform: /);
  });

  it('treats an operation the policy was not given as a programming error, not a refusal', () => {
    expect(() => authz.authorize(ci, 'drop_tables', 'default')).toThrow('operation "drop_tables" is not among the operations given to the policy');
  });
});

function catchError(fn: () => unknown): AppError {
  try {
    fn();
  } catch (error) {
    return error as AppError;
  }
  throw new Error('no error');
}

describe('approval rules', () => {
  const policy = parsePolicy(
    `
roles:
  editor: [update_agent, delete_agent]
  approver: [approve_change, get_change]
  admin: ["*"]
bindings:
  - {role: editor, groups: [llm-agents], namespaces: ["*"]}
  - {role: approver, subjects: [alice], namespaces: ["prod-*"]}
  - {role: admin, subjects: [root], namespaces: ["*"]}
approvals:
  - {operations: [delete_agent], namespaces: ["prod-core"], subjects: ["*"], approvers: approver, required: 2}
  - {operations: [update_agent, delete_agent], namespaces: ["prod-*"], groups: [llm-agents], approvers: approver}
`,
    OPERATIONS,
  );
  const authorizer = Authorizer.fromPolicy(policy);
  const llm: Principal = { subject: 'llm', method: 'token', groups: ['llm-agents'] };
  const human: Principal = { subject: 'bob', method: 'token', groups: [] };

  it('selects a write by operation, namespace and caller; the first rule that selects it decides', () => {
    expect(authorizer.approvalFor(llm, 'update_agent', 'prod-eu')?.at).toBe('approvals[1]');
    expect(authorizer.approvalFor(llm, 'delete_agent', 'prod-core')?.required).toBe(2);
    expect(authorizer.approvalFor(human, 'delete_agent', 'prod-core')?.at).toBe('approvals[0]');
    expect(authorizer.approvalFor(human, 'update_agent', 'prod-eu')).toBeUndefined();
    expect(authorizer.approvalFor(llm, 'update_agent', 'dev')).toBeUndefined();
    expect(Authorizer.allowAll(OPERATIONS).approvalFor(llm, 'update_agent', 'prod-eu')).toBeUndefined();
  });

  it('lets only holders of the approver role approve, where it is bound (an admin granted everything is not one)', () => {
    const alice: Principal = { subject: 'alice', method: 'token', groups: [] };
    const root: Principal = { subject: 'root', method: 'token', groups: [] };
    expect([authorizer.holdsRole(alice, 'approver', 'prod-eu'), authorizer.holdsRole(alice, 'approver', 'dev'), authorizer.holdsRole(root, 'approver', 'prod-eu')]).toEqual([true, false, false]);
    expect(authorizer.holdersOf('approver', 'prod-eu')).toEqual([{ pattern: 'prod-*', subjects: ['alice'], groups: [] }]);
  });
});
