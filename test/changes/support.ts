import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex } from '@app/auth';

/** API tokens of the approval suites: an admin, an LLM agent (group llm-agents), two approvers. */
export const TOKENS = {
  admin: 'am_admin_9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b',
  llm: 'am_llm_1f2e3d4c5b6a79881726354453627180',
  alice: 'am_alice_a1b2c3d4e5f60718293a4b5c6d7e8f90',
  bob: 'am_bob_0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c',
  dev: 'am_dev_5a5b5c5d5e5f60616263646566676869',
};

/**
 * The rule: the llm-agents group's writes (and the OIDC issuer's staff group's) in prod-* need an approver (prod-critical: two);
 * the LLM agent holds the approver role too, so its own approval is refused for being the proposer.
 */
export const APPROVAL_POLICY = `
roles:
  editor: [get_info, list_agents, get_agent, validate_agent, create_agent, update_agent, delete_agent, rollback_agent, list_changes, get_change, withdraw_change, list_operations]
  approver: [list_changes, get_change, approve_change, reject_change, list_operations, get_agent]
  reader: [list_changes, get_change]
  admin: ["*"]
bindings:
  - {role: admin, subjects: ["token:ci-platform"], namespaces: ["*"]}
  - {role: editor, groups: [llm-agents, staff], namespaces: ["prod-*", "dev-*"]}
  - {role: approver, subjects: ["token:alice", "token:bob", "token:llm"], namespaces: ["prod-*"]}
  - {role: reader, subjects: ["token:dev"], namespaces: ["dev-*"]}
approvals:
  - operations: [update_agent, delete_agent, rollback_agent, create_agent]
    namespaces: ["prod-critical"]
    groups: [llm-agents]
    approvers: approver
    required: 2
  - operations: [update_agent, delete_agent, rollback_agent, create_agent]
    namespaces: ["prod-*"]
    groups: [llm-agents, staff]
    approvers: approver
    expiresAfter: 1h
`;

/** API_TOKENS_FILE and AUTHZ_POLICY_FILE in `dir`. */
export function approvalEnv(dir: string, policy = APPROVAL_POLICY): Record<string, string> {
  const tokens = join(dir, 'tokens.yaml');
  writeFileSync(
    tokens,
    [
      `- {name: ci-platform, sha256: ${sha256Hex(TOKENS.admin)}}`,
      `- {name: llm, sha256: ${sha256Hex(TOKENS.llm)}, groups: [llm-agents]}`,
      `- {name: alice, sha256: ${sha256Hex(TOKENS.alice)}}`,
      `- {name: bob, sha256: ${sha256Hex(TOKENS.bob)}}`,
      `- {name: dev, sha256: ${sha256Hex(TOKENS.dev)}}`,
      '',
    ].join('\n'),
  );
  const policyFile = join(dir, 'policy.yaml');
  writeFileSync(policyFile, policy);
  return { API_TOKENS_FILE: tokens, AUTHZ_POLICY_FILE: policyFile, MCP_ALLOWED_HOSTS: '127.0.0.1,localhost' };
}
