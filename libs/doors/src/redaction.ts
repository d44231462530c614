import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { ANONYMOUS, type Authorizer, type Principal } from '@app/auth';
import { AppError } from '@app/common';

const logger = new Logger('BackendErrors');

/** An admin is granted every operation in every namespace (`*` on `*`). */
export function isAdmin(authorizer: Authorizer, principal: Principal | undefined): boolean {
  const who = principal ?? ANONYMOUS;
  return authorizer.operations.every((operation) => authorizer.namespacesFor(who, operation).all);
}

/** The class of a helm or cluster failure, in words that name no host, path or credential. */
function failureClass(message: string): string {
  if (/unreachable|connection refused|no such host|i\/o timeout|dial tcp|EHOSTUNREACH|ECONNREFUSED/i.test(message)) return 'the Kubernetes cluster is unreachable';
  if (/forbidden|unauthorized|credentials|exec plugin|getting credentials/i.test(message)) return 'the cluster refused the service\'s credentials or their plugin failed';
  if (/timed out|context deadline exceeded|timeout/i.test(message)) return 'helm timed out waiting for the cluster';
  if (/no matches for kind|ensure CRDs are installed/i.test(message)) return 'the cluster lacks the kagent CRDs';
  return 'helm or the cluster failed';
}

/**
 * A backend_error as the caller may read it: admins get helm's own words; others the class of
 * failure and a reference whose log line holds helm's text (a kubeconfig plugin's stderr, API
 * server URLs).
 */
export function forCaller(error: unknown, admin: boolean): unknown {
  if (admin || !(error instanceof AppError) || error.code !== 'backend_error') return error;
  const reference = randomUUID();
  logger.warn(`reference=${reference} ${error.message}`);
  return new AppError('backend_error', `${failureClass(error.message)} (reference ${reference}: an admin finds helm's message in the service log); retry, or ask an admin with this reference`);
}

/**
 * An answer as the caller may read it: for others than admins, each stored operation that failed
 * with backend_error (an agent's lastOperation, a journal entry) shows the class of failure and the
 * operation's id as reference instead of helm's words; admins read them in the same answer.
 */
export function answerForCaller<T>(answer: T, admin: boolean): T {
  return admin ? answer : (redacted(answer) as T);
}

function redacted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redacted);
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const entries = Object.entries(value).map(([key, item]) => [key, redacted(item)] as const);
  const copy = Object.fromEntries(entries) as Record<string, unknown>;
  if (copy.errorCode === 'backend_error' && typeof copy.errorMessage === 'string' && typeof copy.id === 'string') {
    copy.errorMessage = `${failureClass(copy.errorMessage)} (reference: operation ${copy.id}; an admin reads helm's message in the journal, GET /api/v1/operations)`;
  }
  return copy;
}
