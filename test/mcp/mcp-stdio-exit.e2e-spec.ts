import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ensureBuilt } from '../support/service-process.js';
import { testEnv } from './mcp-support.js';
import { mcpClient } from '../support/mcp-client.js';

jest.setTimeout(120_000);

/**
 * A stdio session (issue 30 item 3) is one client's: it never runs the reconciler's automatic pass
 * (that is the serving replicas' job; it held a session's exit while it reconciled the cluster), and
 * it ends by itself once its client closes stdin. The exit time is in the benchmark (bench/stdio-start.bench.mjs).
 */
describe('agent-manager mcp, the session over stdio', () => {
  let dir: string;

  beforeAll(async () => {
    await ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'stdio-exit-'));
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs no automatic reconcile pass, and exits on its own (code 0) when the client closes stdin', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(process.cwd(), 'bin', 'agent-manager.mjs'), 'mcp'],
      cwd: process.cwd(),
      // RECONCILE_AUTOMATIC as the service's default (true); warnings on stderr.
      env: testEnv(dir, { LOG_LEVEL: 'warn', RECONCILE_AUTOMATIC: 'true' }) as Record<string, string>,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = mcpClient('stdio-exit');
    await client.connect(transport);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    // The cluster probe at start says the cluster is unreachable; anything running in the background would have spoken by then too.
    while (!stderr.includes('the cluster is unreachable')) await sleep(100);
    await sleep(1000);

    const child = (transport as unknown as { _process: ReturnType<typeof spawn> })._process;
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    child.stdin!.end();
    // Exited by itself: the SDK's close would signal it (SIGTERM) only if it were still running.
    expect(await exited).toEqual([0, null]);
    await client.close();
    // Nothing in the background: no reconciler, no recovery sweep (their lines name them).
    expect(stderr).not.toMatch(/reconcil|resync|recovered operation|stays pending/);
  });
});
