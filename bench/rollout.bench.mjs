// `BENCH_CLUSTER=1 BENCH_ONLY=rollout npm run bench` (issue 26): a fleet rollout of 100 agents, the
// time per wave and the service's own cost over bare `helm upgrade` of the same move. On a control
// plane of its own (bench/lib/infra.mjs), the built service on SQLite (RECONCILE_AUTOMATIC=false),
// a test controller playing kagent (bench/lib/kagent-player.mjs), and a 0.6.1 copy of charts/agent
// whose default muster.toolNames drops `list_core_tools` (the Agent's spec and generation change).
// Invoked from cluster.bench.mjs, which prints and saves what it records.
import { execFile } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { URLSearchParams } from 'node:url';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { startControlPlane } from './lib/infra.mjs';
import { playKagent } from './lib/kagent-player.mjs';
import { chartValuesOf, helmWriteArgs, scaleSpec } from './lib/seed.mjs';
import { HELM_BIN, ROOT, startService } from './lib/service.mjs';
import { printGrid } from './lib/stats.mjs';

const run = promisify(execFile);
/** BENCH_ROLLOUT_AGENTS (100): how many agents the rollout moves, and how many bare helm moves. */
const AGENTS = Number(process.env.BENCH_ROLLOUT_AGENTS ?? 100);
/** BENCH_ROLLOUT_WAVES (1,9,30): the rollout's wave sizes, the last repeating. */
const WAVES = (process.env.BENCH_ROLLOUT_WAVES ?? '1,9,30').split(',').map(Number);
/** As the service's WAVE_CONCURRENCY (libs/agents/src/rollout/rollouts.service.ts): agents of a wave moved at once. */
const CONCURRENCY = 4;
const POLL_MS = 250;
const NS_ROLLOUT = 'bench-rollout';
const NS_HELM = 'bench-helm';
const CHART = join(ROOT, 'charts', 'agent');
const name = (i) => `agent-${String(i).padStart(3, '0')}`;

/** Runs `work(i)` for 0 … count-1, `width` at a time; answers the wall time (ms). */
async function pool(count, width, work) {
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, count) }, async () => {
    for (let i = next++; i < count; i = next++) await work(i);
  }));
  return performance.now() - started;
}

async function api(base, method, path, body) {
  const res = await fetch(base + path, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** The platform's next chart release: charts/agent as 0.6.1, one meta-tool fewer by default (as the cluster suite's). */
function chart061(dir) {
  const chart = join(dir, 'agent-0.6.1');
  cpSync(CHART, chart, { recursive: true });
  const edit = (file, from, to) => {
    const text = readFileSync(join(chart, file), 'utf8');
    if (!from.test(text)) throw new Error(`charts/agent/${file} no longer matches ${from}: adjust bench/rollout.bench.mjs`);
    writeFileSync(join(chart, file), text.replace(from, to));
  };
  edit('Chart.yaml', /^version: .*$/m, 'version: 0.6.1');
  edit('values.yaml', /^ {4}- list_core_tools\n/m, '');
  return chart;
}

/** Every journal entry of `operation` in `namespace` (newest first, paged). */
async function journal(base, namespace, operation) {
  const items = [];
  let cursor;
  do {
    const query = new URLSearchParams({ namespace, operation, limit: '100', ...(cursor ? { cursor } : {}) });
    const res = await api(base, 'GET', `/api/v1/operations?${query}`);
    if (res.status !== 200) throw new Error(`GET /api/v1/operations: ${res.status} ${JSON.stringify(res.body)}`);
    items.push(...res.body.items);
    cursor = res.body.nextCursor;
  } while (cursor);
  return items;
}

/**
 * Per wave, from the service's own journal and the rollout record: its moves (the first agent's
 * journal start to the last one's finish) and what follows them until the next wave's first move
 * (or the rollout's finish): the health gate, with the rollout's bookkeeping between waves.
 */
function wavesOf(rollout, entries) {
  const byId = new Map(entries.map((entry) => [entry.id, entry]));
  const count = Math.max(...rollout.agents.map((agent) => agent.wave)) + 1;
  const waves = [];
  for (let w = 0; w < count; w++) {
    const ops = rollout.agents.filter((agent) => agent.wave === w).map((agent) => byId.get(agent.operationId));
    if (ops.some((op) => !op?.finishedAt)) throw new Error(`wave ${w + 1}: an agent has no finished journal entry`);
    const start = Math.min(...ops.map((op) => Date.parse(op.startedAt)));
    const end = Math.max(...ops.map((op) => Date.parse(op.finishedAt)));
    const each = ops.map((op) => Date.parse(op.finishedAt) - Date.parse(op.startedAt));
    waves.push({ wave: w + 1, agents: ops.length, start, end, movesMs: end - start, perAgentMs: each.reduce((a, b) => a + b, 0) / each.length });
  }
  const finished = Date.parse(rollout.finishedAt);
  waves.forEach((wave, w) => {
    wave.gateMs = (w + 1 < waves.length ? waves[w + 1].start : finished) - wave.end;
    wave.totalMs = wave.movesMs + wave.gateMs;
  });
  return waves;
}

export async function rolloutSection({ dir, log, figure, results }) {
  const load = { before: loadavg() };
  log('rollout: starting a control plane of its own (test/cluster/up.sh)');
  const cluster = await startControlPlane();
  const stops = [() => cluster.stop()];
  const helm = (args) => run(HELM_BIN, args, { env: { ...process.env, KUBECONFIG: cluster.kubeconfig }, maxBuffer: 64 << 20 });
  try {
    await cluster.createNamespace(NS_ROLLOUT);
    await cluster.createNamespace(NS_HELM);
    const target = chart061(dir);
    const player = playKagent(cluster.kubeconfig, [NS_ROLLOUT, NS_HELM]);
    stops.push(() => player.stop());
    const service = await startService({ databaseUrl: `file:${join(dir, 'rollout.db')}`, kubeconfig: cluster.kubeconfig, env: { RECONCILE_AUTOMATIC: 'false' } });
    stops.push(() => service.stop());

    // The scene: AGENTS agents created through the service, and as many bare helm releases with the same values.
    const spec = (i) => scaleSpec(name(i));
    const seedMs = await pool(AGENTS, CONCURRENCY, async (i) => {
      const res = await api(service.base, 'POST', '/api/v1/agents', { name: name(i), namespace: NS_ROLLOUT, ...spec(i) });
      if (res.status !== 201) throw new Error(`create ${name(i)}: ${res.status} ${JSON.stringify(res.body)}`);
    });
    log(`rollout: ${AGENTS} agents created through the service in ${(seedMs / 1000).toFixed(1)} s`);
    const valuesFiles = [];
    for (let i = 0; i < AGENTS; i++) {
      valuesFiles.push(join(dir, `rollout-${name(i)}.json`));
      writeFileSync(valuesFiles[i], JSON.stringify(await chartValuesOf(spec(i))));
    }
    const installMs = await pool(AGENTS, CONCURRENCY, (i) => helm(['install', name(i), CHART, '--namespace', NS_HELM, '--values', valuesFiles[i]]));
    log(`rollout: ${AGENTS} bare helm releases installed in ${(installMs / 1000).toFixed(1)} s`);
    await sleep(2000); // the player marks every new Agent before anything is timed

    // Bare helm, before the rollout: the same move (0.6.0 → 0.6.1, same values), CONCURRENCY at a time.
    log(`rollout: bare helm upgrade of ${AGENTS} releases to 0.6.1, ${CONCURRENCY} at a time`);
    const bareMs = await pool(AGENTS, CONCURRENCY, (i) => helm(['upgrade', name(i), target, '--namespace', NS_HELM, '--values', valuesFiles[i]]));

    // The rollout, followed until it ends.
    log(`rollout: rolling ${AGENTS} agents out to 0.6.1 in waves ${WAVES.join(', ')} (the last repeating)`);
    const posted = performance.now();
    const res = await api(service.base, 'POST', '/api/v1/fleet/rollouts', { chart: target, selector: { namespaces: [NS_ROLLOUT] }, waves: WAVES, gateTimeoutSeconds: 300 });
    if (res.status !== 202) throw new Error(`POST /api/v1/fleet/rollouts: ${res.status} ${JSON.stringify(res.body)}`);
    const { id } = res.body.rollout;
    const seen = []; // [ms since the POST, wave] whenever the wave the service reports changes
    let rollout;
    for (;;) {
      const got = await api(service.base, 'GET', `/api/v1/fleet/rollouts/${id}`);
      if (got.status !== 200) throw new Error(`GET /api/v1/fleet/rollouts/${id}: ${got.status}`);
      rollout = got.body;
      if (seen.at(-1)?.[1] !== rollout.wave) seen.push([performance.now() - posted, rollout.wave]);
      if (rollout.state !== 'running') break;
      if (performance.now() - posted > 30 * 60_000) throw new Error(`rollout ${id} still running after 30 min: ${JSON.stringify(rollout.counts)}`);
      await sleep(POLL_MS);
    }
    const observedMs = performance.now() - posted;
    if (rollout.state !== 'succeeded' || rollout.counts.upgraded !== AGENTS) throw new Error(`rollout ${id} ended ${rollout.state}: ${rollout.message} ${JSON.stringify(rollout.counts)}`);
    const waves = wavesOf(rollout, await journal(service.base, NS_ROLLOUT, 'start_fleet_rollout'));

    // Bare, after the rollout: the service's own helm command (its helm-commands) moving the bare releases back to 0.6.0.
    const major = Number(/^v(\d+)/.exec(results.meta.helm)?.[1] ?? 4);
    const commands = [];
    for (let i = 0; i < AGENTS; i++) commands.push(await helmWriteArgs('upgrade', { release: { namespace: NS_HELM, name: name(i) }, chart: { ref: CHART }, valuesFile: valuesFiles[i], major, wait: false, timeoutSeconds: 300 }));
    log(`rollout: the service's helm command, bare, moving the ${AGENTS} bare releases back to 0.6.0, ${CONCURRENCY} at a time`);
    const commandMs = await pool(AGENTS, CONCURRENCY, (i) => helm(commands[i]));
    load.after = loadavg();

    const totalMs = Date.parse(rollout.finishedAt) - Date.parse(rollout.createdAt);
    const movesMs = waves.reduce((sum, wave) => sum + wave.movesMs, 0);
    const gateMs = waves.reduce((sum, wave) => sum + wave.gateMs, 0);
    const startMs = waves[0].start - Date.parse(rollout.createdAt);
    results.rollout = {
      agents: AGENTS,
      waves: WAVES,
      concurrency: CONCURRENCY,
      load,
      seedMs,
      installMs,
      rolloutId: id,
      perWave: waves.map((w) => ({ wave: w.wave, agents: w.agents, movesMs: w.movesMs, perAgentMs: w.perAgentMs, gateMs: w.gateMs, totalMs: w.totalMs })),
      seenWaveChanges: seen.map(([ms, wave]) => ({ ms: Math.round(ms), wave })),
      totalMs,
      observedMs,
      movesMs,
      gateMs,
      startMs,
      bareHelmMs: bareMs,
      serviceCommandMs: commandMs,
      statusWrites: player.stats.marked,
    };
    const per = (ms) => ms / AGENTS;
    figure({ id: 'rollout_total_ms', section: 'rollout', label: `rollout of ${AGENTS} agents, waves ${waves.map((w) => w.agents).join('/')}: created → finished (service's clock)`, value: totalMs, unit: 'ms' });
    figure({ id: 'rollout_observed_ms', section: 'rollout', label: `the same from the client: POST → GET answers it finished (polled every ${POLL_MS} ms)`, value: observedMs, unit: 'ms' });
    figure({ id: 'rollout_agents_per_minute', section: 'rollout', label: 'agents per minute, gates included', value: AGENTS / (totalMs / 60_000), unit: '/min' });
    figure({ id: 'rollout_gate_ms', section: 'rollout', label: 'of the total: gate waits (+ the bookkeeping between waves)', value: gateMs, unit: 'ms' });
    figure({ id: 'rollout_start_ms', section: 'rollout', label: 'of the total: created → first move starts', value: startMs, unit: 'ms' });
    figure({
      id: 'rollout_moves_vs_bare_helm',
      section: 'rollout',
      label: `moves per agent (waves' move phases / ${AGENTS})  vs  bare helm upgrade per agent (${CONCURRENCY} at a time)`,
      a: { n: 1, median: per(movesMs) },
      b: { n: 1, median: per(bareMs) },
      ratio: movesMs / bareMs,
      ratioOf: 'A/B',
      unit: 'ms',
    });
    figure({
      id: 'rollout_moves_vs_service_command',
      section: 'rollout',
      label: "moves per agent  vs  the service's helm command, bare, per agent",
      a: { n: 1, median: per(movesMs) },
      b: { n: 1, median: per(commandMs) },
      ratio: movesMs / commandMs,
      ratioOf: 'A/B',
      unit: 'ms',
    });
    figure({ id: 'rollout_overhead_ms', section: 'rollout', label: 'service overhead: total − gate waits − bare helm total', value: totalMs - gateMs - bareMs, unit: 'ms' });
    figure({ id: 'rollout_overhead_vs_command_ms', section: 'rollout', label: "the same against the service's helm command, bare", value: totalMs - gateMs - commandMs, unit: 'ms' });
  } finally {
    while (stops.length) await stops.pop()().catch((error) => log(`rollout cleanup: ${error.message}`));
  }
}

/** The per-wave table; the summary figures print with the other sections'. */
export function printRollout(rollout) {
  if (!rollout) return;
  const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
  printGrid(
    `== rollout: ${rollout.agents} agents in waves ${rollout.waves.join(', ')} (the last repeating), ${rollout.concurrency} moves at once; load average ${rollout.load.before.map((l) => l.toFixed(2)).join(' ')} → ${rollout.load.after?.map((l) => l.toFixed(2)).join(' ')}`,
    ['wave', 'agents', 'moves (first start → last finish)', 'journal ms per move', 'gate (+ bookkeeping)', 'wave total', 'agents/min'],
    rollout.perWave.map((w) => [w.wave, w.agents, s(w.movesMs), `${w.perAgentMs.toFixed(0)} ms`, s(w.gateMs), s(w.totalMs), (w.agents / (w.totalMs / 60_000)).toFixed(1)]),
  );
}
