import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { resolveHelmBinary } from '@app/helm';
import { TestCluster } from '../support/cluster.js';
import { ensureBuilt } from '../support/service-process.js';
import { testEnv } from './mcp-support.js';
import { mcpClient } from '../support/mcp-client.js';

jest.setTimeout(180_000);

/**
 * Issue 30 item 3: a stdio session is one client's. With agents and their releases in the cluster
 * it starts no reconciler, no recovery sweep and no watches — no helm process at all unless its
 * client writes — and it ends by itself once the client closes stdin. (Its exit time is the
 * benchmark's.) Real helm behind a recording shim, the real API server.
 */
describe('agent-manager mcp with releases in the cluster', () => {
  let dir: string;
  let ns: string;
  let cluster: TestCluster;
  const log = () => readFileSync(join(dir, 'helm.log'), 'utf8').split('\n').filter(Boolean);

  function session(env: Record<string, string> = {}) {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(process.cwd(), 'bin', 'agent-manager.mjs'), 'mcp'],
      cwd: process.cwd(),
      env: testEnv(dir, {
        KUBECONFIG: cluster.kubeconfig,
        HELM_BIN: join(process.cwd(), 'test', 'support', 'recording-helm.sh'),
        RECORDING_HELM_REAL: process.env.HELM_BIN ?? resolveHelmBinary(),
        RECORDING_HELM_LOG: join(dir, 'helm.log'),
        LOG_LEVEL: 'warn',
        RECONCILE_AUTOMATIC: 'true',
        ...env,
      }) as Record<string, string>,
      stderr: 'pipe',
    });
    const client = mcpClient('stdio-releases');
    return { transport, client };
  }

  beforeAll(async () => {
    await ensureBuilt();
    cluster = TestCluster.fromEnv();
    ns = await cluster.freshNamespace('stdio');
    dir = mkdtempSync(join(tmpdir(), 'stdio-releases-'));
    writeFileSync(join(dir, 'helm.log'), '');
    // Two agents, written by a first session: the releases and the store rows the second one meets.
    const { transport, client } = session();
    await client.connect(transport);
    for (const name of ['first', 'second']) {
      const created = await client.callTool({ name: 'create_agent', arguments: { namespace: ns, name, modelConfig: 'default-model-config', toolset: ['preset:read-only'] } });
      expect(created.isError).toBeFalsy();
    }
    await client.close();
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the agents, runs no helm process of its own, and exits (code 0) when the client closes stdin', async () => {
    const before = log().length;
    expect(log().filter((line) => line.startsWith('install '))).toHaveLength(2);
    const { transport, client } = session();
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await client.connect(transport);
    const listed = await client.callTool({ name: 'list_agents', arguments: { namespace: ns } });
    expect((listed.structuredContent as { items: { name: string }[] }).items.map((a) => a.name).sort()).toEqual(['first', 'second']);

    const child = (transport as unknown as { _process: ReturnType<typeof spawn> })._process;
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    child.stdin!.end();
    expect(await exited).toEqual([0, null]);
    await client.close();
    // No `helm list`, `status` or `history`: the session neither swept nor reconciled (a `version` probe is not a read of the cluster).
    expect(log().slice(before).filter((line) => !line.startsWith('version '))).toEqual([]);
    expect(stderr).not.toMatch(/reconciler|resync/);
  });
});
