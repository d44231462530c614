import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '@app/common';
import { OPERATIONS } from './operations.fixture.js';
import { compilePolicy, parsePolicy, PolicyError } from './policy.js';

const ISSUE_EXAMPLE = `
roles:
  viewer: [get_info, list_agents, get_agent, get_agent_status, list_agent_revisions, validate_agent]
  editor: [viewer, create_agent, update_agent, rollback_agent]   # a role may include roles
  admin: ["*"]
bindings:
  - role: editor
    groups: [team-payments]
    namespaces: ["payments-*"]
  - role: admin
    subjects: ["token:ci-platform"]
    namespaces: ["*"]
`;

function problemsOf(document: unknown): string[] {
  try {
    compilePolicy(document, OPERATIONS);
  } catch (error) {
    expect(error).toBeInstanceOf(PolicyError);
    return (error as PolicyError).problems;
  }
  throw new Error('the policy was accepted');
}

const viewer = ['get_info', 'list_agents'];
const binding = { role: 'viewer', groups: ['g'], namespaces: ['*'] };

describe(compilePolicy.name, () => {
  it('reads the issue\'s example, resolving roles that include roles', () => {
    const policy = parsePolicy(ISSUE_EXAMPLE, OPERATIONS);
    expect(policy.bindings.map((b) => [b.at, b.role, [...b.operations].sort()])).toEqual([
      ['bindings[0]', 'editor', ['create_agent', 'get_agent', 'get_agent_status', 'get_info', 'list_agent_revisions', 'list_agents', 'rollback_agent', 'update_agent', 'validate_agent']],
      ['bindings[1]', 'admin', [...OPERATIONS, 'blueprint:*'].sort()],
    ]);
  });

  it('can name every operation the service serves (the registration invariant)', () => {
    const roles = Object.fromEntries(OPERATIONS.map((op) => [`only-${op}`, [op]]));
    const bindings = OPERATIONS.map((op) => ({ role: `only-${op}`, subjects: ['s'], namespaces: ['*'] }));
    const policy = compilePolicy({ roles, bindings }, OPERATIONS);
    expect(policy.bindings.map((b) => [...b.operations][0])).toEqual([...OPERATIONS]);
  });

  it.each<[string, unknown, string]>([
    ['an unknown operation', { roles: { viewer: ['get_info', 'list_agentz'] }, bindings: [binding] }, 'roles.viewer[1]: "list_agentz" is neither an operation nor a role'],
    ['an unknown included role', { roles: { editor: ['viewr', 'create_agent'] }, bindings: [{ ...binding, role: 'editor' }] }, 'roles.editor[0]: "viewr" is neither an operation nor a role'],
    ['a role cycle', { roles: { a: ['b'], b: ['c'], c: ['a', 'get_info'] }, bindings: [{ ...binding, role: 'a' }] }, 'roles.a: role cycle a → b → c → a'],
    ['a role that includes itself', { roles: { a: ['a'] }, bindings: [{ ...binding, role: 'a' }] }, 'roles.a: role cycle a → a'],
    ['an empty role', { roles: { viewer: [] }, bindings: [] }, 'roles.viewer: must be a non-empty list of operations and roles'],
    ['a role named as an operation', { roles: { get_info: ['get_info'] }, bindings: [] }, "roles.get_info: a role cannot take an operation's name"],
    ['a binding with no subject and no group', { roles: { viewer }, bindings: [binding, { role: 'viewer', namespaces: ['*'] }] }, 'bindings[1] (role viewer): names no subject and no group'],
    ['a binding with no namespace', { roles: { viewer }, bindings: [{ role: 'viewer', groups: ['g'] }] }, 'bindings[0] (role viewer).namespaces: names no namespace'],
    ['a binding with an empty namespace list', { roles: { viewer }, bindings: [{ ...binding, namespaces: [] }] }, 'bindings[0] (role viewer).namespaces: names no namespace'],
    ['an unknown role', { roles: { viewer }, bindings: [binding, binding, { ...binding, role: 'editor' }] }, 'bindings[2].role: unknown role "editor" (roles: viewer)'],
    ['a binding without a role', { roles: { viewer }, bindings: [{ groups: ['g'], namespaces: ['*'] }] }, 'bindings[0].role: names the role the binding grants'],
    ['an upper-case pattern', { roles: { viewer }, bindings: [{ ...binding, namespaces: ['default', 'Payments-*'] }] }, 'bindings[0] (role viewer).namespaces[1]: "Payments-*" is not a namespace pattern'],
    ['a regex pattern', { roles: { viewer }, bindings: [{ ...binding, namespaces: ['payments-.+'] }] }, 'bindings[0] (role viewer).namespaces[0]: "payments-.+" is not a namespace pattern'],
    ['a pattern with a slash', { roles: { viewer }, bindings: [{ ...binding, namespaces: ['a/b'] }] }, '"a/b" is not a namespace pattern'],
    ['namespaces as a string', { roles: { viewer }, bindings: [{ ...binding, namespaces: 'payments-*' }] }, 'bindings[0] (role viewer).namespaces: must be a list of names'],
    ['a misspelt key in a binding', { roles: { viewer }, bindings: [{ ...binding, group: ['h'] }] }, 'bindings[0] (role viewer): unknown key "group"'],
    ['a misspelt top-level key', { roles: { viewer }, binding: [] }, 'unknown key "binding"'],
    ['no bindings list', { roles: { viewer } }, 'bindings: must be a list'],
    ['no roles mapping', { roles: ['viewer'], bindings: [] }, 'roles: must be a mapping'],
    ['a list instead of a mapping', [], 'the policy must be a mapping'],
  ])('refuses %s, naming where', (_case, document, problem) => {
    expect(problemsOf(document).join('\n')).toContain(problem);
  });

  describe('approvals', () => {
    const roles = { viewer, approver: ['approve_change', 'get_change'], editor: ['update_agent'] };
    const rule = { operations: ['update_agent', 'delete_agent'], namespaces: ['prod-*'], groups: ['llm-agents'], approvers: 'approver' };
    const withRule = (changes: Record<string, unknown>) => ({ roles, bindings: [binding], approvals: [{ ...rule }, { ...rule, ...changes }] });

    it('reads a rule: defaults required 1 and 24h, selects callers and namespaces', () => {
      const [compiled] = compilePolicy({ roles, bindings: [binding], approvals: [{ ...rule, expiresAfter: '30m' }, rule] }, OPERATIONS).approvals!;
      expect([compiled.at, compiled.approvers, compiled.required, compiled.expiresAfterMs, compiled.matches('prod-eu'), compiled.matches('dev')]).toEqual(['approvals[0]', 'approver', 1, 1_800_000, true, false]);
      expect(compilePolicy({ roles, bindings: [binding], approvals: [rule] }, OPERATIONS).approvals![0].expiresAfterMs).toBe(86_400_000);
    });

    it.each<[string, Record<string, unknown>, string]>([
      ['an unknown operation', { operations: ['update_agentz'] }, 'approvals[1].operations[0]: "update_agentz" is not an operation that can need approval'],
      ['an operation that cannot need approval', { operations: ['list_agents'] }, 'approvals[1].operations[0]: "list_agents" is not an operation that can need approval'],
      ['an unknown approver role', { approvers: 'approvr' }, 'approvals[1].approvers: unknown role "approvr"'],
      ['an approver role without approve_change', { approvers: 'editor' }, 'approvals[1].approvers: role "editor" does not grant approve_change'],
      ['required below 1', { required: 0 }, 'approvals[1].required: must be a whole number of distinct approvers, at least 1'],
      ['a bad duration', { expiresAfter: '1 day' }, 'approvals[1].expiresAfter: "1 day" is not a duration'],
      ['no callers', { groups: undefined }, 'approvals[1]: names no subject and no group'],
      ['a misspelt key', { approver: 'approver' }, 'approvals[1]: unknown key "approver"'],
    ])('refuses %s, naming the rule', (_case, changes, problem) => {
      expect(problemsOf(withRule(changes)).join('\n')).toContain(problem);
    });
  });

  it('reports every problem at once, and the error is a ConfigError naming the file', () => {
    const text = 'roles:\n  viewer: [nope]\nbindings:\n  - role: ghost\n    namespaces: ["*"]\n';
    let error: unknown;
    try {
      parsePolicy(text, OPERATIONS, '/etc/am/policy.yaml');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as PolicyError).problems).toHaveLength(3);
    expect((error as Error).message).toMatch(/^AUTHZ_POLICY_FILE \/etc\/am\/policy\.yaml is not usable:\n {2}roles\.viewer\[0\]/);
  });

  it('refuses text that is not YAML', () => {
    expect(() => parsePolicy('roles: [unclosed', OPERATIONS)).toThrow(/not YAML/);
  });
});
