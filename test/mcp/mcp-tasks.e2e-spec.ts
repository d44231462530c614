// npm test: also on PostgreSQL — a session's tasks in the store, read by the replica that did not run them
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ResponseMessage } from '@modelcontextprotocol/sdk/shared/responseMessage.js';
import { CallToolResultSchema, type CallToolResult, type Task } from '@modelcontextprotocol/sdk/types.js';
import { seedAgent } from '../auth/auth-support.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { mcpClient } from '../support/mcp-client.js';

/**
 * MCP tasks without a cluster (docs/mcp.md): a write asked for as a task is answered with the task of
 * the journal entry it started; its helm run fails here (no cluster), which the task's result says.
 * A task whose replica stopped before storing the answer follows its journal entry. The happy path
 * against a real API server: test/mcp/mcp-tasks.cluster-spec.ts.
 */
let t: TestApp;
let client: Client;
let transport: StreamableHTTPClientTransport;

const stream = async (name: string, args: Record<string, unknown>) => {
  const messages: ResponseMessage<CallToolResult>[] = [];
  for await (const message of client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema)) messages.push(message);
  return messages;
};
const created = (messages: ResponseMessage<CallToolResult>[]) => (messages.find((m) => m.type === 'taskCreated') as { task: Task }).task;

/** The task as a replica that stopped before storing the answer leaves it: working, no result, its journal entry pending. */
async function leftRunning(taskId: string): Promise<void> {
  const row = await t.store.client.mcpAnswer.findFirstOrThrow({ where: { sessionId: transport.sessionId, requestId: `task:${taskId}` } });
  const { result: _result, ...unanswered } = JSON.parse(row.message) as Record<string, unknown>;
  await t.store.client.mcpAnswer.update({ where: { sessionId_requestId: { sessionId: row.sessionId, requestId: row.requestId } }, data: { message: JSON.stringify({ ...unanswered, status: 'working' }) } });
  await t.store.client.operation.update({ where: { id: taskId }, data: { state: 'pending', finishedAt: null } });
}

beforeAll(async () => {
  t = await startTestApp();
  await seedAgent(t.store, 'agents', 'seeded');
  client = mcpClient('tasks-e2e');
  transport = new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`));
  await client.connect(transport);
  await client.listTools(); // the SDK's client asks for a task for the tools tools/list marked
});

afterAll(async () => {
  await client?.close();
  await t?.close();
});

describe('MCP tasks', () => {
  it('answers a write asked for as a task with the task of its journal entry; the failed helm run is its result', async () => {
    const messages = await stream('update_agent', { namespace: 'agents', name: 'seeded', description: 'as a task' });
    const task = created(messages);
    const entry = await t.store.client.operation.findUnique({ where: { id: task.taskId } });
    expect([entry?.kind, entry?.namespace, entry?.name]).toEqual(['update', 'agents', 'seeded']);
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('failed');
    const result = (await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)) as CallToolResult;
    expect(result.isError).toBe(true);
  });

  it('follows the journal entry of a task whose replica stopped before storing the answer, once the entry is closed', async () => {
    const { taskId } = created(await stream('update_agent', { namespace: 'agents', name: 'seeded', description: 'left behind' }));
    await leftRunning(taskId);
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('working');
    // the recovery sweep closes the entry; the task follows it once the running replica's grace passed
    await t.store.client.operation.update({ where: { id: taskId }, data: { state: 'failed', finishedAt: await t.store.now(), errorMessage: 'helm did not apply it' } });
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('working');
    t.clock.advance(11_000);
    const task = await client.experimental.tasks.getTask(taskId);
    expect(task).toMatchObject({ status: 'failed', statusMessage: expect.stringContaining('helm did not apply it') });
    const result = (await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)) as CallToolResult;
    expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining('get_operation') }] });
  });

  it('refuses to cancel a running task, and a task for a tool that does not run as one', async () => {
    const { taskId } = created(await stream('update_agent', { namespace: 'agents', name: 'seeded', description: 'not cancelled' }));
    await leftRunning(taskId);
    await expect(client.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/a write is not cancelled once started/);
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('working');
    await expect(client.request({ method: 'tools/call', params: { name: 'list_agents', arguments: {}, task: {} } }, CallToolResultSchema)).rejects.toThrow(/not run as a task/);
  });
});
