// npm test: also on PostgreSQL — helm's texts kept in operation rows, shown by role
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_TOKEN, authEnv, bearer, connectAs, seedAgent, VIEWER_TOKEN } from '../auth/auth-support.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';

/**
 * helm's own words (a kubeconfig path, an API server URL, an exec plugin's stderr) reach admins only:
 * in the error of a failed write, and in what the store keeps of it — an agent's lastOperation and
 * the journal — on every read afterwards. Others read the class of failure and the operation as reference.
 */
const POLICY = `
roles:
  editor: [get_info, list_agents, get_agent, get_agent_status, update_agent, list_operations, list_server_toolsets]
  admin: ["*"]
bindings:
  - role: admin
    subjects: ["token:ci-platform"]
    namespaces: ["*"]
  - role: editor
    subjects: ["token:viewer"]
    namespaces: ["team-a"]
`;
/** What the unreachable kubeconfig's failure names: the server (and, in the message, the kubeconfig path). */
const HELM_TEXT = '127.0.0.1:1';

jest.setTimeout(60_000);

let t: TestApp;
let dir: string;
let failed: { id: string; message: string };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'stored-errors-'));
  t = await startTestApp(authEnv(dir, undefined, POLICY));
  await seedAgent(t.store, 'team-a', 'helper');
  const res = await call(t.url, 'PATCH', '/api/v1/agents/team-a/helper', { systemMessage: 'new' }, bearer(VIEWER_TOKEN));
  expect(res.status).toBe(502);
  const agent = await call(t.url, 'GET', '/api/v1/agents/team-a/helper', undefined, bearer(ADMIN_TOKEN));
  failed = { id: agent.body.lastOperation.id, message: res.body.error.message };
});

afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("helm's text reaches admins only", () => {
  it('answers the failed write itself to a non-admin with the class of failure and a reference', () => {
    expect(failed.message).not.toContain(HELM_TEXT);
    expect(failed.message).toMatch(/^the Kubernetes cluster is unreachable \(reference [0-9a-f-]{36}: an admin finds helm's message in the service log\)/);
  });

  it("shows a non-admin the agent's last operation with the class and the operation as reference, on REST and MCP", async () => {
    const expected = `the Kubernetes cluster is unreachable (reference: operation ${failed.id}; an admin reads helm's message in the journal, GET /api/v1/operations)`;
    const rest = await call(t.url, 'GET', '/api/v1/agents/team-a/helper', undefined, bearer(VIEWER_TOKEN));
    expect(rest.body.lastOperation).toMatchObject({ id: failed.id, state: 'failed', errorCode: 'backend_error', errorMessage: expected });

    const list = await call(t.url, 'GET', '/api/v1/agents', undefined, bearer(VIEWER_TOKEN));
    expect(list.body.items.map((a: { lastOperation: { errorMessage: string } }) => a.lastOperation.errorMessage)).toEqual([expected]);

    const { client } = await connectAs(t.url, VIEWER_TOKEN);
    try {
      const result = await client.callTool({ name: 'get_agent', arguments: { namespace: 'team-a', name: 'helper' } });
      expect((result.structuredContent as { lastOperation: { errorMessage: string } }).lastOperation.errorMessage).toBe(expected);
      expect(JSON.stringify(result.content)).not.toContain(HELM_TEXT);
    } finally {
      await client.close();
    }
  });

  it('shows a non-admin granted the journal the same, and an admin the text helm wrote', async () => {
    const mine = await call(t.url, 'GET', '/api/v1/operations?namespace=team-a&outcome=failed', undefined, bearer(VIEWER_TOKEN));
    expect(mine.status).toBe(200);
    expect(mine.text).not.toContain(HELM_TEXT);
    expect(mine.body.items).toEqual([expect.objectContaining({ id: failed.id, errorMessage: expect.stringMatching(/^the Kubernetes cluster is unreachable \(reference: operation /) })]);

    const admin = await call(t.url, 'GET', '/api/v1/agents/team-a/helper', undefined, bearer(ADMIN_TOKEN));
    expect(admin.body.lastOperation.errorMessage).toContain(`points at https://${HELM_TEXT}`);
    const journal = await call(t.url, 'GET', '/api/v1/operations?namespace=team-a&outcome=failed', undefined, bearer(ADMIN_TOKEN));
    expect(journal.body.items[0].errorMessage).toBe(admin.body.lastOperation.errorMessage);
  });

  it('answers a status read the cluster could not serve with the class and a reference to a non-admin, with the text to an admin', async () => {
    const mine = await call(t.url, 'GET', '/api/v1/agents/team-a/helper/status', undefined, bearer(VIEWER_TOKEN));
    expect(mine.body).toMatchObject({ verdict: 'unknown' });
    expect(mine.body.message).toMatch(/^The cluster could not be read: the Kubernetes cluster is unreachable \(reference [0-9a-f-]{36}: /);
    expect(mine.text).not.toContain(HELM_TEXT);
    const admin = await call(t.url, 'GET', '/api/v1/agents/team-a/helper/status', undefined, bearer(ADMIN_TOKEN));
    expect(admin.body.message).toContain(`points at https://${HELM_TEXT}`);
  });
});
