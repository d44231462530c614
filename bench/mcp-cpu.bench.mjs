// `node bench/mcp-cpu.bench.mjs` (after `npm run build`): the service-side CPU of one MCP
// tools/call get_agent (the SDK client over Streamable HTTP) against its REST twin, and their
// interleaved wall-time medians. No cluster: the agent is seeded through the store layer and
// get_agent reads only the store. CPU is the service process's utime+stime from /proc over
// blocks of calls, which the other work on a shared machine disturbs less than wall time.
// MCP_CPU_ROUNDS (default 5) blocks of MCP_CPU_CALLS (default 300) calls per door.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { seedAgents } from './lib/seed.mjs';
import { startService } from './lib/service.mjs';
import { fmt, interleave, summary } from './lib/stats.mjs';

const ROUNDS = Number(process.env.MCP_CPU_ROUNDS ?? 5);
const CALLS = Number(process.env.MCP_CPU_CALLS ?? 300);
const PAIRS = Number(process.env.MCP_CPU_PAIRS ?? 200);
const [NS, NAME] = ['team-0', 'agent-00000']; // the first seeded agent

const dir = mkdtempSync(join(tmpdir(), 'agent-manager-mcp-cpu-'));
const kubeconfig = join(dir, 'unreachable.kubeconfig');
writeFileSync(
  kubeconfig,
  'apiVersion: v1\nkind: Config\nclusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]\n' +
    'users: [{name: none, user: {token: none}}]\ncontexts: [{name: none, context: {cluster: none, user: none}}]\ncurrent-context: none\n',
);
const databaseUrl = `file:${join(dir, 'mcp-cpu.db')}`;
await seedAgents(databaseUrl, { to: 1 });
const service = await startService({ databaseUrl, kubeconfig, env: process.env.MCP_CPU_ENV ? JSON.parse(process.env.MCP_CPU_ENV) : {} });
/** CPU time of the service's main (JavaScript) thread so far, in ms: without the GC helper threads. */
const mainCpuMs = () => {
  const stat = readFileSync(`/proc/${service.pid}/task/${service.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
};
/** A client per block of calls, as the cluster bench uses one for ~200 (the SDK client's fetch keeps an abort listener per call on one signal). */
let client;
const reconnect = async () => {
  await client?.close();
  client = new Client({ name: 'agent-manager-bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${service.base}/mcp`)));
};
try {
  await reconnect();
  const viaMcp = async () => {
    const result = await client.callTool({ name: 'get_agent', arguments: { namespace: NS, name: NAME } });
    if (result.isError) throw new Error(`get_agent over MCP failed: ${JSON.stringify(result.content)}`);
  };
  const viaRest = async () => {
    const res = await fetch(`${service.base}/api/v1/agents/${NS}/${NAME}`);
    await res.text();
    if (res.status !== 200) throw new Error(`GET answered ${res.status}`);
  };
  for (let i = 0; i < 100; i++) {
    await viaMcp();
    await viaRest();
  }
  const cpu = { mcp: [], rest: [] };
  const mainCpu = { mcp: [], rest: [] };
  const clientCpu = { mcp: [], rest: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const [door, call] of round % 2 ? [['rest', viaRest], ['mcp', viaMcp]] : [['mcp', viaMcp], ['rest', viaRest]]) {
      if (door === 'mcp') await reconnect();
      const before = service.cpuMs();
      const beforeMain = mainCpuMs();
      const own = process.cpuUsage();
      for (let i = 0; i < CALLS; i++) await call();
      cpu[door].push((service.cpuMs() - before) / CALLS);
      mainCpu[door].push((mainCpuMs() - beforeMain) / CALLS);
      const used = process.cpuUsage(own);
      clientCpu[door].push((used.user + used.system) / 1000 / CALLS);
    }
  }
  await reconnect();
  const [wallMcp, wallRest] = await interleave(PAIRS, [viaMcp, viaRest]);
  const m = summary(cpu.mcp);
  const r = summary(cpu.rest);
  console.log(`service CPU per call: MCP ${fmt(m)}, REST ${fmt(r)}: ${(m.median / r.median).toFixed(2)}×`);
  const [mm, mr] = [summary(mainCpu.mcp), summary(mainCpu.rest)];
  console.log(`service main-thread CPU per call: MCP ${fmt(mm)}, REST ${fmt(mr)}: ${(mm.median / mr.median).toFixed(2)}×`);
  const [cm, cr] = [summary(clientCpu.mcp), summary(clientCpu.rest)];
  console.log(`client CPU per call: MCP (SDK client) ${fmt(cm)}, REST (fetch) ${fmt(cr)}`);
  console.log(`wall p50 (interleaved, ${PAIRS} pairs): MCP ${fmt(wallMcp)}, REST ${fmt(wallRest)}: ${(wallMcp.median / wallRest.median).toFixed(2)}×`);
} finally {
  await client.close();
  await service.stop();
  rmSync(dir, { recursive: true, force: true });
}
