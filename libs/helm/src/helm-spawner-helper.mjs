// @ts-check
// The helm spawner's helper process (helm-spawner.ts starts it by path, with an IPC channel and
// the stop grace in milliseconds as its one argument). Starting a process forks the caller, and
// forking the service (hundreds of MiB, many threads) blocked its event loop for 50–150 ms per helm
// run under load (measured with the 500-validate benchmark); forking this small process costs a
// fraction of that and never stops the service's event loop.
//
// Plain JavaScript, type-checked by tsc (checkJs) and linted as the TypeScript sources are, so that
// the same file runs from the sources (jest), from tsc's output and from the bundle (dist/service,
// where scripts/bundle.mjs copies it) without a build step of its own.
import { spawn } from 'node:child_process';

/**
 * One helm run asked for by the service.
 * @typedef {{ id: number, bin: string, args: string[], env: Record<string, string>, timeoutMs: number }} SpawnRequest
 */

const STOP_GRACE_MS = Number(process.argv[2]);
/** @type {Set<import('node:child_process').ChildProcess>} */
const running = new Set();
let stopping = false;

/**
 * What a thrown value says, as the service reports it.
 * @param {any} error whatever spawn threw or emitted
 */
const messageOf = (error) => String((error && error.message) || error);

// The service closed the channel (it is stopping): helm runs still going get SIGTERM, which helm
// answers by stopping (and rolling back) cleanly, then SIGKILL after the grace. Exiting at once
// would orphan them: in a container they die by SIGKILL with the service, mid-write.
process.on('disconnect', () => {
  stopping = true;
  if (running.size === 0) process.exit(0);
  for (const child of running) child.kill('SIGTERM');
  setTimeout(() => {
    for (const child of running) child.kill('SIGKILL');
    process.exit(0);
  }, STOP_GRACE_MS);
});
process.on('message', (message) => {
  const { id, bin, args, env, timeoutMs } = /** @type {SpawnRequest} */ (message);
  /** @type {Buffer[]} */
  const out = [];
  /** @type {Buffer[]} */
  const err = [];
  let timedOut = false;
  let done = false;
  /** @param {object} reply */
  const finish = (reply) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    if (process.connected) process.send?.({ id, ...reply });
  };
  let child;
  try {
    child = spawn(bin, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    process.send?.({ id, error: messageOf(error) });
    return;
  }
  running.add(child);
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  }, timeoutMs);
  child.stdout.on('data', (chunk) => out.push(chunk));
  child.stderr.on('data', (chunk) => err.push(chunk));
  child.on('error', (error) => finish({ error: messageOf(error) }));
  child.on('close', () => {
    running.delete(child);
    if (stopping && running.size === 0) process.exit(0);
  });
  child.on('close', (code, signal) =>
    finish({
      exitCode: code === null ? (signal ? 128 : 1) : code,
      timedOut,
      stdout: Buffer.concat(out).toString(),
      stderr: Buffer.concat(err).toString(),
    }),
  );
});
