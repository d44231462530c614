import { AppError, type KubeIdentity } from '@app/common';

const SCHEMA_FAILURE = "values don't meet the specifications of the schema";
const TEMPLATE_FAIL = /execution error at \([^)]*\): (.*)/;
const SERVER_INVALID = /is invalid: (.*)/;
const NAMESPACE_MISSING = /namespaces? "([^"]+)" not found/;
const IN_PROGRESS = /another operation \(install\/upgrade\/rollback\) is in progress/;
/** The cluster's admission control refusing the object: a webhook (Gatekeeper, Kyverno, …) or a ValidatingAdmissionPolicy. */
const ADMISSION_DENIED = /admission webhook "([^"]+)" denied the request:?\s*([\s\S]*)|is forbidden: (ValidatingAdmissionPolicy '[^']+'[^:]*) denied request:?\s*([\s\S]*)/;

/** helm's own message without its "Error: " / "UPGRADE FAILED: " framing and log noise. */
export function helmMessage(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^(level=|WARNING:|walk\.go|\[debug\])/.test(l));
  return lines
    .join('\n')
    .replace(/^Error: /, '')
    .replace(/^(INSTALLATION|UPGRADE|ROLLBACK|UNINSTALL) FAILED: /, '')
    .trim();
}

/**
 * Maps a failed helm run: the chart, the API server or the cluster's admission policy refusing
 * the values is the caller's to fix (invalid_request); anything else is helm's or the cluster's
 * (backend_error).
 * Refusals that come from the cluster (a missing namespace, the API server's) are marked
 * environmental: an idempotent retry runs again rather than replaying them.
 */
export function helmFailure(action: string, stderr: string): AppError {
  const message = helmMessage(stderr) || `helm ${action} failed without a message`;
  if (message.includes(SCHEMA_FAILURE)) {
    const details = message
      .split('\n')
      .filter((l) => l.startsWith('- '))
      .map((l) => ({ path: 'values', message: l.slice(2) }));
    return new AppError('invalid_request', `the agent chart refused the values: ${message}`, details);
  }
  const failed = TEMPLATE_FAIL.exec(message);
  if (failed) return new AppError('invalid_request', failed[1], [{ path: 'values', message: failed[1] }]);
  const namespace = NAMESPACE_MISSING.exec(message);
  if (namespace) {
    return new AppError('invalid_request', `namespace "${namespace[1]}" does not exist in the cluster: create it first, or choose an existing namespace`, [
      { path: 'namespace', message: `namespace "${namespace[1]}" not found` },
    ]).fromEnvironment();
  }
  if (IN_PROGRESS.test(message)) {
    return new AppError('conflict', `helm reports another operation in progress on this release (${message}): wait for it to finish and retry; if it was interrupted, roll the release back (rollback_agent, or helm rollback) and retry`);
  }
  const denied = ADMISSION_DENIED.exec(message);
  if (denied) {
    const [by, reason] = denied[1] !== undefined ? [`admission webhook "${denied[1]}"`, denied[2]] : [denied[3], denied[4]];
    const why = reason.trim() || message;
    return new AppError('invalid_request', `the cluster's admission policy refused the Agent (${by}): ${why}; change the agent to meet the policy, or ask a cluster admin about it`, [
      { path: 'values', message: why },
    ]).fromEnvironment();
  }
  const invalid = SERVER_INVALID.exec(message);
  if (invalid && !/connection refused|unreachable/i.test(message)) {
    return new AppError('invalid_request', `the Kubernetes API server refused the Agent: ${message}`, [{ path: 'values', message: invalid[1] }]).fromEnvironment();
  }
  return new AppError('backend_error', `helm ${action} failed: ${message}`);
}

/** The API server's RBAC refusal as helm passes it on: `<resource> is forbidden: User "<user>" cannot <verb> …`. */
const RBAC_REFUSAL = /\S+ is forbidden: User "([^"]*)" cannot [^\n]*/;

/**
 * A failed helm run that impersonated `identity`: the cluster's RBAC refusing that user is the
 * caller's (forbidden, with the cluster's own message); the service not being allowed to
 * impersonate is the installation's (backend_error naming the missing rule); anything else undefined.
 */
export function clusterRefusal(action: string, stderr: string, identity: KubeIdentity): AppError | undefined {
  const refusal = RBAC_REFUSAL.exec(stderr);
  if (!refusal) return undefined;
  if (/ cannot impersonate /.test(refusal[0])) {
    return new AppError('backend_error', `helm ${action} failed: the cluster does not let agent-manager's service account impersonate callers (${refusal[0]}); grant it the verb impersonate on users and groups, or set KUBE_IMPERSONATE=false`);
  }
  if (refusal[1] !== identity.user) return undefined;
  return new AppError('forbidden', `the Kubernetes cluster refused helm ${action} for ${identity.user}: ${refusal[0].trim()}; ask a cluster admin for a RoleBinding that grants it in that namespace`);
}
