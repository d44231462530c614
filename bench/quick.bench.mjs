// The quick figures (`npm run bench` without BENCH_CLUSTER): latency of the read and validation paths, against the built service
// on a temp SQLite store with no cluster (writes need one; their cost is helm's). Prints
// p50/p95/max per operation; asserts nothing.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { ENTRY, START_FLAGS } from './lib/service.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 50);
const dir = mkdtempSync(join(tmpdir(), 'agent-manager-bench-'));
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: none, user: {token: none}}]\ncontexts: [{name: none, context: {cluster: none, user: none}}]\ncurrent-context: none\n');

const port = await new Promise((resolve) => {
  const server = createServer().listen(0, '127.0.0.1', () => {
    const { port } = server.address();
    server.close(() => resolve(port));
  });
});
const service = spawn(process.execPath, [...START_FLAGS, ENTRY], {
  env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: `file:${join(dir, 'bench.db')}`, KUBECONFIG: kubeconfig, LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const base = `http://127.0.0.1:${port}`;
for (let i = 0; ; i++) {
  try {
    if ((await fetch(`${base}/readyz`)).ok) break;
  } catch {
    // starting
  }
  if (i > 300) throw new Error('the service did not start');
  await sleep(100);
}

const agent = { name: 'bench', namespace: 'agents', modelConfig: 'default-model-config', toolset: ['preset:read-only', 'workflow:incident-triage'] };
const cases = [
  ['GET /api/v1/info', () => fetch(`${base}/api/v1/info`)],
  ['GET /api/v1/agents', () => fetch(`${base}/api/v1/agents`)],
  ['POST /api/v1/agents (invalid toolset, 400)', () => post('/api/v1/agents', { ...agent, toolset: ['Preset:x', 'tool:a,b'] })],
  ['POST /api/v1/agents/validate (helm template)', () => post('/api/v1/agents/validate', agent)],
  ['POST /api/v1/agents dryRun (helm template)', () => post('/api/v1/agents', { ...agent, dryRun: true })],
];

function post(path, body) {
  return fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
console.log(`agent-manager HTTP latency, ${ROUNDS} rounds each (ms)`);
try {
  for (const [label, run] of cases) {
    await (await run()).arrayBuffer(); // warm-up
    const times = [];
    for (let i = 0; i < ROUNDS; i++) {
      const start = performance.now();
      await (await run()).arrayBuffer();
      times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    console.log(`${label.padEnd(48)} p50 ${pct(times, 50).toFixed(1).padStart(7)}  p95 ${pct(times, 95).toFixed(1).padStart(7)}  max ${times.at(-1).toFixed(1).padStart(7)}`);
  }
} finally {
  service.kill('SIGTERM');
  await new Promise((r) => service.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}

// The stdio MCP start and exit figures (bench/stdio-start.bench.mjs).
await import('./stdio-start.bench.mjs');
