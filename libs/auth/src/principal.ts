/** How a caller proved who it is; `anonymous` only when authentication is off. */
export type AuthMethod = 'oidc' | 'token' | 'local' | 'anonymous';

/** Who is calling: the subject the policy and the journal name, with the groups the policy may bind. */
export interface Principal {
  subject: string;
  groups: readonly string[];
  method: AuthMethod;
}

/** The caller when authentication is off. */
export const ANONYMOUS: Principal = Object.freeze({ subject: 'anonymous', groups: Object.freeze([]), method: 'anonymous' });

/** The principal of the stdio door: the local user (AUTH_STDIO_SUBJECT). */
export function localPrincipal(subject: string): Principal {
  return { subject, groups: [], method: 'local' };
}

/** `token:ci (groups: a, b)`: the principal as refusals name it. */
export function describePrincipal(principal: Principal): string {
  return principal.groups.length === 0 ? principal.subject : `${principal.subject} (groups: ${principal.groups.join(', ')})`;
}
