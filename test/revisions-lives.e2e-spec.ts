// npm test: also on PostgreSQL — revisions and lives of agents deleted and created again
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { AgentsRepository } from '@app/agents';
import { call as callTool, connect, seedAgent, text } from './mcp/mcp-support.js';
import { call, startTestApp, type TestApp } from './support/test-app.js';

jest.setTimeout(60_000);

/**
 * History across lives (issue 11, item 7): the revisions of earlier, deleted agents of a name
 * stay readable after the name was created again — `?life=all` on REST, `life: "all"` on MCP.
 */
describe('revisions across the lives of a name', () => {
  let t: TestApp;
  let mcp: Client;
  const ns = 'agents';
  const name = 'reborn';
  const path = `/api/v1/agents/${ns}/${name}/revisions`;

  /** Records what the store holds after an update and a delete; no cluster is needed to read history. */
  const record = async (change: 'update' | 'delete', systemMessage?: string) => {
    const repository = t.app.get(AgentsRepository);
    const agent = (await repository.findActive(ns, name))!;
    const operation = await repository.startOperation({ id: randomUUID(), kind: change, namespace: ns, name, agentId: agent.id, request: {}, actor: 'seed', owner: 'seed' });
    if (change === 'delete') return repository.recordDelete(agent, operation.id, 'seed');
    const spec = { ...agent.spec, systemMessage };
    return repository.recordChange(agent, { spec, values: { ...agent.values, systemMessage: systemMessage! }, helmRevision: 2, kind: 'update', actor: 'seed', operationId: operation.id });
  };

  beforeAll(async () => {
    t = await startTestApp();
    await seedAgent(t.app, ns, name, ['preset:read-only']);
    await record('update', 'first life, second revision');
    await record('delete');
    await seedAgent(t.app, ns, name, ['preset:none']);
    mcp = await connect(t.url, '?revisions');
  });

  afterAll(async () => {
    await mcp?.close();
    await t?.close();
  });

  it('shows the current life by default, and lists the earlier life', async () => {
    const res = await call(t.url, 'GET', path);
    expect(res.status).toBe(200);
    expect(res.body.current).toBe(1);
    expect(res.body.items.map((r: { life: number; revision: number }) => [r.life, r.revision])).toEqual([[2, 1]]);
    expect(res.body.items[0].spec.toolset).toEqual(['preset:none']);
    expect(res.body.lives.map((l: { life: number; state: string; revisions: number }) => [l.life, l.state, l.revisions])).toEqual([
      [1, 'deleted', 2],
      [2, 'active', 1],
    ]);
    expect(res.body.lives[0].deletedAt).not.toBeNull();
  });

  it('shows every life with life=all, each revision marked with its life and agent', async () => {
    const res = await call(t.url, 'GET', `${path}?life=all`);
    expect(res.status).toBe(200);
    expect(res.body.items.map((r: { life: number; revision: number; spec: { toolset: string[] } }) => [r.life, r.revision, r.spec.toolset])).toEqual([
      [1, 1, ['preset:read-only']],
      [1, 2, ['preset:read-only']],
      [2, 1, ['preset:none']],
    ]);
    expect(res.body.items[1].spec.systemMessage).toBe('first life, second revision');
    expect(res.body.items[0].agentId).toBe(res.body.lives[0].agentId);
    expect(res.body.items[2].agentId).toBe(res.body.lives[1].agentId);
  });

  it('answers the same over MCP with life: "all", and refuses another life by name', async () => {
    const rest = await call(t.url, 'GET', `${path}?life=all`);
    const result = await callTool(mcp, 'list_agent_revisions', { namespace: ns, name, life: 'all' });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual(rest.body);
    const current = await callTool(mcp, 'list_agent_revisions', { namespace: ns, name });
    expect(current.structuredContent).toEqual((await call(t.url, 'GET', path)).body);

    const wrong = await callTool(mcp, 'list_agent_revisions', { namespace: ns, name, life: 'previous' });
    expect(wrong.isError).toBe(true);
    expect(text(wrong)).toContain('life must be one of current, all');
    const bad = await call(t.url, 'GET', `${path}?life=previous`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([{ path: 'life', message: 'life must be one of current, all' }]);
  });

  it('keeps the history readable with life=all once no agent of the name exists, and says so without it', async () => {
    await record('delete');
    const missing = await call(t.url, 'GET', path);
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toContain('life=all');
    const all = await call(t.url, 'GET', `${path}?life=all`);
    expect(all.status).toBe(200);
    expect(all.body.current).toBeNull();
    expect(all.body.items).toHaveLength(3);
    expect(all.body.lives.map((l: { state: string }) => l.state)).toEqual(['deleted', 'deleted']);
    expect((await call(t.url, 'GET', `/api/v1/agents/${ns}/never-was/revisions?life=all`)).status).toBe(404);
  });
});
