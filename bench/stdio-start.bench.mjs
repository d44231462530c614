// Stdio MCP start (issue 24 item 6; part of `npm run bench`): how long a client that spawns
// `agent-manager mcp` (bin/agent-manager.mjs, as an MCP client config runs it) waits for its first
// tools/list answer, and how long the process takes to exit once the client closes stdin. Real MCP
// SDK client over stdio, a store that has been used (migrated), no cluster. Target: first tools/list
// ≤ 2 s after a build; exit ≤ 2 s after stdin closes. Prints the figures; asserts nothing.
// BENCH_NPX=1 adds one `npx agent-manager mcp` round, for comparison (npx installs the checkout
// into its cache first).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval } from 'node:timers';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ROOT } from './lib/service.mjs';

const ROUNDS = Number(process.env.BENCH_STDIO_ROUNDS ?? 5);
const dir = mkdtempSync(join(tmpdir(), 'agent-manager-stdio-bench-'));
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: none, user: {token: none}}]\ncontexts: [{name: none, context: {cluster: none, user: none}}]\ncurrent-context: none\n');
const env = { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: `file:${join(dir, 'stdio.db')}`, KUBECONFIG: kubeconfig, LOG_LEVEL: 'error' };

/** One session: spawn → first tools/list answer, then stdin closed → process exit (ms). */
async function round(command, args) {
  const started = performance.now();
  const transport = new StdioClientTransport({ command, args, env, cwd: ROOT, stderr: 'ignore' });
  const client = new Client({ name: 'stdio-bench', version: '1' });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const firstList = performance.now() - started;
  const pid = transport.pid;
  const closing = performance.now();
  // The SDK's close ends stdin, then signals the process if it has not exited; measure the exit itself.
  const exited = new Promise((resolve) => {
    const poll = setInterval(() => {
      try {
        process.kill(pid, 0);
      } catch {
        clearInterval(poll);
        resolve(performance.now() - closing);
      }
    }, 10);
  });
  transport._process?.stdin?.end();
  const exitMs = await exited;
  await client.close().catch(() => undefined);
  return { firstList, exitMs, tools: tools.length };
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
try {
  const rounds = [];
  await round(process.execPath, ['bin/agent-manager.mjs', 'mcp']); // the first start migrates the store
  for (let i = 0; i < ROUNDS; i++) rounds.push(await round(process.execPath, ['bin/agent-manager.mjs', 'mcp']));
  const first = rounds.map((r) => r.firstList).sort((a, b) => a - b);
  const exit = rounds.map((r) => r.exitMs).sort((a, b) => a - b);
  console.log(`\nagent-manager mcp over stdio (node bin/agent-manager.mjs mcp), ${ROUNDS} rounds, ${rounds[0].tools} tools (ms)`);
  console.log(`${'spawn → first tools/list answer (target ≤ 2000)'.padEnd(52)} p50 ${pct(first, 50).toFixed(0).padStart(6)}  max ${first.at(-1).toFixed(0).padStart(6)}`);
  console.log(`${'stdin closed → process exited (target ≤ 2000)'.padEnd(52)} p50 ${pct(exit, 50).toFixed(0).padStart(6)}  max ${exit.at(-1).toFixed(0).padStart(6)}`);
  if (!['', '0', 'false'].includes(process.env.BENCH_NPX ?? '')) {
    const npx = await round('npx', ['--yes', 'agent-manager', 'mcp']);
    console.log(`${'npx agent-manager mcp: spawn → first tools/list'.padEnd(52)} ${npx.firstList.toFixed(0).padStart(10)}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
