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
import { stdioRound } from './lib/stdio.mjs';

const ROUNDS = Number(process.env.BENCH_STDIO_ROUNDS ?? 5);
const dir = mkdtempSync(join(tmpdir(), 'agent-manager-stdio-bench-'));
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: none, user: {token: none}}]\ncontexts: [{name: none, context: {cluster: none, user: none}}]\ncurrent-context: none\n');
const env = { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: `file:${join(dir, 'stdio.db')}`, KUBECONFIG: kubeconfig, LOG_LEVEL: 'error' };

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
try {
  const rounds = [];
  await stdioRound(env); // the first start migrates the store
  for (let i = 0; i < ROUNDS; i++) rounds.push(await stdioRound(env));
  const first = rounds.map((r) => r.firstList).sort((a, b) => a - b);
  const exit = rounds.map((r) => r.exitMs).sort((a, b) => a - b);
  console.log(`\nagent-manager mcp over stdio (node bin/agent-manager.mjs mcp), ${ROUNDS} rounds, ${rounds[0].tools} tools (ms)`);
  console.log(`${'spawn → first tools/list answer (target ≤ 2000)'.padEnd(52)} p50 ${pct(first, 50).toFixed(0).padStart(6)}  max ${first.at(-1).toFixed(0).padStart(6)}`);
  console.log(`${'stdin closed → process exited (target ≤ 2000)'.padEnd(52)} p50 ${pct(exit, 50).toFixed(0).padStart(6)}  max ${exit.at(-1).toFixed(0).padStart(6)}`);
  if (!['', '0', 'false'].includes(process.env.BENCH_NPX ?? '')) {
    const npx = await stdioRound(env, 'npx', ['--yes', 'agent-manager', 'mcp']);
    console.log(`${'npx agent-manager mcp: spawn → first tools/list'.padEnd(52)} ${npx.firstList.toFixed(0).padStart(10)}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
