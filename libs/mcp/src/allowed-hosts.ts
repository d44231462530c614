/**
 * DNS rebinding protection for /mcp: a request is answered only when its Host, and its Origin
 * when it sends one, name an allowed host (any port). Pure.
 */
export function refusedHost(headers: { host?: string; origin?: string }, allowed: readonly string[]): string | null {
  if (allowed.includes('*')) return null;
  const names = new Set(allowed.map((h) => h.toLowerCase()));
  const host = headers.host === undefined ? null : hostname(headers.host);
  if (host === null || !names.has(host)) return `Host ${headers.host ?? '(none)'}`;
  if (headers.origin !== undefined) {
    let origin: string | null;
    try {
      origin = new URL(headers.origin).hostname.toLowerCase();
    } catch {
      origin = null;
    }
    if (origin === null || !names.has(origin)) return `Origin ${headers.origin}`;
  }
  return null;
}

/** The host name of a Host header: `[::1]:8080` → `[::1]`, `localhost:3000` → `localhost`. */
function hostname(header: string): string | null {
  const value = header.trim().toLowerCase();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    return end > 0 ? value.slice(0, end + 1) : null;
  }
  const name = value.split(':')[0];
  return name.length > 0 ? name : null;
}

/** Why a Host header is no `host[:port]` a URL can be made of (a port past 65535, a space), or null; a missing one is refusedHost's to word. */
export function malformedHost(host: string | undefined): string | null {
  if (host === undefined) return null;
  try {
    new URL(`http://${host}/`);
    return null;
  } catch {
    return `the Host header "${host}" is not a host name with an optional port from 1 to 65535`;
  }
}
