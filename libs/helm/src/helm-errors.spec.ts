import { describe, expect, it } from '@jest/globals';
import { helmFailure, helmMessage } from './helm-errors.js';

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
