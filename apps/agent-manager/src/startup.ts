import { ConfigError, shown, type AppConfig } from '@app/common';

/** Network failures of the first store connection: the address in DATABASE_URL does not answer. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);
/** PostgreSQL refusing the connection itself: authentication (28000, 28P01), an unknown database (3D000). */
const REFUSED = new Set(['28000', '28P01', '3D000']);
/** SQLite's codes for a file that cannot be opened, read or written (better-sqlite3's error codes). */
const SQLITE_UNUSABLE = /^SQLITE_(CANTOPEN|IOERR|READONLY|PERM|AUTH|NOTADB|CORRUPT)/;

/**
 * What stopped the start, as the one line an operator needs: the setting to fix and why. Undefined
 * for anything else (a bug: its stack trace is the message).
 */
export function startFailure(error: unknown, config?: AppConfig, step: StartStep = 'build'): string | undefined {
  if (error instanceof ConfigError) return error.message;
  if (!config || typeof error !== 'object' || error === null) return undefined;
  const { code, syscall, port } = error as { code?: unknown; syscall?: unknown; port?: unknown };
  const message = (error as Error).message;
  if (step === 'listen' && syscall === 'getaddrinfo') {
    return `HOST=${JSON.stringify(config.HOST)}: the name does not resolve to an address of this machine (${message}); use 0.0.0.0, 127.0.0.1 or an address this machine has`;
  }
  if (step === 'listen' && syscall === 'listen') {
    if (code === 'EADDRNOTAVAIL') return `HOST=${JSON.stringify(config.HOST)}: no address of this machine, so nothing can listen there (${message}); use 0.0.0.0, 127.0.0.1 or an address this machine has`;
    const name = config.METRICS_PORT !== undefined && port === config.METRICS_PORT ? 'METRICS_PORT' : 'PORT';
    if (code === 'EADDRINUSE') return `${name}="${String(port)}": another process listens on ${config.HOST}:${String(port)} (${message}); stop it or choose another port`;
    if (code === 'EACCES') return `${name}="${String(port)}": this user may not listen on it (${message}); ports below 1024 need privileges, choose a higher one`;
  }
  // Only while the app is built: the store is the one thing that opens a file or connects then.
  if (step === 'build' && code === 'STORE_CORRUPT') return `DATABASE_URL=${JSON.stringify(config.DATABASE_URL)}: ${message}`;
  if (step === 'build' && typeof code === 'string' && SQLITE_UNUSABLE.test(code)) {
    return `DATABASE_URL=${JSON.stringify(config.DATABASE_URL)}: the SQLite file cannot be used (${code}: ${message}); check that the file is a sound SQLite database this user may read and write, or move it aside and rebuild the store from the cluster (agent-manager store rebuild)`;
  }
  if (step === 'build' && ((typeof code === 'string' && (UNREACHABLE.has(code) || REFUSED.has(code))) || syscall === 'connect')) {
    return `DATABASE_URL=${JSON.stringify(shown('DATABASE_URL', config.DATABASE_URL))}: the store refused or did not answer the first connection (${message}); check the address, the credentials and that the database exists and runs`;
  }
  return undefined;
}

/** What a start step does: build the app (the store connects and migrates), or listen on HOST and a port. */
export type StartStep = 'build' | 'listen';

/**
 * Runs a start step; a failure ends the process with one line and exit code 2: the setting to fix
 * when startFailure explains it, else what failed (the stack trace follows only with LOG_LEVEL=debug or trace).
 */
export async function startStep<T>(run: () => Promise<T>, config?: AppConfig, step: StartStep = 'build'): Promise<T> {
  try {
    return await run();
  } catch (error) {
    failedToStart(error, config, step);
  }
}

/** Ends a start that failed: one line on stderr, exit code 2 (README). */
export function failedToStart(error: unknown, config?: AppConfig, step: StartStep = 'build'): never {
  console.error(`agent-manager: ${startFailure(error, config, step) ?? `the start failed: ${oneLine(error)}`}`);
  if (/^(debug|trace|verbose)$/.test(process.env.LOG_LEVEL ?? '') && error instanceof Error) console.error(error.stack);
  process.exit(2);
}

/**
 * A crash (an exception or a rejection nobody handled) leaves one line on stderr naming it, then
 * the process exits 1; only what kills the process outright (SIGKILL, SIGBUS) leaves none.
 */
export function exitOnFatal(): void {
  const fatal = (kind: string) => (error: unknown) => {
    console.error(`agent-manager: fatal: ${kind}: ${oneLine(error)}`);
    process.exit(1);
  };
  process.on('uncaughtException', fatal('uncaught exception'));
  process.on('unhandledRejection', fatal('unhandled rejection'));
}

/** An error as one line: its name and message, without line breaks. */
export function oneLine(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.replace(/\s*\n\s*/g, ' ');
}
