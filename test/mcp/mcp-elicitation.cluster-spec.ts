import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { TestCluster } from '../support/cluster.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { askingClient, call, connect } from './mcp-support.js';

// helm installs and uninstalls against the test API server on 2 busy cores.
jest.setTimeout(300_000);

/** The person at an eliciting client decides a real delete: accepted, the release is gone; declined, it stays. */
describe('MCP elicitation against a real API server', () => {
  let cluster: TestCluster;
  let t: TestApp;
  let ns: string;
  let plain: Client;

  const asking = async (answer: ElicitResult) => {
    const asked: ElicitRequest['params'][] = [];
    const client = askingClient(answer, asked);
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    return { client, asked };
  };

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    ns = await cluster.freshNamespace('elicit');
    t = await startTestApp({ KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '60', RECONCILE_AUTOMATIC: 'false' });
    plain = await connect(t.url, '?audit');
    for (const name of ['declined', 'accepted']) {
      const created = await call(plain, 'create_agent', { namespace: ns, name, modelConfig: 'default-model-config', toolset: ['preset:read-only'] });
      expect(created.isError).toBeFalsy();
    }
  });

  afterAll(async () => {
    await plain?.close();
    await t?.close();
  });

  it('keeps the agent on the cluster when the person declines', async () => {
    const { client, asked } = await asking({ action: 'decline' });
    try {
      const result = await call(client, 'delete_agent', { namespace: ns, name: 'declined' });
      expect(result.isError).toBe(true);
      expect(asked).toHaveLength(1);
    } finally {
      await client.close();
    }
    expect(await cluster.agent(ns, 'declined')).not.toBeNull();
  });

  it('deletes the agent when the person accepts', async () => {
    const { client, asked } = await asking({ action: 'accept', content: { confirm: true } });
    try {
      const result = await call(client, 'delete_agent', { namespace: ns, name: 'accepted' });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ dryRun: false, releaseRemoved: true, deleted: { state: 'deleted' } });
      expect(asked[0].message).toContain(`uninstalls the helm release of agent ${ns}/accepted`);
    } finally {
      await client.close();
    }
    expect(await cluster.agent(ns, 'accepted')).toBeNull();
  });

  it("names each write's journal entry in its answer, which get_operation reads back", async () => {
    const created = await call(plain, 'create_agent', { namespace: ns, name: 'tracked', modelConfig: 'default-model-config', toolset: ['preset:read-only'] });
    const id = (created.structuredContent as { agent: { lastOperation: { id: string } } }).agent.lastOperation.id;
    const entry = await call(plain, 'get_operation', { id });
    expect(entry.structuredContent).toMatchObject({ id, operation: 'create_agent', namespace: ns, name: 'tracked', outcome: 'succeeded' });
    expect((entry.structuredContent as { finishedAt: string | null }).finishedAt).not.toBeNull();
  });
});
