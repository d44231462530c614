// npm test: also on PostgreSQL — the journal's queries scoped to what the caller may see
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ElicitRequest } from '@modelcontextprotocol/sdk/types.js';
import { sha256Hex } from '@app/auth';
import { AgentsRepository } from '@app/agents';
import { call, startTestApp, type TestApp } from '../support/test-app.js';
import { bearer, connectAs } from '../auth/auth-support.js';
import { askingClient } from '../mcp/mcp-support.js';

/**
 * Who sees which part of the audit trail, and what bad input to the audit and validate paths
 * answers: the namespace patterns of the policy match the journal exactly as they match agents,
 * and the agent a call names is read before the policy is asked, on both doors.
 */
const ALICE = 'am_alice_0f1e2d3c4b5a69788796a5b4c3d2e1f0';
const BOB = 'am_bob_1a2b3c4d5e6f708192a3b4c5d6e7f8091';
const POLICY = `
roles:
  reader: [list_operations, list_agents, get_agent, validate_agent, create_agent, update_agent, delete_agent, rollback_agent]
bindings:
  - role: reader
    subjects: ["token:alice"]
    namespaces: ["payments-*-prod"]
  - role: reader
    subjects: ["token:bob"]
    namespaces: ["team-*-app-*"]
`;

let t: TestApp;
let dir: string;
let mcp: Client | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'audit-scope-e2e-'));
  writeFileSync(join(dir, 'tokens.yaml'), `- name: alice\n  sha256: ${sha256Hex(ALICE)}\n- name: bob\n  sha256: ${sha256Hex(BOB)}\n`);
  writeFileSync(join(dir, 'policy.yaml'), POLICY);
  t = await startTestApp({ API_TOKENS_FILE: join(dir, 'tokens.yaml'), AUTHZ_POLICY_FILE: join(dir, 'policy.yaml'), MCP_ALLOWED_HOSTS: '127.0.0.1,localhost' });
  const journal = new AgentsRepository(t.store);
  // Journal entries in namespaces each pattern must and must not match (a refused entry is the simplest row to write).
  for (const namespace of ['payments-prod', 'payments-eu-prod', 'payments-eu-staging', 'team-app-x', 'team-x-app-y', 'PAYMENTS-EU-PROD']) {
    await journal.journalRefusal({ operation: 'create_agent', actor: 'seed', subject: 'seed', authMethod: 'token', door: 'rest', client: null, requestId: `seed-${namespace}`, actorNote: null, namespace, name: 'a', errorMessage: 'seeded' });
  }
});

afterAll(async () => {
  await mcp?.close();
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const namespacesSeenBy = async (token: string) => {
  const res = await call(t.url, 'GET', '/api/v1/operations?limit=100', undefined, bearer(token));
  expect(res.status).toBe(200);
  return [...new Set((res.body.items as { namespace: string }[]).map((op) => op.namespace))].sort();
};

describe('the audit trail, by namespace pattern', () => {
  it('shows a caller only the namespaces its patterns match, as the policy matches them (not payments-prod for payments-*-prod)', async () => {
    expect(await namespacesSeenBy(ALICE)).toEqual(['payments-eu-prod']);
    expect(await namespacesSeenBy(BOB)).toEqual(['team-x-app-y']);
  });
});

describe('a tool call naming an invalid agent', () => {
  it('is refused 400 naming the field before the policy is asked, as REST refuses it, and leaves nothing in the audit trail', async () => {
    ({ client: mcp } = await connectAs(t.url, BOB, '?revisions'));
    const rest = await call(t.url, 'PATCH', '/api/v1/agents/PAYMENTS-EU-PROD/a', { displayName: 'x' }, bearer(BOB));
    expect(rest.status).toBe(400);
    for (const name of ['update_agent', 'delete_agent', 'rollback_agent']) {
      const result = await mcp.callTool({ name, arguments: { namespace: 'PAYMENTS-EU-PROD', name: 'a', ...(name === 'rollback_agent' && { revision: 1 }) } });
      expect(result.isError).toBe(true);
      const text = (result.content as { text: string }[])[0].text;
      expect(text).toMatch(/^namespace must be a DNS-1123 label/);
    }
    // Counted in the store itself: bob's own view of the trail would hide an entry outside his namespaces anyway.
    expect(await t.store.client.operation.count({ where: { subject: 'token:bob' } })).toBe(0);
  });
});

describe('bad input to the audit and validate paths', () => {
  it.each([
    ['since', '2026-13-01T00:00Z'],
    ['until', '2026-01-01T00:00%2B99:99'],
    ['since', '2026-02-30T00:00:00Z'],
    ['limit', '0x1'],
    ['limit', '1e0'],
  ])('answers %s=%s with 400 naming the field, never 500 or a silent other value', async (field, value) => {
    const res = await call(t.url, 'GET', `/api/v1/operations?${field}=${value}`, undefined, bearer(ALICE));
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.error.details)).toContain(field);
  });

  it('answers a forged cursor holding a control character 400 on cursor', async () => {
    const agents = Buffer.from(JSON.stringify({ n: 'payments-\u0000', a: '', i: '' })).toString('base64url');
    const operations = Buffer.from(JSON.stringify({ t: new Date().toISOString(), i: '\u0000' })).toString('base64url');
    for (const path of [`/api/v1/agents?cursor=${agents}`, `/api/v1/operations?cursor=${operations}`]) {
      const res = await call(t.url, 'GET', path, undefined, bearer(ALICE));
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].path).toBe('cursor');
    }
  });

  it('answers validate with an unknown mode 200 with the violation on mode, not 500', async () => {
    const res = await call(t.url, 'POST', '/api/v1/agents/validate', { mode: 'bogus', namespace: 'payments-eu-prod', name: 'a', modelConfig: 'm', toolset: ['preset:none'] }, bearer(ALICE));
    expect(res.status).toBe(200);
    expect(res.body.valid).toBe(false);
    expect(res.body.violations.map((v: { path: string }) => v.path)).toContain('mode');
  });
});

describe('one journal entry by id (GET /api/v1/operations/{id}, get_operation)', () => {
  const idIn = async (namespace: string) => (await t.store.client.operation.findFirstOrThrow({ where: { namespace } })).id;

  it('answers an entry in a namespace the caller may read the journal in, on both doors', async () => {
    const id = await idIn('payments-eu-prod');
    const rest = await call(t.url, 'GET', `/api/v1/operations/${id}`, undefined, bearer(ALICE));
    expect(rest.status).toBe(200);
    expect(rest.body).toMatchObject({ id, operation: 'create_agent', namespace: 'payments-eu-prod', outcome: 'refused' });
    const { client } = await connectAs(t.url, ALICE, '?audit');
    try {
      const result = await client.callTool({ name: 'get_operation', arguments: { id } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ id, namespace: 'payments-eu-prod' });
    } finally {
      await client.close();
    }
  });

  it('answers 404 alike for an entry outside those namespaces and for an id nobody has', async () => {
    const outside = await call(t.url, 'GET', `/api/v1/operations/${await idIn('payments-eu-staging')}`, undefined, bearer(ALICE));
    const missing = await call(t.url, 'GET', '/api/v1/operations/00000000-0000-4000-8000-000000000000', undefined, bearer(ALICE));
    expect([outside.status, missing.status]).toEqual([404, 404]);
    expect(outside.body.error.message.replace(/operation \S+/, 'operation ID')).toBe(missing.body.error.message.replace(/operation \S+/, 'operation ID'));
    expect((await call(t.url, 'GET', `/api/v1/operations/${await idIn('payments-eu-prod')}`, undefined, bearer(BOB))).status).toBe(404);
  });

  it('refuses an id that is not one by name (400)', async () => {
    const res = await call(t.url, 'GET', '/api/v1/operations/not%20an%20id', undefined, bearer(ALICE));
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].path).toBe('id');
  });
});

describe('a destructive call from a client that can ask its person', () => {
  it('asks only once the policy allowed the call: a refused one is refused without a question', async () => {
    const asked: ElicitRequest['params'][] = [];
    const client = askingClient({ action: 'decline' }, asked);
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), { requestInit: { headers: bearer(ALICE) } }));
    try {
      const refused = await client.callTool({ name: 'delete_agent', arguments: { namespace: 'team-x-app-y', name: 'a' } });
      expect(refused.structuredContent).toMatchObject({ error: { code: 'forbidden' } });
      expect(asked).toHaveLength(0);
      const declined = await client.callTool({ name: 'delete_agent', arguments: { namespace: 'payments-eu-prod', name: 'a' } });
      expect((declined.content as { text: string }[])[0].text).toMatch(/declined delete_agent payments-eu-prod\/a: nothing was done/);
      expect(asked).toHaveLength(1);
    } finally {
      await client.close();
    }
  });
});
