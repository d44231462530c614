import { AppError } from '@app/common';

const SCHEMA_FAILURE = "values don't meet the specifications of the schema";
const TEMPLATE_FAIL = /execution error at \([^)]*\): (.*)/;
const SERVER_INVALID = /is invalid: (.*)/;
const NAMESPACE_MISSING = /namespaces? "([^"]+)" not found/;
const IN_PROGRESS = /another operation \(install\/upgrade\/rollback\) is in progress/;

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
 * Maps a failed helm run: the chart or the API server refusing the values is the
 * caller's to fix (invalid_request); anything else is helm's or the cluster's (backend_error).
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
  const invalid = SERVER_INVALID.exec(message);
  if (invalid && !/connection refused|unreachable/i.test(message)) {
    return new AppError('invalid_request', `the Kubernetes API server refused the Agent: ${message}`, [{ path: 'values', message: invalid[1] }]).fromEnvironment();
  }
  return new AppError('backend_error', `helm ${action} failed: ${message}`);
}
