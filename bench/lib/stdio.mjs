// One `agent-manager mcp` session over stdio, as an MCP client that spawns it sees it: used by
// stdio-start.bench.mjs (no cluster) and the scale section (a seeded store and cluster).
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval } from 'node:timers';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ROOT } from './service.mjs';

/** Spawn → first tools/list answer, then stdin closed → process exit (ms), with `env` as the whole environment. */
export async function stdioRound(env, command = process.execPath, args = ['bin/agent-manager.mjs', 'mcp']) {
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
