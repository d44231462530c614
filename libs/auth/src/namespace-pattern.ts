/**
 * Namespace patterns of the policy: a DNS-1123 label in which `*` stands for any run of label
 * characters (`payments-*`, `*-prod`, `*`).
 */
const PATTERN = /^[a-z0-9*]([-a-z0-9*]{0,61}[a-z0-9*])?$/;

export function isNamespacePattern(pattern: string): boolean {
  return PATTERN.test(pattern);
}

/** A matcher for one valid pattern. */
export function namespaceMatcher(pattern: string): (namespace: string) => boolean {
  if (pattern === '*') return () => true;
  const regex = new RegExp(`^${pattern.replaceAll('*', '[a-z0-9-]*')}$`);
  return (namespace) => regex.test(namespace);
}

/**
 * The pattern as a SQL LIKE operand (`payments-*` → `payments-%`). A valid pattern holds no `%`,
 * `_` or `\`, so nothing needs escaping.
 */
export function namespacePatternToSqlLike(pattern: string): string {
  return pattern.replaceAll('*', '%');
}
