import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ResponseMessage } from '@modelcontextprotocol/sdk/shared/responseMessage.js';
import { CallToolResultSchema, LATEST_PROTOCOL_VERSION, type CallToolResult, type Result, type Task } from '@modelcontextprotocol/sdk/types.js';
import { TestCluster } from '../support/cluster.js';
import { call as rest, startTestApp, type TestApp } from '../support/test-app.js';
import { askingClient, call } from './mcp-support.js';
import { mcpClient } from '../support/mcp-client.js';

// helm installs against the test API server on 2 busy cores.
jest.setTimeout(300_000);

/**
 * MCP tasks (docs/mcp.md): a write tool called with `task` answers a task whose id is the journal
 * entry its write started; the client polls it (tasks/get, tasks/result) on any replica, the SDK's
 * own client doing it; a call without `task` is answered as always.
 */
describe('MCP tasks against a real API server', () => {
  let cluster: TestCluster;
  let t: TestApp;
  /** A second replica on the same store: it answers tasks/get of a task the first one runs. */
  let t2: TestApp;
  let ns: string;
  let client: Client;
  let transport: StreamableHTTPClientTransport;

  /** What the SDK's experimental task API yields for one call, in order. */
  const stream = async (name: string, args: Record<string, unknown>, using = client) => {
    const messages: ResponseMessage<CallToolResult>[] = [];
    for await (const message of using.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema)) messages.push(message);
    return messages;
  };
  const created = (messages: ResponseMessage<Result>[]) => (messages.find((m) => m.type === 'taskCreated') as { task: Task } | undefined)?.task;
  const finalResult = (messages: ResponseMessage<CallToolResult>[]) => (messages.find((m) => m.type === 'result') as { result: CallToolResult } | undefined)?.result;

  /** One JSON-RPC request of the client's session, sent to `replica` by hand (the SDK's client speaks to one URL). */
  const raw = async (replica: TestApp, method: string, params: Record<string, unknown>) => {
    const res = await fetch(`${replica.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': transport.sessionId!, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return (await res.json()) as { result?: Record<string, unknown>; error?: { message: string } };
  };

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    ns = await cluster.freshNamespace('tasks');
    const env = { KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '60', RECONCILE_AUTOMATIC: 'false' };
    t = await startTestApp({ ...env, REPLICA_ID: 'replica-a' });
    t2 = await startTestApp({ ...env, REPLICA_ID: 'replica-b', DATABASE_URL: t.databaseUrl }, t.clock);
    client = mcpClient('tasks-e2e');
    transport = new StreamableHTTPClientTransport(new URL(`${t.url}/mcp?audit&revisions&changes`));
    await client.connect(transport);
  });

  afterAll(async () => {
    await client?.close();
    await t2?.close();
    await t?.close();
  });

  it('declares tasks, and marks the agent writes and approve_change (only those) as runnable as tasks', async () => {
    expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    const tasked = tools.filter((tool) => tool.execution?.taskSupport === 'optional').map((tool) => tool.name);
    expect(tasked.sort()).toEqual(['approve_change', 'create_agent', 'delete_agent', 'rollback_agent', 'update_agent']);
  });

  it('runs create_agent as a task the SDK client polls: its id is the journal entry, its result the answer', async () => {
    await client.listTools(); // the SDK's client asks for a task for the tools tools/list marked
    const messages = await stream('create_agent', { namespace: ns, name: 'tasked', modelConfig: 'default-model-config', toolset: ['preset:read-only'] });
    const task = created(messages)!;
    expect(task).toMatchObject({ status: 'working', ttl: 3_600_000, pollInterval: 1000 });
    const result = finalResult(messages)!;
    expect(result.isError).toBeFalsy();
    const answer = result.structuredContent as { agent: { version: number; lastOperation: { id: string } } };
    expect(answer.agent.lastOperation.id).toBe(task.taskId);
    expect((await cluster.agent(ns, 'tasked'))).not.toBeNull();
    // the journal entry is the task: the REST door and get_operation say the same
    const entry = await rest(t.url, 'GET', `/api/v1/operations/${task.taskId}`);
    expect([entry.status, entry.body.operation, entry.body.outcome]).toEqual([200, 'create_agent', 'succeeded']);
  });

  it('answers tasks/get and tasks/result of the session on the other replica, and lists the session\'s tasks', async () => {
    const messages = await stream('update_agent', { namespace: ns, name: 'tasked', description: 'as a task' });
    const { taskId } = created(messages)!;
    const got = await raw(t2, 'tasks/get', { taskId });
    expect(got.result).toMatchObject({ taskId, status: 'completed' });
    const payload = await raw(t2, 'tasks/result', { taskId });
    expect(payload.result).toMatchObject({ structuredContent: { changed: true, agent: { lastOperation: { id: taskId } } } });
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.map((task) => task.taskId)).toContain(taskId);
  });

  it('does not show a session\'s task to another session', async () => {
    const { taskId } = created(await stream('update_agent', { namespace: ns, name: 'tasked', description: 'mine only' }))!;
    const other = mcpClient('tasks-other');
    await other.connect(new StreamableHTTPClientTransport(new URL(`${t2.url}/mcp`)));
    try {
      await expect(other.experimental.tasks.getTask(taskId)).rejects.toThrow(/not found/i);
      expect((await other.experimental.tasks.listTasks()).tasks).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('ends a task whose write was refused before it journaled anything failed, with the error as its result', async () => {
    const messages = await stream('update_agent', { namespace: ns, name: 'never-created', description: 'x' });
    const task = created(messages)!;
    // no journal entry: the task has an id of its own
    expect((await rest(t.url, 'GET', `/api/v1/operations/${task.taskId}`)).status).toBe(404);
    expect(messages.at(-1)).toMatchObject({ type: 'error' });
    const result = (await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)) as CallToolResult;
    expect(result).toMatchObject({ isError: true, structuredContent: { error: { code: 'not_found' } } });
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('failed');
  });

  it('asks an eliciting client\'s person before a destructive task starts, on the call\'s own stream', async () => {
    const asked: { message: string }[] = [];
    const asking = askingClient({ action: 'accept', content: { confirm: true } }, asked as never);
    await asking.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    try {
      await asking.listTools();
      const messages = await stream('delete_agent', { namespace: ns, name: 'tasked' }, asking);
      expect(asked).toHaveLength(1);
      expect(finalResult(messages)?.structuredContent).toMatchObject({ releaseRemoved: true, deleted: { state: 'deleted' } });
    } finally {
      await asking.close();
    }
  });

  it('answers a call that asks for no task as always', async () => {
    const result = await call(client, 'create_agent', { namespace: ns, name: 'plain', modelConfig: 'default-model-config', toolset: ['preset:read-only'] });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ agent: { name: 'plain', version: 1 } });
  });
});
