// Not in the PostgreSQL pass: the store side of this (MCP sessions kept in the store, one session
// served by two replicas, one killed) is mcp-replicas.e2e-spec.ts's, on PostgreSQL too; what this suite
// adds, the real writes, are helm's and the API server's.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { TestCluster } from '../support/cluster.js';
import { startRoundRobinProxy, type RoundRobinProxy } from '../support/round-robin-proxy.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { freshDatabaseUrl, type FreshDatabase } from '../support/test-app.js';
import { call, connect } from './mcp-support.js';

// Two service processes start and run helm against the API server on 2 busy cores.
jest.setTimeout(300_000);

/**
 * The real writes of one MCP session spread over two replicas behind a round-robin balancer (no
 * session affinity), on one store and the test API server; one replica is killed in between.
 */
describe('MCP writes across replicas against a real API server', () => {
  let cluster: TestCluster;
  let db: FreshDatabase;
  let ns: string;
  const replicas: ServiceProcess[] = [];
  let proxy: RoundRobinProxy;

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    ns = await cluster.freshNamespace('replicas');
    db = await freshDatabaseUrl();
    const env = { DATABASE_URL: db.url, KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '60', RECONCILE_AUTOMATIC: 'false' };
    replicas.push(await startServiceProcess(env));
    replicas.push(await startServiceProcess(env));
    proxy = await startRoundRobinProxy(replicas.map((r) => r.url));
  });

  afterAll(async () => {
    await proxy?.close();
    for (const r of replicas) if (r.child.exitCode === null && r.child.signalCode === null) await r.kill();
    await db?.drop();
  });

  it('creates, reads and deletes an agent in one session whose requests alternate, one replica killed in between', async () => {
    const client = await connect(proxy.url);
    const args = { namespace: ns, name: 'roaming' };
    const created = await call(client, 'create_agent', { ...args, modelConfig: 'default-model-config', toolset: ['preset:read-only'] });
    expect(created.isError).toBeFalsy();
    expect(await cluster.agent(ns, 'roaming')).not.toBeNull();
    const read = await call(client, 'get_agent', args);
    expect(read.structuredContent).toMatchObject({ name: 'roaming', namespace: ns, toolset: ['preset:read-only'] });
    expect(new Set(proxy.served.filter((s) => s.method === 'POST').map((s) => s.backend))).toEqual(new Set([0, 1]));

    await replicas[0].kill();
    const session = (client.transport as StreamableHTTPClientTransport).sessionId;
    expect((await call(client, 'get_agent_status', args)).isError).toBeFalsy();
    const deleted = await call(client, 'delete_agent', args);
    expect(deleted.isError).toBeFalsy();
    expect(await cluster.agent(ns, 'roaming')).toBeNull();
    expect((client.transport as StreamableHTTPClientTransport).sessionId).toBe(session);
    await client.close();
  });
});
