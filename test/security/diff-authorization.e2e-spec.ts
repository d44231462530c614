import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { sha256Hex } from '@app/auth';
import { AgentsRepository } from '@app/agents';
import { call, startTestApp, type TestApp } from '../support/test-app.js';
import { bearer, connectAs } from '../auth/auth-support.js';
import { call as callTool, seedAgent, text } from '../mcp/mcp-support.js';

jest.setTimeout(60_000);

/**
 * diff_agent_revisions is authorized as its own operation on the agent's namespace, like
 * list_agent_revisions (issue 28 item 1): a grant of one is not a grant of the other, on both doors.
 */
const ALICE = 'am_alice_7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d';
const BOB = 'am_bob_2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e';
const POLICY = `
roles:
  differ: [list_agent_revisions, diff_agent_revisions]
  lister: [list_agent_revisions]
bindings:
  - role: differ
    subjects: ["token:alice"]
    namespaces: ["team-a"]
  - role: lister
    subjects: ["token:bob"]
    namespaces: ["team-a"]
`;

describe('who may diff revisions', () => {
  let t: TestApp;
  let dir: string;

  /** Two revisions of an agent, recorded as if they had been applied (no cluster needed: diffs between revisions only run helm template). */
  const seedTwoRevisions = async (namespace: string) => {
    await seedAgent(t.app, namespace, 'helper', ['preset:read-only']);
    const repository = t.app.get(AgentsRepository);
    const agent = (await repository.findActive(namespace, 'helper'))!;
    const operation = await repository.startOperation({ id: randomUUID(), kind: 'update', namespace, name: 'helper', agentId: agent.id, request: {}, actor: 'seed', owner: 'seed' });
    await repository.recordChange(agent, { spec: { ...agent.spec, systemMessage: 'second' }, values: { ...agent.values, systemMessage: 'second' }, helmRevision: 2, kind: 'update', actor: 'seed', operationId: operation.id });
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'diff-authz-e2e-'));
    writeFileSync(join(dir, 'tokens.yaml'), `- name: alice\n  sha256: ${sha256Hex(ALICE)}\n- name: bob\n  sha256: ${sha256Hex(BOB)}\n`);
    writeFileSync(join(dir, 'policy.yaml'), POLICY);
    t = await startTestApp({ API_TOKENS_FILE: join(dir, 'tokens.yaml'), AUTHZ_POLICY_FILE: join(dir, 'policy.yaml'), MCP_ALLOWED_HOSTS: '127.0.0.1,localhost' });
    await seedTwoRevisions('team-a');
    await seedTwoRevisions('team-b');
  });

  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const diff = (namespace: string, token: string) => call(t.url, 'GET', `/api/v1/agents/${namespace}/helper/revisions/diff?from=1&to=2`, undefined, bearer(token));

  it('answers a caller granted diff_agent_revisions in the namespace, and refuses it elsewhere', async () => {
    const ok = await diff('team-a', ALICE);
    expect(ok.status).toBe(200);
    expect(ok.body.fields).toEqual([{ path: 'systemMessage', after: 'second' }]);
    expect(ok.body.manifestDiff).toMatch(/^\+\s+systemMessage: "second"$/m);
    expect((await diff('team-b', ALICE)).status).toBe(403);
  });

  it('refuses a caller who may only list revisions: 403 on REST; over MCP the tool is not offered and a call is tool_not_allowed', async () => {
    expect((await call(t.url, 'GET', '/api/v1/agents/team-a/helper/revisions', undefined, bearer(BOB))).status).toBe(200);
    const refused = await diff('team-a', BOB);
    expect(refused.status).toBe(403);
    const { client } = await connectAs(t.url, BOB, '?revisions');
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('diff_agent_revisions');
      const tool = await callTool(client, 'diff_agent_revisions', { namespace: 'team-a', name: 'helper', from: 1, to: 2 });
      expect(tool.isError).toBe(true);
      expect(text(tool)).toContain('tool_not_allowed');
    } finally {
      await client.close();
    }
  });
});
