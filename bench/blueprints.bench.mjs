// `node bench/blueprints.bench.mjs` (after `npm run build`; no cluster): blueprints at scale (issue 29).
// Creates BENCH_BLUEPRINTS (10,000) blueprints through REST on SQLite and, with BENCH_PG=1, on
// PostgreSQL (test/pg/up.sh into /tmp), then pages through the list and through tools/list, and
// restarts the service on the same store. Prints RSS after 100 and 2,000 creates, create latency
// by hundreds, the list and tools/list figures and the restart; asserts nothing but "answered".
import { performance } from 'node:perf_hooks';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startPostgres } from './lib/infra.mjs';
import { startService } from './lib/service.mjs';

const TOTAL = Number(process.env.BENCH_BLUEPRINTS ?? 10_000);
const RSS_AT = [100, 2000].filter((n) => n <= TOTAL);
const dir = mkdtempSync(join(tmpdir(), 'agent-manager-bench-blueprints-'));
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: none, user: {token: none}}]\ncontexts: [{name: none, context: {cluster: none, user: none}}]\ncurrent-context: none\n');
const log = (message) => console.error(`[bench] ${message}`);

const body = (name) => ({
  name,
  description: 'Creates an incident helper for a team.',
  fixed: { modelConfig: 'default-model-config', toolset: ['preset:read-only', 'workflow:incident-triage'], systemMessage: 'You help the on-call engineer triage incidents.' },
  open: ['displayName', 'annotations'],
  defaults: { namespace: 'agents', annotations: { 'example.com/team': 'sre' } },
});

async function json(base, method, path, payload, headers = {}) {
  const res = await fetch(base + path, { method, headers: { 'content-type': 'application/json', ...headers }, body: payload === undefined ? undefined : JSON.stringify(payload) });
  const text = await res.text();
  // an MCP answer may come as one server-sent event: its data line is the JSON-RPC message
  const data = text.startsWith('event:') ? text.split('\n').find((line) => line.startsWith('data: '))?.slice(6) : text;
  return { status: res.status, text, body: data ? JSON.parse(data) : undefined, headers: res.headers };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Every tool, page by page, over plain JSON-RPC in one session: pages, tools and bytes. */
async function toolsList(base) {
  const accept = { accept: 'application/json, text/event-stream' };
  const init = await json(base, 'POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }, accept);
  const session = { ...accept, 'mcp-session-id': init.headers.get('mcp-session-id'), 'mcp-protocol-version': '2025-06-18' };
  await json(base, 'POST', '/mcp', { jsonrpc: '2.0', method: 'notifications/initialized' }, session);
  let cursor;
  let pages = 0;
  let tools = 0;
  let bytes = 0;
  let first = 0;
  const started = performance.now();
  do {
    const res = await json(base, 'POST', '/mcp', { jsonrpc: '2.0', id: 2 + pages, method: 'tools/list', params: cursor ? { cursor } : {} }, session);
    if (res.status !== 200 || !res.body.result) throw new Error(`tools/list answered ${res.status}: ${res.text.slice(0, 300)}`);
    if (pages === 0) first = res.text.length;
    pages++;
    bytes += res.text.length;
    tools += res.body.result.tools.length;
    cursor = res.body.result.nextCursor;
  } while (cursor);
  return { pages, tools, bytes, first, ms: performance.now() - started };
}

async function listAll(base) {
  let cursor;
  let count = 0;
  const started = performance.now();
  do {
    const res = await json(base, 'GET', `/api/v1/blueprints?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
    if (res.status !== 200) throw new Error(`list answered ${res.status}: ${res.text.slice(0, 300)}`);
    count += res.body.items.length;
    cursor = res.body.nextCursor;
  } while (cursor);
  return { count, ms: performance.now() - started };
}

async function run(provider, databaseUrl) {
  log(`${provider}: creating ${TOTAL} blueprints through REST`);
  let service = await startService({ databaseUrl, kubeconfig });
  const figures = { provider, rss: {}, createMs: [] };
  try {
    let batch = [];
    for (let i = 0; i < TOTAL; i++) {
      const started = performance.now();
      const res = await json(service.base, 'POST', '/api/v1/blueprints', body(`bp_${String(i).padStart(5, '0')}`));
      batch.push(performance.now() - started);
      if (res.status !== 201) throw new Error(`create ${i + 1} answered ${res.status}: ${res.text.slice(0, 300)}`);
      if (RSS_AT.includes(i + 1)) {
        await sleep(2000);
        figures.rss[i + 1] = service.rssMiB();
      }
      if ((i + 1) % 100 === 0) {
        figures.createMs.push({ at: i + 1, median: median(batch), max: Math.max(...batch) });
        batch = [];
        if ((i + 1) % 1000 === 0) log(`${provider}: ${i + 1} created, create median of the last 100 ${figures.createMs.at(-1).median.toFixed(1)} ms, RSS ${service.rssMiB().toFixed(0)} MiB`);
      }
    }
    figures.rssAfterAll = service.rssMiB();
    figures.list = await listAll(service.base);
    figures.tools = await toolsList(service.base);
    await service.stop();
    const started = performance.now();
    service = await startService({ databaseUrl, kubeconfig });
    figures.restartMs = performance.now() - started;
    figures.afterRestart = await listAll(service.base);
    figures.toolsAfterRestart = await toolsList(service.base);
    figures.rssAfterRestart = service.rssMiB();
  } finally {
    await service.stop();
  }
  return figures;
}

function print(f) {
  const [a, b] = RSS_AT;
  console.log(`\n== blueprints ${f.provider}: ${TOTAL} created through REST`);
  if (b) console.log(`RSS after ${a} creates ${f.rss[a].toFixed(0)} MiB, after ${b} ${f.rss[b].toFixed(0)} MiB: ${(f.rss[b] / f.rss[a]).toFixed(2)}× (target ≤ 1.25×) ${f.rss[b] / f.rss[a] <= 1.25 ? 'met' : 'MISSED'}`);
  console.log(`RSS after all ${f.rssAfterAll.toFixed(0)} MiB; after a restart ${f.rssAfterRestart.toFixed(0)} MiB`);
  const at = (n) => f.createMs.find((c) => c.at === n);
  for (const n of [100, 1000, 2000, 5000, 10_000].filter((n) => at(n))) console.log(`create latency, creates ${n - 99}–${n}: median ${at(n).median.toFixed(1)} ms, max ${at(n).max.toFixed(1)} ms`);
  console.log(`list: ${f.list.count} blueprints in ${Math.ceil(f.list.count / 100)} pages, ${f.list.ms.toFixed(0)} ms`);
  console.log(`tools/list: ${f.tools.tools} tools in ${f.tools.pages} pages, ${(f.tools.bytes / 1024).toFixed(0)} KiB in all, first page ${(f.tools.first / 1024).toFixed(0)} KiB, ${f.tools.ms.toFixed(0)} ms`);
  console.log(`restart to healthy ${f.restartMs.toFixed(0)} ms: list ${f.afterRestart.count} blueprints, tools/list ${f.toolsAfterRestart.tools} tools`);
}

const results = [];
try {
  results.push(await run('sqlite', `file:${join(dir, 'blueprints.db')}`));
  if (process.env.BENCH_PG === '1') {
    log('starting PostgreSQL (test/pg/up.sh)');
    const pg = await startPostgres();
    try {
      results.push(await run('postgresql', await pg.database()));
    } finally {
      await pg.stop();
    }
  }
} catch (error) {
  process.exitCode = 1;
  log(`FAILED: ${error.stack ?? error}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
  results.forEach(print);
}
