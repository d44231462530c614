import { describe, expect, it } from '@jest/globals';
import { clusterRefusal, helmFailure, helmMessage } from './helm-errors.js';

describe(helmFailure.name, () => {
  it.each([
    [
      'a helm 4 schema refusal',
      "Error: values don't meet the specifications of the schema(s) in the following chart(s):\nagent:\n- at '/toolset': got string, want null or array\n",
      'invalid_request',
      /chart refused the values/,
      false,
    ],
    [
      'a helm 3 schema refusal',
      "Error: UPGRADE FAILED: values don't meet the specifications of the schema(s) in the following chart(s):\nagent:\n- toolset: Invalid type. Expected: [array,null], given: string\n",
      'invalid_request',
      /toolset: Invalid type/,
      false,
    ],
    [
      "the chart's own fail check",
      'Error: execution error at (agent/templates/agent.yaml:1:4): toolset must not be empty: use ["preset:none"] for a chat-only agent\n',
      'invalid_request',
      /^toolset must not be empty/,
      false,
    ],
    [
      'the API server refusing the object',
      'Error: UPGRADE FAILED: failed to create resource: Agent.kagent.dev "a" is invalid: spec.type: Unsupported value: "X"\n',
      'invalid_request',
      /API server refused the Agent/,
      true,
    ],
    [
      'a namespace that does not exist',
      'Error: INSTALLATION FAILED: create: failed to create: namespaces "nonexist" not found\n',
      'invalid_request',
      /namespace "nonexist" does not exist in the cluster: create it first/,
      true,
    ],
    [
      'another helm operation on the release',
      'Error: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress\n',
      'conflict',
      /wait for it to finish and retry/,
      false,
    ],
    [
      'a Gatekeeper admission webhook denying the Agent',
      'Error: INSTALLATION FAILED: 1 error occurred:\n\t* admission webhook "validation.gatekeeper.sh" denied the request: [must-have-team] you must provide labels: {"team"}\n\n',
      'invalid_request',
      /^the cluster's admission policy refused the Agent \(admission webhook "validation\.gatekeeper\.sh"\): \[must-have-team\] you must provide labels: \{"team"\}/,
      true,
    ],
    [
      'a Kyverno admission webhook denying the Agent',
      'Error: UPGRADE FAILED: failed to create resource: admission webhook "validate.kyverno.svc-fail" denied the request: \n\nresource Agent/ns/a was blocked due to the following policies\n\nrequire-team:\n  check-team: label team is required\n',
      'invalid_request',
      /admission webhook "validate\.kyverno\.svc-fail"\): resource Agent\/ns\/a was blocked[\s\S]*label team is required/,
      true,
    ],
    [
      'a ValidatingAdmissionPolicy denying the Agent',
      "Error: INSTALLATION FAILED: failed to create resource: agents.kagent.dev \"a\" is forbidden: ValidatingAdmissionPolicy 'require-team' with binding 'require-team-binding' denied request: failed expression: has(object.metadata.labels.team)\n",
      'invalid_request',
      /\(ValidatingAdmissionPolicy 'require-team' with binding 'require-team-binding'\): failed expression: has\(object\.metadata\.labels\.team\)/,
      true,
    ],
    [
      'an admission webhook that cannot be called (an outage, not a refusal)',
      'Error: INSTALLATION FAILED: Internal error occurred: failed calling webhook "validation.gatekeeper.sh": failed to call webhook: Post "https://gatekeeper-webhook-service.gatekeeper-system.svc:443/v1/admit?timeout=3s": dial tcp 10.96.0.10:443: connect: connection refused\n',
      'backend_error',
      /^helm upgrade failed: Internal error occurred: failed calling webhook/,
      false,
    ],
    [
      'an unreachable cluster',
      'Error: INSTALLATION FAILED: Kubernetes cluster unreachable: Get "https://127.0.0.1:1/version": dial tcp 127.0.0.1:1: connect: connection refused\n',
      'backend_error',
      /^helm upgrade failed: Kubernetes cluster unreachable/,
      false,
    ],
  ])('maps %s, marking what the cluster caused (never kept for an idempotent replay)', (_case, stderr, code, message, environmental) => {
    const error = helmFailure('upgrade', stderr);
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
    expect(error.environmental).toBe(environmental);
  });

  it('keeps helm\'s message and drops its framing and log lines', () => {
    expect(helmMessage('level=WARN msg="x"\nError: UPGRADE FAILED: boom\n')).toBe('boom');
  });
});

describe(clusterRefusal.name, () => {
  const alice = { user: 'token:alice', groups: ['team-a'] };
  const refused = 'secrets is forbidden: User "token:alice" cannot list resource "secrets" in API group "" in the namespace "ns-b"';

  it.each([
    ['helm 3', `Error: INSTALLATION FAILED: list: failed to list: ${refused}\n`],
    ['helm 4', `Error: INSTALLATION FAILED: query: failed to query with labels: ${refused}\n`],
  ])("answers the cluster refusing the impersonated caller (%s) with forbidden and the cluster's message", (_helm, stderr) => {
    const error = clusterRefusal('install', stderr, alice);
    expect(error?.code).toBe('forbidden');
    expect(error?.message).toBe(`the Kubernetes cluster refused helm install for token:alice: ${refused}; ask a cluster admin for a RoleBinding that grants it in that namespace`);
  });

  it("answers the service account not allowed to impersonate as the installation's failure, naming the missing verb", () => {
    const stderr = 'Error: users "token:alice" is forbidden: User "system:serviceaccount:am:agent-manager" cannot impersonate resource "users" in API group "" at the cluster scope\n';
    const error = clusterRefusal('install', stderr, alice);
    expect(error?.code).toBe('backend_error');
    expect(error?.message).toMatch(/grant it the verb impersonate on users and groups, or set KUBE_IMPERSONATE=false/);
  });

  it.each([
    ['another failure', 'Error: INSTALLATION FAILED: Kubernetes cluster unreachable: dial tcp 127.0.0.1:1: connect: connection refused\n'],
    ['a refusal of another user', 'Error: secrets is forbidden: User "system:anonymous" cannot list resource "secrets" in API group ""\n'],
  ])('leaves %s to helmFailure', (_case, stderr) => {
    expect(clusterRefusal('install', stderr, alice)).toBeUndefined();
  });
});
