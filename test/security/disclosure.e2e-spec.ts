// npm test: also on PostgreSQL — refusals counted into one journal row per minute, across replicas
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { parse } from 'yaml';
import { sha256Hex } from '@app/auth';
import { AgentsRepository, OperationRecovery } from '@app/agents';
import { AppConfig } from '@app/common';
import { call, startTestApp, type TestApp } from '../support/test-app.js';
import { bearer, connectAs, seedAgent } from '../auth/auth-support.js';

/**
 * What each caller is shown (issue 29 item 5): the kubeconfig path and the API server URL only to
 * admins, the chart by name and version, another principal's groups and grants only to that
 * principal and admins; and what the journal keeps (refusals counted per minute, a retention).
 */
const ROOT = 'am_root_0f1e2d3c4b5a69788796a5b4c3d2e1f0';
const AUDITOR = 'am_auditor_1a2b3c4d5e6f708192a3b4c5d6e7f80';
const BOB = 'am_bob_2b3c4d5e6f708192a3b4c5d6e7f8091a';
const POLICY = `
roles:
  admin: ["*"]
  auditor: [list_operations]
  editor: [get_info, list_agents, get_agent, create_agent, list_operations]
bindings:
  - role: admin
    subjects: ["token:root"]
    namespaces: ["*"]
  - role: auditor
    subjects: ["token:auditor"]
    namespaces: ["*"]
  - role: editor
    groups: [team-x]
    namespaces: ["team-*"]
`;

let t: TestApp;
let dir: string;
let mcp: Client | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'disclosure-e2e-'));
  const tokens = [
    `- name: root\n  sha256: ${sha256Hex(ROOT)}`,
    `- name: auditor\n  sha256: ${sha256Hex(AUDITOR)}`,
    `- name: bob\n  sha256: ${sha256Hex(BOB)}\n  groups: [team-x, secret-group]`,
  ];
  writeFileSync(join(dir, 'tokens.yaml'), `${tokens.join('\n')}\n`);
  writeFileSync(join(dir, 'policy.yaml'), POLICY);
  t = await startTestApp({
    API_TOKENS_FILE: join(dir, 'tokens.yaml'),
    AUTHZ_POLICY_FILE: join(dir, 'policy.yaml'),
    MCP_ALLOWED_HOSTS: '127.0.0.1,localhost',
    JOURNAL_RETENTION_DAYS: '30',
    // the recovery sweep (and its retention) runs at start and then only when the test calls it
    LEASE_TTL_SECONDS: '3600',
  });
});

afterAll(async () => {
  await mcp?.close();
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The test app's kubeconfig (in its temp folder) points at this server, which refuses connections. */
const SERVER = 'https://127.0.0.1:1';

describe('the cluster configuration', () => {
  it('is named on unauthenticated /readyz in words, without the kubeconfig path or the API server URL', async () => {
    const res = await call(t.url, 'GET', '/readyz');
    expect(res.status).toBe(200);
    const text = JSON.stringify(res.body);
    expect(text).not.toContain(t.dir);
    expect(text).not.toContain(SERVER);
    expect(res.body.status).toBe('ready');
    expect(res.body.cluster.source).toBe('KUBECONFIG');
    if (res.body.cluster.state !== 'reachable') expect(res.body.cluster.reason).toEqual(expect.any(String));
  });

  it('is shown with its path and server to admins by GET /api/v1/info, and without them to others', async () => {
    const admin = await call(t.url, 'GET', '/api/v1/info', undefined, bearer(ROOT));
    expect(admin.status).toBe(200);
    expect(admin.body.cluster.source).toContain(t.dir);
    expect(admin.body.cluster.server).toBe(SERVER);
    const other = await call(t.url, 'GET', '/api/v1/info', undefined, bearer(BOB));
    expect(other.status).toBe(200);
    const text = JSON.stringify(other.body);
    expect(text).not.toContain(t.dir);
    expect(text).not.toContain(SERVER);
    expect(other.body.cluster).toMatchObject({ state: admin.body.cluster.state, source: 'KUBECONFIG', server: null });
    // the chart and helm by name (the test app's AGENT_CHART is the relative path charts/agent)
    expect(other.body.chart.ref).toBe('agent');
    expect(other.body.helm.binary).not.toContain('/');
  });
});

describe('an agent record', () => {
  it('names the chart by name and version on both doors, never by its path, also for a row written with the path', async () => {
    const repository = new AgentsRepository(t.store);
    const chartRef = t.app.get(AppConfig).chartRef;
    // A row as earlier versions wrote it: the chart's absolute path, no name.
    await t.store.client.agent.create({
      data: {
        id: randomUUID(), namespace: 'team-a', name: 'old', activeKey: 'team-a/old', state: 'active', revision: 1, createdBy: 'seed', updatedBy: 'seed',
        spec: { name: 'old', namespace: 'team-a', modelConfig: 'm', toolset: ['preset:none'] },
        values: { modelConfig: 'm', toolset: ['preset:none'], description: '', displayName: '', systemMessage: '', labels: {}, annotations: {} },
        chartRef: '/opt/agent-manager/charts/agent',
      },
    });
    // A row as a write records it now: the configured chart (a path here).
    const operationId = randomUUID();
    await repository.startOperation({ id: operationId, kind: 'create', namespace: 'team-a', name: 'new', request: {}, actor: 'seed', owner: 'seed' });
    const spec = { name: 'new', namespace: 'team-a', modelConfig: 'm', toolset: ['preset:none'] };
    const values = { modelConfig: 'm', toolset: ['preset:none'], description: '', displayName: '', systemMessage: '', labels: {}, annotations: {} };
    await repository.recordCreate('team-a', 'new', { ref: chartRef }, { spec, values, helmRevision: 1, kind: 'create', actor: 'seed', operationId });

    ({ client: mcp } = await connectAs(t.url, BOB));
    const answers = [
      (await call(t.url, 'GET', '/api/v1/agents/team-a/old', undefined, bearer(BOB))).body,
      (await call(t.url, 'GET', '/api/v1/agents/team-a/new', undefined, bearer(BOB))).body,
      (await call(t.url, 'GET', '/api/v1/agents?namespace=team-a', undefined, bearer(BOB))).body,
      (await mcp.callTool({ name: 'get_agent', arguments: { namespace: 'team-a', name: 'new' } })).structuredContent,
      (await mcp.callTool({ name: 'list_agents', arguments: { namespace: 'team-a' } })).structuredContent,
    ];
    for (const answer of answers) {
      expect(JSON.stringify(answer)).not.toContain(chartRef);
      expect(JSON.stringify(answer)).not.toContain('/opt/agent-manager');
    }
    const { version } = parse(readFileSync(join(chartRef, 'Chart.yaml'), 'utf8')) as { version: string };
    expect(answers[0].chart).toEqual({ name: 'agent', version: null });
    expect(answers[1].chart).toEqual({ name: 'agent', version });
    expect((answers[2].items as { chart: unknown }[]).map((a) => a.chart)).toEqual([{ name: 'agent', version }, { name: 'agent', version: null }]);
    expect((answers[3] as { chart: unknown }).chart).toEqual({ name: 'agent', version });
    expect((answers[4] as { items: { chart: unknown }[] }).items.map((a) => a.chart)).toEqual([{ name: 'agent', version }, { name: 'agent', version: null }]);
  });
});

type Entry = { subject: string; operation: string; namespace: string; errorMessage: string; count: number; startedAt: string; finishedAt: string };

const refusalsOf = async (token: string, subject: string) => {
  const res = await call(t.url, 'GET', `/api/v1/operations?subject=${encodeURIComponent(subject)}&outcome=refused&limit=100`, undefined, bearer(token));
  expect(res.status).toBe(200);
  return res.body.items as Entry[];
};

describe('a refusal in the journal', () => {
  beforeAll(async () => {
    // bob holds delete_agent nowhere, and get_agent only in team-*
    expect((await call(t.url, 'DELETE', '/api/v1/agents/team-a/x', undefined, bearer(BOB))).status).toBe(403);
    for (let i = 0; i < 5; i++) expect((await call(t.url, 'GET', '/api/v1/agents/payments/x', undefined, bearer(BOB))).status).toBe(403);
    expect((await call(t.url, 'GET', '/api/v1/agents/billing/x', undefined, bearer(BOB))).status).toBe(403);
  });

  it("names the caller's groups and grants to that caller and to admins only", async () => {
    const own = await refusalsOf(BOB, 'token:bob');
    expect(own.map((e) => e.namespace)).toEqual(['team-a']);
    expect(own[0].errorMessage).toContain('secret-group');
    const admin = await refusalsOf(ROOT, 'token:bob');
    expect(admin.map((e) => e.errorMessage).join('\n')).toContain('secret-group');
    const auditor = await refusalsOf(AUDITOR, 'token:bob');
    expect(auditor.map((e) => e.namespace).sort()).toEqual(['billing', 'payments', 'team-a']);
    for (const entry of auditor) {
      expect(entry.errorMessage).not.toMatch(/secret-group|team-x|team-\*/);
      expect(entry.errorMessage).toContain(`${entry.operation} in namespace "${entry.namespace}" is not granted to token:bob`);
    }
  });

  it('is journaled once per principal, operation and namespace per minute, with a count', async () => {
    const rows = await t.store.client.operation.findMany({ where: { subject: 'token:bob', state: 'refused' }, orderBy: { namespace: 'asc' } });
    // the five refusals of get_agent in payments share one entry, unless a minute began among them
    const payments = rows.filter((row) => row.namespace === 'payments');
    expect(payments.reduce((sum, row) => sum + row.count, 0)).toBe(5);
    expect(payments.length).toBeLessThanOrEqual(2);
    expect(rows.filter((row) => row.namespace !== 'payments').map((row) => [row.namespace, row.count])).toEqual([['billing', 1], ['team-a', 1]]);
    const listed = await refusalsOf(ROOT, 'token:bob');
    expect(listed.filter((e) => e.namespace === 'payments').reduce((sum, e) => sum + e.count, 0)).toBe(5);
  });

  it('is counted on one entry by two replicas refusing at once', async () => {
    const second = await startTestApp({
      API_TOKENS_FILE: join(dir, 'tokens.yaml'),
      AUTHZ_POLICY_FILE: join(dir, 'policy.yaml'),
      MCP_ALLOWED_HOSTS: '127.0.0.1,localhost',
      DATABASE_URL: t.databaseUrl,
      LEASE_TTL_SECONDS: '3600',
    });
    try {
      const refuse = (base: string) => call(base, 'GET', '/api/v1/agents/parallel/x', undefined, bearer(BOB));
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => refuse(i % 2 ? t.url : second.url)));
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(403));
    } finally {
      await second.close();
    }
    const rows = await t.store.client.operation.findMany({ where: { subject: 'token:bob', namespace: 'parallel' } });
    expect(rows.reduce((sum, row) => sum + row.count, 0)).toBe(20);
    expect(rows.length).toBeLessThanOrEqual(2);
  });

  it('reads the same over MCP (list_operations): without the groups of someone else', async () => {
    const { client } = await connectAs(t.url, AUDITOR, '?audit');
    try {
      const result = await client.callTool({ name: 'list_operations', arguments: { subject: 'token:bob', outcome: 'refused' } });
      const items = (result.structuredContent as { items: Entry[] }).items;
      expect(items.length).toBeGreaterThan(0);
      expect(JSON.stringify(items)).not.toMatch(/secret-group|team-x/);
    } finally {
      await client.close();
    }
  });

  it('never finishes before it started', async () => {
    const rows = await t.store.client.operation.findMany({ where: { state: 'refused' } });
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.finishedAt!.getTime()).toBeGreaterThanOrEqual(row.startedAt.getTime());
  });
});

describe('the journal retention (JOURNAL_RETENTION_DAYS=30)', () => {
  it("removes finished entries older than that on the recovery sweep, and keeps pending ones, newer ones and agents' last operations", async () => {
    await t.app.get(OperationRecovery).sweep(); // the one at start is over before the journal is seeded
    const day = 86_400_000;
    const now = Date.now();
    const entry = (id: string, state: string, ageDays: number) => ({
      id, kind: 'create', namespace: 'retention', name: id, state, request: {}, actor: 'seed',
      startedAt: new Date(now - ageDays * day), finishedAt: state === 'pending' ? null : new Date(now - ageDays * day + 1000),
    });
    const old = Array.from({ length: 250 }, (_, i) => entry(`old-${i}`, i % 2 ? 'succeeded' : 'refused', 31 + i / 100));
    const kept = [entry('old-pending', 'pending', 40), entry('recent', 'failed', 29), entry('old-last', 'succeeded', 60)];
    await t.store.client.operation.createMany({ data: [...old, ...kept] });
    await seedAgent(t.store, 'retention', 'keeper');
    await t.store.client.agent.updateMany({ where: { namespace: 'retention', name: 'keeper' }, data: { lastOperationId: 'old-last' } });

    // one bounded batch reads the 100 oldest entries: the oldest (old-last) is kept, 99 go
    expect(await new AgentsRepository(t.store).purgeJournal(30 * day, { batchSize: 100, batches: 1 })).toBe(99);
    await t.app.get(OperationRecovery).sweep();

    const left = await t.store.client.operation.findMany({ where: { namespace: 'retention' }, select: { id: true } });
    expect(left.map((row) => row.id).sort()).toEqual(['old-last', 'old-pending', 'recent']);
    // the agent whose last operation is old still shows it
    const agent = await call(t.url, 'GET', '/api/v1/agents/retention/keeper', undefined, bearer(ROOT));
    expect(agent.body.lastOperation?.id).toBe('old-last');
  });
});
