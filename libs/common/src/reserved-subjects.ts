/**
 * Subjects the service gives its own principals: API tokens (`token:<name>`), the stdio user
 * (`local:<user>`), Kubernetes' own (`system:`) and the caller when authentication is off
 * (`anonymous`). No other source may name a caller so: an OIDC subject `token:admin` would act
 * as the API token admin, with its grants, its idempotency keys and its identity in the cluster.
 */
export const RESERVED_SUBJECT_PREFIXES = ['token:', 'local:', 'system:'] as const;
export const RESERVED_SUBJECTS = ['anonymous'] as const;

/** A subject as reserved names are compared: Unicode NFKC (full-width letters, look-alike colons), case-folded, trimmed. */
export function comparableSubject(subject: string): string {
  return subject.normalize('NFKC').toUpperCase().toLowerCase().trim();
}

/**
 * The reserved prefix (or name) `subject` takes, or undefined; `allowed` are prefixes this source may
 * use (the stdio door's own `local:`).
 */
export function reservedSubjectPart(subject: string, allowed: readonly string[] = []): string | undefined {
  const comparable = comparableSubject(subject);
  const prefix = RESERVED_SUBJECT_PREFIXES.find((p) => comparable.startsWith(p));
  if (prefix !== undefined) return allowed.includes(prefix) ? undefined : prefix;
  return (RESERVED_SUBJECTS as readonly string[]).includes(comparable) ? comparable : undefined;
}
