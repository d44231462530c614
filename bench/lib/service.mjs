// The built service as its own OS process (dist/, as `npm start` runs it), and what the
// benchmark reads from outside it: health, RSS and CPU time from /proc.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearTimeout } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';

export const ROOT = join(import.meta.dirname, '..', '..');
export const HELM_BIN = process.env.HELM_BIN ?? join(ROOT, 'node_modules', '.cache', 'agent-manager', 'helm4', 'helm');
export const KUBECTL_BIN = join(ROOT, 'node_modules', '.cache', 'agent-manager', 'helm4', 'kubectl');

/**
 * What `npm start` runs, read from package.json "start" (`node [flags] <entry>`): the node flags
 * (the image sets the same) and the entry (the bundled service, scripts/bundle.mjs), so the
 * figures are those of the service as it is run.
 */
export const { START_FLAGS, ENTRY } = (() => {
  const start = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.start.split(/\s+/);
  if (start[0] !== 'node' || start.length < 2) throw new Error(`package.json "start" is not \`node [flags] <entry>\`: ${start.join(' ')}`);
  return { START_FLAGS: start.slice(1, -1), ENTRY: start.at(-1) };
})();

/** Settings of the service this benchmark never inherits from the caller's shell. */
const OWN_KEYS = /^(PORT|HOST|DATABASE_URL|KUBECONFIG|HELM_BIN|AGENT_CHART.*|LOG_LEVEL|LOG_FORMAT|METRICS_PORT|MCP_.*|LEASE_.*|IDEMPOTENCY_.*|SHUTDOWN_.*|RECONCILE_.*|REPLICA_ID|WRITE_QUEUE_SECONDS)$/;

export async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Spawns the service (as `npm start` runs it) on a free port and waits until /healthz answers 200. `startMs` is the
 * time from spawn to that answer; `startCpuMs` the CPU time the process had used by then. With `onLog`, the
 * service's stdout is read: each line goes to `onLog` parsed (JSON lines, LOG_FORMAT=json) with `at`, the
 * performance.now() it arrived at.
 */
export async function startService({ databaseUrl, kubeconfig, env = {}, pollMs = 20, timeoutMs = 120_000, onLog }) {
  const port = await freePort();
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !OWN_KEYS.test(key)));
  const started = performance.now();
  const child = spawn(process.execPath, [...START_FLAGS, join(ROOT, ENTRY)], {
    cwd: ROOT,
    env: { ...inherited, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: databaseUrl, KUBECONFIG: kubeconfig, HELM_BIN, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', onLog ? 'pipe' : 'ignore', 'pipe'],
  });
  if (onLog) readLines(child.stdout, onLog);
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const spawnedAt = started;
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the service exited before it was healthy:\n${stderr}`);
    try {
      const res = await fetch(`${base}/healthz`);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (performance.now() - started > timeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`the service was not healthy within ${timeoutMs} ms:\n${stderr}`);
    }
    await sleep(pollMs);
  }
  const startMs = performance.now() - started;
  const startCpuMs = cpuMs(child.pid);
  return {
    base,
    pid: child.pid,
    startMs,
    startCpuMs,
    stderr: () => stderr,
    rssMiB: () => rssMiB(child.pid),
    spawnedAt,
    cpuMs: () => cpuMs(child.pid),
    /** CPU time (ms) of the service process itself, and of its children (the helm helper, the helm processes), live and ended. */
    treeCpuMs: () => treeCpuMs(child.pid),
    /**
     * Sends SIGTERM and answers the time (ms) until the process exited, or null when it had not
     * within `killAfterMs` (then it is killed).
     */
    async terminate(killAfterMs = 45_000) {
      if (child.exitCode !== null || child.signalCode !== null) return 0;
      const sent = performance.now();
      child.kill('SIGTERM');
      let killed = false;
      const timer = setTimeout(() => {
        killed = true;
        child.kill('SIGKILL');
      }, killAfterMs);
      await exited;
      clearTimeout(timer);
      return killed ? null : performance.now() - sent;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** VmRSS of a process, in MiB. */
export function rssMiB(pid) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(/(\d+)/.exec(line)[1]) / 1024;
}

/** User + system CPU time of a process so far, in ms (clock ticks of /proc/<pid>/stat). */
export function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

/** Splits a stream into lines and hands each, parsed when it is JSON, to `onLine` with `at` (performance.now()). */
function readLines(stream, onLine) {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop();
    const at = performance.now();
    for (const line of lines) {
      if (!line.trim()) continue;
      let entry;
      try {
        entry = JSON.parse(line);
      } catch {
        entry = { msg: line };
      }
      onLine({ ...(entry && typeof entry === 'object' ? entry : { msg: String(entry) }), at });
    }
  });
}

/** utime + stime and cutime + cstime (children it waited for) of a process, in ms; null once it is gone. */
function cpuTimes(pid) {
  let stat;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ms = (i) => (Number(fields[i]) * 1000) / 100; // clock ticks, USER_HZ 100
  return { own: ms(11) + ms(12), reaped: ms(13) + ms(14), ppid: Number(fields[1]) };
}

/** The live processes whose parent is `pid`. */
function childrenOf(pid) {
  const children = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    if (cpuTimes(name)?.ppid === pid) children.push(Number(name));
  }
  return children;
}

/**
 * CPU time (ms) of a process (`own`) and of everything below it (`children`): the children it
 * waited for, and every live descendant's own time and its waited-for children's. helm runs are
 * children of the service's helper process, which waits for them; the helper lives as long as
 * the service, so its time and theirs are read from the live helper.
 */
export function treeCpuMs(pid) {
  const root = cpuTimes(pid);
  if (!root) return null;
  let children = root.reaped;
  const stack = childrenOf(pid);
  while (stack.length) {
    const child = stack.pop();
    const times = cpuTimes(child);
    if (!times) continue;
    children += times.own + times.reaped;
    stack.push(...childrenOf(child));
  }
  return { own: root.own, children };
}
