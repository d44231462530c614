// `BENCH_CLUSTER=1 npm run bench`: the figures users compare (issue 8), side by side in one run,
// interleaved (A, B, A, B …) so machine noise hits both, against a local control plane it starts
// and stops itself: the service against bare helm, MCP against REST, lists at 100/1,000/10,000
// agents (SQLite; PostgreSQL too with BENCH_PG=1), start-up, RSS and 10 concurrent PATCHes.
// Prints medians with min–max next to the issue's targets, writes bench/results.json, asserts nothing.
// BENCH_ROUNDS scales the rounds (1 = the defaults below).
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { URLSearchParams } from 'node:url';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { startControlPlane, startPostgres } from './lib/infra.mjs';
import { chartValuesOf, helmWriteArgs, SEED_LABEL, seedAgents } from './lib/seed.mjs';
import { HELM_BIN, ROOT, startService } from './lib/service.mjs';
import { fmt, interleave, perRound, printTable, summary, time } from './lib/stats.mjs';
import { printRollout, rolloutSection } from './rollout.bench.mjs';
import { printScale, scale } from './scale.bench.mjs';

const run = promisify(execFile);
const SCALE = Number(process.env.BENCH_ROUNDS ?? 1);
const rounds = (n) => Math.max(3, Math.round(n * SCALE));
const WRITE_ROUNDS = rounds(15);
const READ_ROUNDS = rounds(30);
const MCP_ROUNDS = rounds(100);
const LIST_ROUNDS = rounds(15);
const STARTS = rounds(5);
/** BENCH_LIST_SIZES=100,1000,10000 (the default): the store sizes the list figures compare, smallest first. */
const SIZES = (process.env.BENCH_LIST_SIZES ?? '100,1000,10000').split(',').map(Number);
const SETTLE_MS = 5000;
const CHART = join(ROOT, 'charts', 'agent');
/**
 * BENCH_ONLY=start,writes,reads,mcp,race,load,lists,hostile runs only those sections (all by default).
 * `scale` (bench/scale.bench.mjs: control planes of its own, 10,000 agents seeded) and `rollout`
 * (bench/rollout.bench.mjs: a control plane of its own, 200 agents) run only when named.
 */
const ONLY = process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(',').map((s) => s.trim()) : null;
const NAMED_ONLY = ['scale', 'rollout'];
const wanted = (section) => (NAMED_ONLY.includes(section) ? ONLY?.includes(section) === true : !ONLY || ONLY.includes(section));
const NS = 'bench';

const log = (message) => console.error(`[bench] ${message}`);
const dir = mkdtempSync(join(tmpdir(), 'agent-manager-bench-'));
const results = {
  meta: {
    startedAt: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    scale: SCALE,
    only: ONLY,
    rounds: { writes: WRITE_ROUNDS, reads: READ_ROUNDS, mcp: MCP_ROUNDS, lists: LIST_ROUNDS, starts: STARTS },
  },
  figures: [],
};
const cleanups = [];

/** A figure: A against B (or one value) with the issue's target, kept for the table and the JSON. */
function figure(entry) {
  results.figures.push(entry);
  return entry;
}

/**
 * Sets `target.floor`: the same figure for a server of the service's kind doing none of its work
 * (`floor`, a ratio figure whose B is the same as the target's), which the targets table prints
 * beside it. Only where any work the service adds can only move the ratio away from its target.
 */
function floorOf(target, floor) {
  target.floor = { id: floor.id, ratio: floor.ratio, ratioOf: floor.ratioOf };
}

function ratioFigure({ id, section, label, a, b, invert = false, target, limit, unit = 'ms', extra }) {
  const ratio = invert ? b.median / a.median : a.median / b.median;
  const met = limit === undefined ? undefined : invert ? ratio >= limit : ratio <= limit;
  return figure({ id, section, label, a, b, unit, ratio, ratioOf: invert ? 'B/A' : 'A/B', perRound: perRound(a, b, invert), target, limit, met, ...extra });
}

// ---------------------------------------------------------------------------------------------
// REST and helm helpers

async function api(base, method, path, body, headers = {}) {
  const init = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers['content-type'] = 'application/json';
  }
  const res = await fetch(base + path, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

/**
 * GET with node:http and a keep-alive agent: the lightest standard client, for the figure that
 * compares the service itself with a helm process. fetch (undici) costs about 1 ms more per
 * request here once the connection sat idle for the length of a helm run (measured against a
 * bare node:http server: 2.4 ms vs 1.3 ms after 130 ms idle), which would be the client's, not
 * the service's.
 */
const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
function get(base, path, agent = keepAlive) {
  return send(base, path, { agent });
}

/** One request over `agent`'s kept-alive connection; the body is sent as JSON and the answer read as JSON. */
function send(base, path, { method = 'GET', headers = {}, body, agent = keepAlive } = {}) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const head = payload === undefined ? headers : { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) };
    request(base + path, { method, headers: head, agent }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const json = text && /json/.test(res.headers['content-type'] ?? '');
        resolve({ status: res.statusCode, headers: res.headers, body: json ? JSON.parse(text) : text || null });
      });
      res.on('error', reject);
    })
      .on('error', reject)
      .end(payload);
  });
}

async function expectStatus(promise, status, what) {
  const res = await promise;
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res;
}

function helm(kubeconfig, args) {
  return run(HELM_BIN, args, { env: { ...process.env, KUBECONFIG: kubeconfig }, maxBuffer: 64 << 20 });
}

/** For sections that need no cluster: helm and the Kubernetes client fail fast against it. */
function unreachableKubeconfig() {
  const file = join(dir, 'unreachable.kubeconfig');
  writeFileSync(
    file,
    'apiVersion: v1\nkind: Config\nclusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]\n' +
      'users: [{name: none, user: {token: none}}]\ncontexts: [{name: none, context: {cluster: none, user: none}}]\ncurrent-context: none\n',
  );
  return file;
}

/** JSON with sorted keys, to compare values whatever order their keys came in. */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  return JSON.stringify(value);
}

function valuesFile(name, values) {
  const file = join(dir, `${name}.values.json`);
  writeFileSync(file, JSON.stringify(values));
  return file;
}

function createBody(name, i) {
  return {
    name,
    namespace: NS,
    modelConfig: 'default-model-config',
    toolset: ['preset:read-only', 'workflow:incident-triage'],
    description: `Benchmark agent ${i}`,
    displayName: `Bench ${i}`,
    systemMessage: 'You triage incidents. '.repeat(15) + 'Be brief.',
    labels: { team: 'sre' },
    annotations: { 'bench/round': String(i) },
  };
}

/** The spec fields of a create body (what the chart values are made of). */
const specOf = (body) => Object.fromEntries(Object.entries(body).filter(([key]) => key !== 'name' && key !== 'namespace'));

// ---------------------------------------------------------------------------------------------
// Sections

/** Start to a healthy /healthz on an already migrated, empty SQLite store; idle RSS after it. */
async function startup(kubeconfig) {
  log(`start-to-healthy: ${STARTS} starts`);
  const databaseUrl = `file:${join(dir, 'startup.db')}`;
  const first = await startService({ databaseUrl, kubeconfig });
  await first.stop();
  figure({ id: 'first_start_ms', section: 'start', label: 'first start (migrates an empty store)', value: first.startMs, unit: 'ms' });
  const starts = [];
  const cpu = [];
  const idle = [];
  for (let i = 0; i < STARTS; i++) {
    const service = await startService({ databaseUrl, kubeconfig });
    starts.push(service.startMs);
    cpu.push(service.startCpuMs);
    await sleep(SETTLE_MS);
    idle.push(service.rssMiB());
    await service.stop();
  }
  figure({ id: 'start_to_healthy_ms', section: 'start', label: 'start to healthy (spawn → /healthz 200)', a: summary(starts), unit: 'ms', target: '≤ 1500 ms', met: summary(starts).median <= 1500 });
  figure({ id: 'start_cpu_ms', section: 'start', label: 'CPU time used by then', a: summary(cpu), unit: 'ms' });
  figure({ id: 'idle_rss_mib', section: 'start', label: `idle RSS (${SETTLE_MS / 1000} s after healthy)`, a: summary(idle), unit: 'MiB', target: '≤ 150 MiB', met: summary(idle).median <= 150 });
}

/**
 * create / update / delete through the service against bare helm install / upgrade / uninstall.
 * A third contender runs bare the very helm command the service runs for a create and an update
 * (its own helm-commands: atomic, server-side apply taking conflicts, the release as JSON), which
 * splits the service's cost over plain helm into its own work and its flags'.
 */
async function writes(service, kubeconfig) {
  log(`writes: ${WRITE_ROUNDS} interleaved rounds each of create, update (service, bare helm, the service's helm command) and delete`);
  const svc = (i) => `svc-${i}`;
  const bare = (i) => `helm-${i}`;
  const same = (i) => `cmd-${i}`;
  const patchOf = (i) => ({ displayName: `Bench ${i} v2`, systemMessage: 'You triage incidents and page people. '.repeat(12) });
  // the values files bare helm gets: what the service writes for the same create and PATCH
  const createFiles = [];
  const updateFiles = [];
  for (let i = 0; i < WRITE_ROUNDS; i++) {
    const spec = specOf(createBody(bare(i), i));
    createFiles.push(valuesFile(`${bare(i)}-create`, await chartValuesOf(spec)));
    updateFiles.push(valuesFile(`${bare(i)}-update`, await chartValuesOf({ ...spec, ...patchOf(i) })));
  }
  const major = Number(/^v(\d+)/.exec(results.meta.helm)?.[1] ?? 4);
  const serviceCommand = (kind, i, valuesFile) => helmWriteArgs(kind, { release: { namespace: NS, name: same(i) }, chart: { ref: CHART }, valuesFile, major, wait: false, timeoutSeconds: 300 });
  const written = [];
  const create = await interleave(WRITE_ROUNDS, [
    async (i) => written.push((await expectStatus(api(service.base, 'POST', '/api/v1/agents', createBody(svc(i), i)), 201, `create ${svc(i)}`)).body.values),
    (i) => helm(kubeconfig, ['install', bare(i), CHART, '--namespace', NS, '--values', createFiles[i]]),
    async (i) => helm(kubeconfig, await serviceCommand('install', i, createFiles[i])),
  ]);
  const expected = canonical(await chartValuesOf(specOf(createBody(svc(0), 0))));
  if (canonical(written[0]) !== expected) log(`WARNING: the service wrote other values than bare helm gets: ${JSON.stringify(written[0])}`);
  const update = await interleave(WRITE_ROUNDS, [
    (i) => expectStatus(api(service.base, 'PATCH', `/api/v1/agents/${NS}/${svc(i)}`, patchOf(i)), 200, `update ${svc(i)}`),
    (i) => helm(kubeconfig, ['upgrade', bare(i), CHART, '--namespace', NS, '--values', updateFiles[i]]),
    async (i) => helm(kubeconfig, await serviceCommand('upgrade', i, updateFiles[i])),
  ]);
  const remove = await interleave(WRITE_ROUNDS, [
    (i) => expectStatus(api(service.base, 'DELETE', `/api/v1/agents/${NS}/${svc(i)}`), 200, `delete ${svc(i)}`),
    (i) => helm(kubeconfig, ['uninstall', bare(i), '--namespace', NS]),
  ]);
  for (let i = 0; i < WRITE_ROUNDS; i++) await helm(kubeconfig, ['uninstall', same(i), '--namespace', NS]);
  const bareArgs = 'helm install|upgrade NAME charts/agent --namespace NS --values FILE; helm uninstall NAME --namespace NS';
  const serviceArgs = (await serviceCommand('upgrade', 0, 'FILE')).join(' ');
  ratioFigure({ id: 'create_vs_helm_install', section: 'writes', label: 'create  vs  helm install', a: create[0], b: create[1], target: '≤ 1.10×', limit: 1.1, extra: { bareArgs } });
  ratioFigure({ id: 'create_vs_its_helm_command', section: 'writes', label: "create  vs  the service's helm command, bare", a: create[0], b: create[2] });
  ratioFigure({ id: 'its_helm_command_vs_helm_install', section: 'writes', label: "the service's helm command  vs  helm install", a: create[2], b: create[1] });
  ratioFigure({ id: 'update_vs_helm_upgrade', section: 'writes', label: 'update  vs  helm upgrade', a: update[0], b: update[1], target: '≤ 1.10×', limit: 1.1 });
  ratioFigure({ id: 'update_vs_its_helm_command', section: 'writes', label: "update  vs  the service's helm command, bare", a: update[0], b: update[2], extra: { serviceArgs } });
  ratioFigure({ id: 'its_helm_command_vs_helm_upgrade', section: 'writes', label: "the service's helm command  vs  helm upgrade", a: update[2], b: update[1] });
  ratioFigure({ id: 'delete_vs_helm_uninstall', section: 'writes', label: 'delete  vs  helm uninstall', a: remove[0], b: remove[1] });
}

/** A floor server (bench/lib/floor-server.mjs) in a process of its own, answering with `answers`; `kind` node (node:http) or nest. */
async function startFloorServer(kind, answers) {
  const child = spawn(process.execPath, [join(ROOT, 'bench', 'lib', 'floor-server.mjs'), kind, JSON.stringify(answers)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = await once(child.stdout, 'data');
  return { base: `http://127.0.0.1:${String(chunk).trim()}`, stop: async () => { child.kill('SIGTERM'); await once(child, 'exit'); } };
}

/**
 * REST get_agent (keep-alive node:http) against `helm get values -o json` of the same release.
 * Each round runs, for each GET in turn (their order rotating), a helm run and then that GET, so
 * every GET is timed right after a helm process, as in a workload that mixes the two. Two floors
 * are timed the same way, each a process of its own answering the same bytes with none of the
 * service's work: a bare node:http server (what any Node service would cost here) and a bare Nest
 * app on Express (what the service's framework costs before the service does anything). A row
 * without a target adds the same GET back to back (no helm run between two requests).
 */
async function reads(service, kubeconfig) {
  log(`reads: ${READ_ROUNDS} rounds of helm get values, each followed by a GET of the service, a bare node:http server or a bare Nest app`);
  await expectStatus(api(service.base, 'POST', '/api/v1/agents', createBody('svc-read', 0)), 201, 'create svc-read');
  for (let i = 0; i < 10; i++) await get(service.base, `/api/v1/agents/${NS}/svc-read`); // warm-up
  const sample = await get(service.base, `/api/v1/agents/${NS}/svc-read`);
  const answers = { rest: JSON.stringify(sample.body) };
  const floors = { node: await startFloorServer('node', answers), nest: await startFloorServer('nest', answers) };
  const agents = { node: new Agent({ keepAlive: true, maxSockets: 1 }), nest: new Agent({ keepAlive: true, maxSockets: 1 }) };
  const path = `/api/v1/agents/${NS}/svc-read`;
  const gets = {
    service: () => expectStatus(get(service.base, path), 200, 'get svc-read'),
    node: () => expectStatus(get(floors.node.base, path, agents.node), 200, 'bare node:http GET'),
    nest: () => expectStatus(get(floors.nest.base, path, agents.nest), 200, 'bare Nest app GET'),
  };
  try {
    for (const kind of ['node', 'nest']) for (let i = 0; i < 10; i++) await gets[kind](); // warm-up
    const kinds = Object.keys(gets);
    const timed = Object.fromEntries(kinds.map((kind) => [kind, { get: [], helm: [] }]));
    for (let round = 0; round < READ_ROUNDS; round++) {
      for (let k = 0; k < kinds.length; k++) {
        const kind = kinds[(round + k) % kinds.length];
        timed[kind].helm.push(await time(() => helm(kubeconfig, ['get', 'values', 'svc-read', '--namespace', NS, '-o', 'json'])));
        timed[kind].get.push(await time(gets[kind]));
      }
    }
    const [backToBack] = await interleave(READ_ROUNDS, [gets.service]);
    const of = (samples) => Object.defineProperty(summary(samples), 'samples', { value: samples, enumerable: false });
    const row = (kind) => ({ a: of(timed[kind].get), b: of(timed[kind].helm), invert: true });
    const target = ratioFigure({ id: 'helm_get_values_vs_get_agent', section: 'reads', label: 'get_agent (REST)  vs  helm get values', ...row('service'), target: '≥ 50×', limit: 50 });
    ratioFigure({ id: 'helm_get_values_vs_bare_server', section: 'reads', label: "floor: a bare node:http server's GET  vs  helm get values", ...row('node') });
    floorOf(target, ratioFigure({ id: 'helm_get_values_vs_bare_nest', section: 'reads', label: "floor: a bare Nest app's GET (the service's framework)  vs  helm get values", ...row('nest') }));
    figure({ id: 'get_agent_back_to_back', section: 'reads', label: 'get_agent (REST), back to back (no helm run between)', a: backToBack, unit: 'ms' });
  } finally {
    keepAlive.destroy();
    for (const agent of Object.values(agents)) agent.destroy();
    for (const floor of Object.values(floors)) await floor.stop();
  }
}

/**
 * MCP tools/call get_agent (the SDK client over Streamable HTTP) against its REST twin (fetch).
 * The same pair then runs against a node:http server replaying the service's own answers
 * (initialize, the tools/call result, the agent) with no work at all: what is left there is the
 * two clients' own difference (the SDK client's work per call, a POST against a GET, an answer
 * carrying the agent twice, as text and as structuredContent). The service's gap less that one
 * is the MCP door's own cost. That pair is no floor of the ratio: a fixed client gap weighs less
 * the longer the server takes, so a slower server would come nearer 1×.
 */
async function mcp(service) {
  log(`mcp: ${MCP_ROUNDS} interleaved pairs of tools/call get_agent and GET, against the service and against a server replaying its answers`);
  const pair = async (base) => {
    const client = new Client({ name: 'agent-manager-bench', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    try {
      const call = async () => {
        const result = await client.callTool({ name: 'get_agent', arguments: { namespace: NS, name: 'svc-read' } });
        if (result.isError) throw new Error(`get_agent over MCP failed: ${JSON.stringify(result.content)}`);
      };
      const rest = () => expectStatus(api(base, 'GET', `/api/v1/agents/${NS}/svc-read`), 200, 'get svc-read');
      for (let i = 0; i < 10; i++) await call(); // warm-up
      return await interleave(MCP_ROUNDS, [call, rest]);
    } finally {
      await client.close();
    }
  };
  const [viaMcp, viaRest] = await pair(service.base);
  ratioFigure({ id: 'mcp_vs_rest_get_agent', section: 'reads', label: 'MCP get_agent  vs  REST get_agent', a: viaMcp, b: viaRest, target: '≤ 1.20×', limit: 1.2 });
  const floor = await startFloorServer('node', await recordedAnswers(service.base));
  try {
    const [floorMcp, floorRest] = await pair(floor.base);
    ratioFigure({ id: 'mcp_vs_rest_replayed', section: 'reads', label: "the clients' own: the same pair against a server replaying the service's answers", a: floorMcp, b: floorRest });
    const own = viaMcp.median - viaRest.median - (floorMcp.median - floorRest.median);
    figure({ id: 'mcp_door_own_ms', section: 'reads', label: "the MCP door's own cost over REST (the service's gap less the replaying server's)", value: own, unit: 'ms' });
  } finally {
    await floor.stop();
  }
  await sameClient(service);
}

/** The service's answers to a GET of svc-read and, in a session, to initialize and tools/call get_agent: bytes and content types, for the MCP floor. */
async function recordedAnswers(base) {
  const rest = await fetch(`${base}/api/v1/agents/${NS}/svc-read`);
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };
  const post = async (body, session) => {
    const res = await fetch(`${base}/mcp`, { method: 'POST', headers: session ? { ...headers, 'mcp-session-id': session } : headers, body: JSON.stringify(body) });
    return { session: res.headers.get('mcp-session-id'), type: res.headers.get('content-type'), text: await res.text() };
  };
  const initialize = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'agent-manager-bench', version: '1.0.0' } } });
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, initialize.session);
  const call = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_agent', arguments: { namespace: NS, name: 'svc-read' } } }, initialize.session);
  await fetch(`${base}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': initialize.session } });
  if (!/json/.test(call.type ?? '') || !JSON.parse(call.text).result || JSON.parse(call.text).result.isError) throw new Error(`tools/call get_agent answered ${call.type}: ${call.text}`);
  return { rest: await rest.text(), mcp: { initialize: { type: initialize.type, text: initialize.text }, call: { type: call.type, text: call.text } } };
}

/**
 * The same pair with one client for both doors: tools/call as the JSON-RPC POST any MCP client
 * sends, and the GET, over one kept-alive node:http connection. What is left is the doors' own
 * difference, without the SDK client's work per call (validating the result, among others).
 */
async function sameClient(service) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const headers = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };
  const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'agent-manager-bench', version: '1.0.0' } } };
  const opened = await send(service.base, '/mcp', { method: 'POST', headers, body: initialize, agent });
  const session = opened.headers['mcp-session-id'];
  if (opened.status !== 200 || !session) throw new Error(`MCP initialize answered ${opened.status} without a session: ${JSON.stringify(opened.body)}`);
  const inSession = { ...headers, 'mcp-session-id': session };
  await expectStatus(send(service.base, '/mcp', { method: 'POST', headers: inSession, body: { jsonrpc: '2.0', method: 'notifications/initialized' }, agent }), 202, 'notifications/initialized');
  let id = 1;
  const viaMcp = async () => {
    const body = { jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name: 'get_agent', arguments: { namespace: NS, name: 'svc-read' } } };
    const res = await send(service.base, '/mcp', { method: 'POST', headers: inSession, body, agent });
    if (res.status !== 200 || !res.body?.result || res.body.result.isError) throw new Error(`get_agent over MCP (one JSON answer expected) failed: ${res.status} ${JSON.stringify(res.body)}`);
  };
  const viaRest = () => expectStatus(get(service.base, `/api/v1/agents/${NS}/svc-read`, agent), 200, 'get svc-read');
  try {
    // warm-up
    for (let i = 0; i < 10; i++) {
      await viaMcp();
      await viaRest();
    }
    const [mcpSame, restSame] = await interleave(MCP_ROUNDS, [viaMcp, viaRest]);
    ratioFigure({ id: 'mcp_vs_rest_get_agent_one_client', section: 'reads', label: 'MCP get_agent  vs  REST, one HTTP client for both', a: mcpSame, b: restSame });
  } finally {
    await send(service.base, '/mcp', { method: 'DELETE', headers: inSession, agent }).catch(() => undefined);
    agent.destroy();
  }
}

/** 10 concurrent PATCHes to one agent, without and with If-Match: who got what, and when. */
async function race(service) {
  log('race: 10 concurrent PATCHes to one agent, without and with If-Match');
  await expectStatus(api(service.base, 'POST', '/api/v1/agents', createBody('svc-race', 0)), 201, 'create svc-race');
  for (const withIfMatch of [false, true]) {
    const before = await expectStatus(api(service.base, 'GET', `/api/v1/agents/${NS}/svc-race`), 200, 'get svc-race');
    const etag = before.headers.get('etag') ?? `"${before.body.version}"`;
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 10 }, async (_, k) => {
        const res = await api(service.base, 'PATCH', `/api/v1/agents/${NS}/svc-race`, { displayName: `racer ${withIfMatch ? 'b' : 'a'}${k}` }, withIfMatch ? { 'if-match': etag } : {});
        return { status: res.status, ms: performance.now() - started, code: res.body?.error?.code };
      }),
    );
    const after = await expectStatus(api(service.base, 'GET', `/api/v1/agents/${NS}/svc-race`), 200, 'get svc-race');
    const counts = {};
    for (const a of answers) counts[a.status] = (counts[a.status] ?? 0) + 1;
    const byStatus = Object.fromEntries(Object.keys(counts).map((s) => [s, summary(answers.filter((a) => String(a.status) === s).map((a) => a.ms))]));
    const applied = after.body.revision - before.body.revision;
    const met = withIfMatch ? counts[200] === 1 && counts[412] === 9 : counts[200] === 10 && applied === 10;
    figure({
      id: withIfMatch ? 'concurrent_patches_if_match' : 'concurrent_patches',
      section: 'race',
      label: `10 concurrent PATCHes${withIfMatch ? ' with If-Match' : ''}`,
      counts,
      byStatus,
      applied,
      latencies: answers.map((a) => Math.round(a.ms)),
      unit: 'ms',
      target: withIfMatch ? '1×200, 9×412' : '10×200 (queued, applied in order)',
      met,
    });
  }
}

/** Samples GET <url> one after another until SIGTERM, then prints the latencies (ms) as JSON: a process of its own, so the load generator's work never counts. */
const HEALTH_SAMPLER = `
const url = process.argv[1];
const samples = [];
let stop = false;
process.once('SIGTERM', () => (stop = true));
while (!stop) {
  const started = performance.now();
  try { const res = await fetch(url); await res.arrayBuffer(); samples.push(performance.now() - started); } catch { samples.push(-1); }
  await new Promise((resolve) => setTimeout(resolve, 10));
}
process.stdout.write(JSON.stringify(samples));
`;

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * Issue 11's load: 500 concurrent validates and 50 concurrent status reads of an agent with
 * ~248 KiB of annotations (the cap is 256 KiB less helm's share), /healthz sampled meanwhile
 * from another process. Target: no error (503 with Retry-After is an answer), /healthz p99 ≤ 100 ms.
 */
async function load(service) {
  log('load: 500 concurrent validates + 50 concurrent status reads of a 256 KiB-annotation agent; /healthz sampled meanwhile');
  const annotations = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`bench.example.com/blob-${i}`, 'x'.repeat(62 * 1024)]));
  await expectStatus(api(service.base, 'POST', '/api/v1/agents', { ...createBody('svc-big', 0), annotations }), 201, 'create svc-big');
  await expectStatus(api(service.base, 'GET', `/api/v1/agents/${NS}/svc-big/status`), 200, 'status svc-big');
  const sampler = spawn(process.execPath, ['--input-type=module', '-e', HEALTH_SAMPLER, `${service.base}/healthz`], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  sampler.stdout.on('data', (chunk) => (out += chunk));
  const samplerDone = once(sampler, 'exit');
  await sleep(300);
  const started = performance.now();
  const answer = (kind) => (res) => ({ kind, status: res.status, retryAfter: res.headers.get('retry-after'), ms: performance.now() - started });
  const failed = (kind) => (error) => ({ kind, status: 'error', error: error.message, ms: performance.now() - started });
  const answers = await Promise.all([
    ...Array.from({ length: 500 }, (_, i) => api(service.base, 'POST', '/api/v1/agents/validate', createBody(`val-${i}`, i)).then(answer('validate'), failed('validate'))),
    ...Array.from({ length: 50 }, () => api(service.base, 'GET', `/api/v1/agents/${NS}/svc-big/status`).then(answer('status'), failed('status'))),
  ]);
  const wall = performance.now() - started;
  sampler.kill('SIGTERM');
  await samplerDone;
  const samples = JSON.parse(out || '[]');
  const health = samples.filter((ms) => ms >= 0).sort((a, b) => a - b);
  const counts = {};
  for (const a of answers) counts[`${a.kind} ${a.status}`] = (counts[`${a.kind} ${a.status}`] ?? 0) + 1;
  const unavailable = answers.filter((a) => a.status === 503);
  const withRetryAfter = unavailable.filter((a) => a.retryAfter).length;
  const errors = answers.filter((a) => a.status !== 200 && a.status !== 503).length;
  const p99 = percentile(health, 99);
  log(`load: ${JSON.stringify(counts)}; 503s ${unavailable.length} (${withRetryAfter} with Retry-After); /healthz ${health.length} samples, p50 ${percentile(health, 50)?.toFixed(1)} ms, p99 ${p99?.toFixed(1)} ms, max ${health.at(-1)?.toFixed(1)} ms; ${samples.length - health.length} failed; wall ${(wall / 1000).toFixed(1)} s`);
  figure({ id: 'load_healthz_p50', section: 'load', label: '/healthz p50 during the load', a: { n: 1, median: percentile(health, 50), min: health[0], max: health.at(-1) }, unit: 'ms' });
  figure({ id: 'load_healthz_p99', section: 'load', label: `/healthz p99 during the load (${health.length} samples)`, a: { n: 1, median: p99, min: p99, max: p99 }, unit: 'ms', target: '≤ 100 ms', met: p99 <= 100 });
  figure({
    id: 'load_answers',
    section: 'load',
    label: '500 validates + 50 status reads at once',
    counts,
    byStatus: Object.fromEntries(Object.keys(counts).map((key) => [key, summary(answers.filter((a) => `${a.kind} ${a.status}` === key).map((a) => a.ms))])),
    applied: `${unavailable.length}×503 (${withRetryAfter} with Retry-After), ${errors} errors, wall ${(wall / 1000).toFixed(1)} s`,
    unit: 'ms',
    target: 'no error; a 503 carries Retry-After',
    met: errors === 0 && withRetryAfter === unavailable.length,
  });
}

/** Three stores of 100, 1,000 and 10,000 agents, seeded through the store layer, one service each. */
async function seededStores(provider, pg) {
  const urls = [];
  let previous;
  let from = 0;
  for (const size of SIZES) {
    let url;
    if (provider === 'sqlite') {
      url = `file:${join(dir, `list-${size}.db`)}`;
      if (previous) copyFileSync(previous.slice('file:'.length), url.slice('file:'.length));
    } else {
      url = await pg.database(previous);
    }
    const ms = await seedAgents(url, { from, to: size });
    log(`${provider}: seeded agents ${from}–${size - 1} in ${(ms / 1000).toFixed(1)} s`);
    urls.push(url);
    previous = url;
    from = size;
  }
  return urls;
}

/**
 * Pages through the active agents (limit 100, shorter pages to land exactly on each stop) and
 * returns the cursor after each count in `stops`, how many agents it saw, and the time it took.
 */
async function walk(base, stops, total = Infinity) {
  const cursors = new Map();
  let cursor;
  let seen = 0;
  const started = performance.now();
  while (seen < total) {
    const stop = stops.find((s) => s > seen) ?? total;
    const limit = Math.min(100, stop - seen);
    const query = new URLSearchParams({ limit: String(limit), ...(cursor ? { cursor } : {}) });
    const res = await expectStatus(api(base, 'GET', `/api/v1/agents?${query}`), 200, 'list');
    seen += res.body.items.length;
    cursor = res.body.nextCursor;
    if (stops.includes(seen)) cursors.set(seen, cursor);
    if (!cursor) break;
  }
  return { cursors, seen, ms: performance.now() - started };
}

async function lists(provider, kubeconfig, pg) {
  log(`lists (${provider}): seeding ${SIZES.join(', ')} agents through the store layer`);
  const urls = await seededStores(provider, pg);
  const services = [];
  try {
    for (const url of urls) services.push(await startService({ databaseUrl: url, kubeconfig }));
    const big = services.at(-1);
    await sleep(SETTLE_MS);
    const idle = big.rssMiB();
    log(`lists (${provider}): paging through ${SIZES.at(-1)} agents`);
    // a deep page: the 20 agents after 80 % of them (at 100 agents, exactly the last 20)
    const deepAt = (size) => Math.round(size * 0.8);
    const all = await walk(big.base, [deepAt(SIZES.at(-1))]);
    if (all.seen !== SIZES.at(-1)) throw new Error(`paging saw ${all.seen} agents, not ${SIZES.at(-1)}`);
    await sleep(SETTLE_MS);
    const after = big.rssMiB();
    figure({ id: `${provider}_page_through_ms`, section: `lists ${provider}`, label: `page through ${SIZES.at(-1)} agents (limit 100)`, value: all.ms, unit: 'ms' });
    figure({
      id: `${provider}_rss_after_listing`,
      section: `lists ${provider}`,
      label: `RSS idle → after paging ${SIZES.at(-1)}`,
      a: { median: idle, n: 1 },
      b: { median: after, n: 1 },
      unit: 'MiB',
      ratio: after / idle,
      ratioOf: 'B/A',
      target: '≤ 1.25×',
      met: after / idle <= 1.25,
    });
    const deep = [];
    for (const [i, size] of SIZES.slice(0, -1).entries()) deep.push((await walk(services[i].base, [deepAt(size)], deepAt(size))).cursors.get(deepAt(size)));
    deep.push(all.cursors.get(deepAt(SIZES.at(-1))));
    // each page must hold what a user expects (the default limit 20, or what is left)
    const page = (i, query, expected) => async () => {
      const res = await expectStatus(api(services[i].base, 'GET', `/api/v1/agents?${new URLSearchParams(query)}`), 200, 'list');
      if (res.body.items.length !== expected) throw new Error(`a list page of ${SIZES[i]} agents (${JSON.stringify(query)}) held ${res.body.items.length} agents, not ${expected}`);
    };
    const kinds = [
      ['first', 'first page', () => ({}), (size) => Math.min(20, size)],
      ['deep', 'deep cursor page (after 80 %)', (i) => ({ cursor: deep[i] }), (size) => Math.min(20, size - deepAt(size))],
      ['label', `label ${SEED_LABEL} page`, () => ({ label: SEED_LABEL }), (size) => Math.min(20, Math.ceil(size / 5))],
    ];
    const contenders = kinds.flatMap(([, , query, expected]) => SIZES.map((size, i) => page(i, query(i), expected(size))));
    for (const warmUp of contenders) await warmUp();
    log(`lists (${provider}): ${LIST_ROUNDS} interleaved rounds of ${kinds.length} pages at ${SIZES.join(', ')} agents`);
    const samples = await interleave(LIST_ROUNDS, contenders);
    const targets = { first: ['≤ 1.5×', 1.5], label: ['≤ 2×', 2] };
    kinds.forEach(([kind, label], k) => {
      const [small, , large] = samples.slice(k * SIZES.length, (k + 1) * SIZES.length);
      for (const [i, size] of SIZES.entries()) {
        figure({ id: `${provider}_list_${kind}_${size}`, section: `lists ${provider}`, label: `${label} at ${size}`, a: samples[k * SIZES.length + i], unit: 'ms' });
      }
      ratioFigure({
        id: `${provider}_list_${kind}_ratio`,
        section: `lists ${provider}`,
        label: `${label}: ${SIZES.at(-1)} vs ${SIZES[0]} agents`,
        a: large,
        b: small,
        target: targets[kind]?.[0],
        limit: targets[kind]?.[1],
      });
    });
  } finally {
    for (const service of services) await service.stop();
  }
}

/**
 * Bounded work before authorization (issue 29): /healthz latency while 20 oversized creates
 * (a toolset of 100,000 invalid items, ~400 KB each) arrive at once from a principal granted
 * nothing. Before the fix each cost ~3 s of event loop; /healthz stalled for seconds.
 */
async function hostile(kubeconfig) {
  const NOBODY = 'am_nobody_8a7b6c5d4e3f20190a8b7c6d5e4f3a21';
  const tokens = join(dir, 'hostile-tokens.yaml');
  const { createHash } = await import('node:crypto');
  writeFileSync(tokens, `- name: nobody\n  sha256: ${createHash('sha256').update(NOBODY).digest('hex')}\n`);
  const policy = join(dir, 'hostile-policy.yaml');
  writeFileSync(policy, 'roles:\n  admin: ["*"]\nbindings:\n  - role: admin\n    subjects: ["token:someone-else"]\n    namespaces: ["*"]\n');
  const service = await startService({ databaseUrl: `file:${join(dir, 'hostile.db')}`, kubeconfig, env: { API_TOKENS_FILE: tokens, AUTHZ_POLICY_FILE: policy } });
  try {
    // Serialized once: the bench process's own JSON work must not delay its probes.
    const body = JSON.stringify({ name: 'big', namespace: NS, modelConfig: 'm', toolset: Array.from({ length: 100_000 }, () => 'x') });
    const oversized = () =>
      fetch(`${service.base}/api/v1/agents`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${NOBODY}` }, body }).then(async (res) => {
        await res.arrayBuffer();
        return res.status;
      });
    await Promise.all(Array.from({ length: 20 }, oversized)); // warm-up round, not counted
    const ROUNDS_OF_20 = Math.max(1, SCALE * 5);
    log(`hostile: /healthz, sampled from a process of its own, while 20 oversized requests from a principal granted nothing arrive (${ROUNDS_OF_20} rounds)`);
    // The probe runs in its own process (as in the load section): this process's serialization and
    // sending of 20 × 400 KB bodies must not count as the service's stall.
    const sampler = spawn(process.execPath, ['--input-type=module', '-e', HEALTH_SAMPLER, `${service.base}/healthz`], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    sampler.stdout.on('data', (chunk) => (out += chunk));
    const samplerDone = once(sampler, 'exit');
    await sleep(300);
    const statuses = {};
    for (let round = 0; round < ROUNDS_OF_20; round++) {
      await Promise.all(
        Array.from({ length: 20 }, () =>
          oversized().then((status) => {
            statuses[status] = (statuses[status] ?? 0) + 1;
          }),
        ),
      );
    }
    sampler.kill('SIGTERM');
    await samplerDone;
    const latencies = JSON.parse(out || '[]').filter((ms) => ms >= 0);
    const sorted = [...latencies].sort((x, y) => x - y);
    const p99 = sorted[Math.min(sorted.length - 1, Math.floor(0.99 * sorted.length))];
    figure({
      id: 'healthz_p99_under_hostile_ms',
      section: 'hostile',
      label: `/healthz p99 while 20 oversized requests (no grant) arrive (${latencies.length} probes; answers ${Object.entries(statuses).map(([s, n]) => `${n}×${s}`).join(', ')})`,
      value: p99,
      a: { ...summary(latencies), p99 },
      unit: 'ms',
      target: '≤ 100 ms',
      met: p99 <= 100,
    });
    console.error(`[bench] hostile: /healthz p99 ${p99.toFixed(1)} ms (median ${summary(latencies).median.toFixed(1)} ms, max ${sorted.at(-1).toFixed(1)} ms, ${latencies.length} probes); answers ${JSON.stringify(statuses)}`);
  } finally {
    await service.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// The table

function printAll() {
  printScale(results.scale);
  printRollout(results.rollout);
  const sections = [...new Set(results.figures.map((f) => f.section))].filter((section) => section !== 'scale');
  for (const section of sections) {
    const rows = results.figures
      .filter((f) => f.section === section)
      .map((f) => {
        if (f.counts) {
          const statuses = Object.entries(f.counts).map(([s, n]) => `${n}×${s} ${fmt(f.byStatus[s])}`).join(', ');
          return { figure: f.label, a: statuses, b: typeof f.applied === 'string' ? f.applied : `applied ${f.applied}`, target: f.target, met: f.met };
        }
        const ratio = f.ratio === undefined ? '' : `${f.ratio.toFixed(2)}× (${f.ratioOf})`;
        return { figure: f.label, a: fmt(f.a ?? f.value, f.unit), b: fmt(f.b, f.unit), ratio, rounds: roundsOf(f), target: f.target ?? '', met: f.met };
      });
    printTable(`== ${section}`, rows);
  }
  const targeted = results.figures.filter((f) => f.target);
  printTable(
    '== targets (issues 8, 30): every figure that has one',
    targeted.map((f) => ({
      figure: `${f.section}: ${f.label}`,
      a: f.counts ? Object.entries(f.counts).map(([s, n]) => `${n}×${s}`).join(', ') : f.ratio === undefined ? fmt(f.value ?? f.a.median, f.unit) : `${f.ratio.toFixed(2)}× (${f.ratioOf})`,
      b: f.floor ? `${f.floor.ratio.toFixed(2)}× (${f.floor.ratioOf})` : '',
      rounds: roundsOf(f),
      target: f.target,
      met: f.met,
    })),
    ['figure', 'measured', 'floor', '', 'per round (p25–p75)', 'target', ''],
  );
  console.log(`\n${targeted.filter((f) => f.met).length} of ${targeted.length} targets met`);
  for (const f of targeted.filter((t) => t.floor && !t.met && (t.ratioOf === 'B/A' ? t.floor.ratio < t.limit : t.floor.ratio > t.limit))) {
    console.log(`${f.section}: ${f.label}: its target (${f.target}) lies beyond its floor (${f.floor.ratio.toFixed(2)}×), what a server doing none of the service's work measures here`);
  }
}

/** The ratio round by round, as the table prints it: median (p25–p75). */
function roundsOf(f) {
  return f.perRound ? `${f.perRound.median.toFixed(2)}× (${f.perRound.p25.toFixed(2)}–${f.perRound.p75.toFixed(2)})` : '';
}

/**
 * Writes bench/results.json. A run of some sections (BENCH_ONLY) replaces only theirs: the figures
 * of the sections it did not run, and their top-level entries (`scale`, `rollout`), stay as the
 * file held them, with the meta of the run that measured them; this run's meta goes to `partialRuns`.
 */
function save() {
  results.meta.finishedAt = new Date().toISOString();
  const file = join(ROOT, 'bench', 'results.json');
  let saved = results;
  if (ONLY && existsSync(file)) {
    let previous = null;
    try {
      previous = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      log(`bench/results.json is not JSON (${error.message}): writing this run's figures alone`);
    }
    if (previous) {
      const ran = (section) => ONLY.includes(section.split(' ')[0]);
      const { meta, figures, error, ...entries } = results;
      saved = {
        ...previous,
        ...entries,
        figures: [...(previous.figures ?? []).filter((f) => !ran(f.section)), ...figures],
        partialRuns: [...(previous.partialRuns ?? []).filter((r) => String(r.only) !== String(ONLY)), { ...meta, ...(error ? { error } : {}) }],
      };
    }
  }
  writeFileSync(file, JSON.stringify(saved, null, 2) + '\n');
}

async function cleanup() {
  while (cleanups.length) await cleanups.pop()().catch((error) => log(`cleanup: ${error.message}`));
  rmSync(dir, { recursive: true, force: true });
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    log(`${signal}: stopping what this run started`);
    void cleanup().finally(() => process.exit(130));
  });
}

try {
  if (!existsSync(HELM_BIN)) throw new Error(`no helm at ${HELM_BIN}: run npm install (scripts/install-helm.mjs) or set HELM_BIN`);
  results.meta.helm = (await run(HELM_BIN, ['version', '--template', '{{.Version}}'])).stdout.trim();
  results.meta.commit = (await run('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD']).catch(() => ({ stdout: 'unknown' }))).stdout.trim();
  const needsCluster = ['writes', 'reads', 'mcp', 'race', 'load'].some(wanted);
  let kubeconfig = unreachableKubeconfig();
  if (needsCluster) {
    log('starting a local control plane (test/cluster/up.sh)');
    const cluster = await startControlPlane();
    cleanups.push(() => cluster.stop());
    await cluster.createNamespace(NS);
    kubeconfig = cluster.kubeconfig;
  }

  if (wanted('start')) await startup(kubeconfig);

  if (needsCluster) {
    const service = await startService({ databaseUrl: `file:${join(dir, 'writes.db')}`, kubeconfig });
    cleanups.push(() => service.stop());
    if (wanted('writes')) await writes(service, kubeconfig);
    if (wanted('reads') || wanted('mcp')) await reads(service, kubeconfig);
    if (wanted('mcp')) await mcp(service);
    if (wanted('race')) await race(service);
    if (wanted('load')) await load(service);
    await service.stop();
  }

  if (wanted('hostile')) await hostile(kubeconfig);

  if (wanted('scale')) await scale({ dir, log, figure, results });

  if (wanted('rollout')) await rolloutSection({ dir, log, figure, results });

  if (wanted('lists')) {
    await lists('sqlite', kubeconfig);
    if (process.env.BENCH_PG === '1') {
      log('starting PostgreSQL (test/pg/up.sh)');
      const pg = await startPostgres();
      cleanups.push(() => pg.stop());
      await lists('postgresql', kubeconfig, pg);
    }
  }
} catch (error) {
  results.error = String(error?.stack ?? error);
  process.exitCode = 1;
  log(`FAILED: ${results.error}`);
} finally {
  await cleanup();
  save();
  console.log(`\nagent-manager benchmark (${results.meta.helm ?? 'helm ?'}, node ${process.version}, ${results.meta.cpus} CPUs, commit ${results.meta.commit ?? '?'}): medians (min–max); A is agent-manager, B what it is compared with`);
  printAll();
  console.log(`\nfigures written to bench/results.json`);
}
