import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ServiceProcess {
  url: string;
  /** stdout and stderr together. */
  log: string;
  /** stdout alone: the JSON log lines. */
  stdout: string;
  child: ChildProcess;
  /** SIGKILL: the process dies at once, whatever it was doing. */
  kill(): Promise<void>;
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
}

let built = false;

/**
 * Builds dist/ once per test file when it is missing or stale (the same check as npm start).
 * Never synchronously: the test process may host an app whose sockets must keep being served.
 */
export async function ensureBuilt(): Promise<void> {
  if (built) return;
  const build = spawn(process.execPath, ['scripts/build-if-needed.mjs'], { stdio: 'inherit' });
  const [code] = (await once(build, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`scripts/build-if-needed.mjs exited with ${code}`);
  built = true;
}

/** How long a service process may take to answer /readyz on a busy 2-core machine (it starts in about 5 s when idle). */
const READY_TIMEOUT_MS = 90_000;

/** A TCP port nothing listens on now (the OS picks it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The built service as its own OS process (npm start's entry point), ready when /readyz says so. */
export async function startServiceProcess(env: Record<string, string>): Promise<ServiceProcess> {
  await ensureBuilt();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'agent-manager-proc-'));
  const log = join(dir, 'service.log');
  const stdout = join(dir, 'stdout.log');
  const out = createWriteStream(log);
  const child = spawn(process.execPath, ['dist/service/main.mjs'], {
    env: { ...process.env, LOG_LEVEL: 'log', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.pipe(out);
  child.stdout!.pipe(createWriteStream(stdout));
  child.stderr!.pipe(out);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + READY_TIMEOUT_MS; ; ) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode} before it was ready; see ${log}`);
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the service was not ready within ${READY_TIMEOUT_MS / 1000}s; see ${log}`);
    await sleep(100);
  }
  return {
    url,
    log,
    stdout,
    child,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}
