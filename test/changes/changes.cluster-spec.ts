// npm test: also on PostgreSQL — two replicas approving the same change at the same moment: the conditional UPDATE lets one apply
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { KubeConfig, RbacAuthorizationV1Api, type V1PolicyRule } from '@kubernetes/client-node';
import { ChangesService } from '@app/agents';
import { HelmClient, resolveHelmBinary } from '@app/helm';
import { CallToolResultSchema, LoggingMessageNotificationSchema, type CallToolResult, type LoggingMessageNotification, type Task } from '@modelcontextprotocol/sdk/types.js';
import { bearer, connectAs } from '../auth/auth-support.js';
import { TestCluster } from '../support/cluster.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';
import { approvalEnv, TOKENS } from './support.js';

/**
 * The applying approval (docs/approvals.md): the last approval runs the proposer's write through
 * the one write runner, as the proposer (under impersonation: the cluster binds the LLM agent's
 * group, not the approver), journaled with both; two approvals at once apply it once.
 */
// helm runs a few times per step on 2 shared cores.
jest.setTimeout(240_000);

const AGENT_WRITER: V1PolicyRule[] = [
  { apiGroups: ['kagent.dev'], resources: ['agents'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
  { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
];

describe('an approved change applies once, as the proposer', () => {
  let t: TestApp;
  /** A second replica on the same store. */
  let t2: TestApp;
  let cluster: TestCluster;
  let helm: HelmClient;
  let dir: string;
  let ns: string;
  const agent = { name: 'reviewed', modelConfig: 'default-model-config', toolset: ['preset:none'] };

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    const config = new KubeConfig();
    config.loadFromFile(cluster.kubeconfig);
    const rbac = config.makeApiClient(RbacAuthorizationV1Api);
    helm = new HelmClient({ bin: process.env.HELM_BIN ?? resolveHelmBinary(), kubeconfig: cluster.kubeconfig, timeoutSeconds: 60 });
    ns = await cluster.freshNamespace('prod-app');
    await rbac.createNamespacedRole({ namespace: ns, body: { metadata: { name: 'agent-writer' }, rules: AGENT_WRITER } });
    // The LLM agent's group and the admin may write agents here; the approvers may not: the apply must act as the proposer.
    const subjects = [
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'llm-agents' },
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'token:ci-platform' },
    ];
    await rbac.createNamespacedRoleBinding({ namespace: ns, body: { metadata: { name: 'agent-writers' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'agent-writer' }, subjects } });
    dir = mkdtempSync(join(tmpdir(), 'changes-cluster-'));
    const env = { ...approvalEnv(dir), KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '60', RECONCILE_AUTOMATIC: 'false' };
    t = await startTestApp({ ...env, REPLICA_ID: 'replica-a' });
    // one clock for both replicas: what a test moves, both see
    t2 = await startTestApp({ ...env, REPLICA_ID: 'replica-b', DATABASE_URL: t.databaseUrl }, t.clock);
    const created = await call(t.url, 'POST', '/api/v1/agents', { ...agent, namespace: ns }, bearer(TOKENS.admin));
    expect(created.status).toBe(201);
  });

  afterAll(async () => {
    await t2?.close();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const revision = async () => (await helm.status({ namespace: ns, name: agent.name }))?.revision;

  it('proposes without touching the cluster; the approval applies it as the proposer, journaled with both', async () => {
    const proposed = await call(t.url, 'PATCH', `/api/v1/agents/${ns}/${agent.name}`, { description: 'approved change' }, bearer(TOKENS.llm));
    expect(proposed.status).toBe(202);
    expect(await revision()).toBe(1);

    const approved = await call(t.url, 'POST', `/api/v1/changes/${proposed.body.change.id}/approve`, { comment: 'ok' }, bearer(TOKENS.alice));
    expect([approved.status, approved.body.message]).toEqual([200, expect.stringContaining('applied as token:llm')]);
    expect(approved.body).toMatchObject({ state: 'applied', approvals: [expect.objectContaining({ subject: 'token:alice' })] });
    expect(await revision()).toBe(2);
    expect((await cluster.agent(ns, agent.name)).spec.description).toBe('approved change');

    const read = await call(t.url, 'GET', `/api/v1/agents/${ns}/${agent.name}`, undefined, bearer(TOKENS.admin));
    expect([read.body.version, read.body.updatedBy]).toEqual([2, 'token:llm']);
    const journal = await call(t.url, 'GET', `/api/v1/operations?namespace=${ns}`, undefined, bearer(TOKENS.admin));
    const entries = journal.body.items.map((op: { operation: string; outcome: string; subject: string; actorNote: string | null }) => [op.operation, op.outcome, op.subject, op.actorNote]);
    expect(entries.slice(0, 3)).toEqual([
      ['update_agent', 'succeeded', 'token:llm', `change ${proposed.body.change.id} approved by token:alice`],
      ['approve_change', 'succeeded', 'token:alice', expect.stringContaining('approved by token:alice (1 of 1)')],
      ['update_agent', 'proposed', 'token:llm', expect.stringContaining(`change ${proposed.body.change.id}: proposed`)],
    ]);
    expect(approved.body.operationId).toBe(journal.body.items[0].id);
  });

  it('applies once when two approvers approve at the same moment on two replicas', async () => {
    const proposed = await call(t.url, 'PATCH', `/api/v1/agents/${ns}/${agent.name}`, { description: 'raced' }, bearer(TOKENS.llm));
    const before = await revision();
    const answers = await Promise.all(
      [[t, TOKENS.alice], [t2, TOKENS.bob]].map(([replica, token]) => call((replica as TestApp).url, 'POST', `/api/v1/changes/${proposed.body.change.id}/approve`, {}, bearer(token as string))),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(answers.find((a) => a.status === 200)!.body.state).toBe('applied');
    expect(await revision()).toBe(before! + 1);
  });

  it("tells the proposer's MCP client, on its stream, that its change was applied on the other replica, with the operation id", async () => {
    const { client } = await connectAs(t.url, TOKENS.llm, '?toolsets=agents,changes,audit');
    const notices: LoggingMessageNotification['params'][] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void notices.push(notification.params));
    try {
      const proposed = await client.callTool({ name: 'update_agent', arguments: { namespace: ns, name: agent.name, description: 'told when applied' } });
      const id = (proposed.structuredContent as { change: { id: string } }).change.id;
      const approved = await call(t2.url, 'POST', `/api/v1/changes/${id}/approve`, {}, bearer(TOKENS.bob));
      expect(approved.body.state).toBe('applied');
      let notice: LoggingMessageNotification['params'] | undefined;
      while (!(notice = notices.find((n) => (n.data as { change?: string }).change === id))) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(notice).toMatchObject({
        level: 'notice',
        logger: 'agent-manager/changes',
        data: { state: 'applied', operation: 'update_agent', agent: `${ns}/${agent.name}`, decidedBy: ['token:bob'], operationId: approved.body.operationId },
      });
      const operation = await client.callTool({ name: 'get_operation', arguments: { id: approved.body.operationId } });
      expect(operation.structuredContent).toMatchObject({ id: approved.body.operationId, outcome: 'succeeded' });
    } finally {
      await client.close();
    }
  });

  it('finishes once a change whose replica died after its write landed: the sweeps re-run it under the change id and the journal answers', async () => {
    const proposed = await call(t.url, 'PATCH', `/api/v1/agents/${ns}/${agent.name}`, { description: 'landed before the crash' }, bearer(TOKENS.llm));
    const id = proposed.body.change.id as string;
    const approved = await call(t.url, 'POST', `/api/v1/changes/${id}/approve`, {}, bearer(TOKENS.alice));
    expect(approved.body.state).toBe('applied');
    const landed = await revision();
    // the replica died between helm's write (recorded in the journal) and recording the change: it stays applying
    await t.store.client.change.update({ where: { id }, data: { state: 'applying', operationId: null, message: null, updatedAt: await t.store.now() } });
    t.clock.advance(60_000);
    await Promise.all([t.app.get(ChangesService).sweep(), t2.app.get(ChangesService).sweep()]);
    // read from the store, not through get_change (a read would resume it too): the sweeps finished it
    const finished = await t.store.client.change.findUniqueOrThrow({ where: { id } });
    expect([finished.state, finished.operationId]).toEqual(['applied', approved.body.operationId]);
    expect(await revision()).toBe(landed);
    const journal = await call(t.url, 'GET', `/api/v1/operations?namespace=${ns}&operation=update_agent`, undefined, bearer(TOKENS.admin));
    const writes = journal.body.items.filter((op: { actorNote: string | null }) => op.actorNote?.startsWith(`change ${id} approved`));
    expect(writes.map((op: { id: string; outcome: string }) => [op.id, op.outcome])).toEqual([[approved.body.operationId, 'succeeded']]);
  });

  it('runs approve_change as an MCP task when the approver\'s client asks: its id is the journal entry of the write it applies', async () => {
    const proposed = await call(t.url, 'PATCH', `/api/v1/agents/${ns}/${agent.name}`, { description: 'approved as a task' }, bearer(TOKENS.llm));
    const { client } = await connectAs(t.url, TOKENS.alice, '?toolsets=changes');
    try {
      await client.listTools(); // the SDK's client asks for a task for the tools tools/list marked
      let task: Task | undefined;
      let result: CallToolResult | undefined;
      for await (const message of client.experimental.tasks.callToolStream({ name: 'approve_change', arguments: { id: proposed.body.change.id } }, CallToolResultSchema)) {
        if (message.type === 'taskCreated') task = message.task;
        if (message.type === 'result') result = message.result as CallToolResult;
      }
      expect(result?.structuredContent).toMatchObject({ state: 'applied', operationId: task!.taskId });
      const entry = await call(t.url, 'GET', `/api/v1/operations/${task!.taskId}`, undefined, bearer(TOKENS.admin));
      expect([entry.body.operation, entry.body.outcome, entry.body.subject]).toEqual(['update_agent', 'succeeded', 'token:llm']);
    } finally {
      await client.close();
    }
  });
});
