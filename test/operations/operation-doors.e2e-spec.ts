import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { OperationDoors, type OperationDescriptor } from '@app/doors';
import { Authorizer } from '@app/auth';
import { McpRegistry } from '@app/mcp';
import { openApiDocument } from '../../apps/agent-manager/src/app.factory.js';
import { ADMIN_TOKEN, authEnv, bearer, connectAs, VIEWER_TOKEN } from '../auth/auth-support.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';

/** Every sampled operation granted to the viewer in team-a only; blueprint operations need "*", so team-a grants them nowhere they apply. */
const SAMPLE = [
  ['get_agent', { namespace: 'team-b', name: 'probe' }],
  ['list_agent_revisions', { namespace: 'team-b', name: 'probe', life: 'all' }],
  ['update_agent', { namespace: 'team-b', name: 'probe', dryRun: true, description: 'd' }],
  ['delete_agent', { namespace: 'team-b', name: 'probe', dryRun: true }],
  ['validate_agent', { namespace: 'team-b', name: 'probe', modelConfig: 'm', toolset: ['preset:none'] }],
  ['reconcile_agents', { namespace: 'team-b', dryRun: true }],
  ['get_blueprint', { name: 'probe_blueprint' }],
  ['upgrade_blueprint_agents', { name: 'probe_blueprint', dryRun: true }],
] as const;

const POLICY = `
roles:
  sampled: [list_server_toolsets, ${SAMPLE.map(([name]) => name).join(', ')}]
  admin: ["*"]
bindings:
  - role: admin
    subjects: ["token:ci-platform"]
    namespaces: ["*"]
  - role: sampled
    subjects: ["token:viewer"]
    namespaces: ["team-a"]
`;

let t: TestApp;
let dir: string;
let viewer: Client;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'operation-doors-'));
  t = await startTestApp(authEnv(dir, undefined, POLICY));
  ({ client: viewer } = await connectAs(t.url, VIEWER_TOKEN, '?toolsets=agents,revisions,audit,admin,blueprint-admin'));
});

afterAll(async () => {
  await viewer?.close();
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const operations = () => t.app.get(OperationDoors).operations();
const byName = (name: string) => operations().find((operation) => operation.name === name)!;

/** The REST request an operation's descriptor declares for MCP-style arguments: path parameters filled in, the rest as its body or query. */
function restRequest(operation: OperationDescriptor, args: Record<string, unknown>): { method: string; path: string; body?: unknown } {
  const route = operation.rest!;
  const rest = { ...args };
  const path = route.path.replace(/:(\w+)/g, (_match, key: string) => {
    const value = String(rest[key]);
    delete rest[key];
    return encodeURIComponent(value);
  });
  if (route.args === 'body') return { method: route.method.toUpperCase(), path: `/api/v1/${path}`, body: rest };
  const query = new URLSearchParams(Object.entries(rest).map(([key, value]): [string, string] => [key, String(value)])).toString();
  return { method: route.method.toUpperCase(), path: `/api/v1/${path}${query ? `?${query}` : ''}` };
}

describe('operations declared once', () => {
  it('gives every operation both doors, or says why it has one', () => {
    expect(operations().length).toBeGreaterThan(20);
    const oneDoor = operations().filter((operation) => !operation.rest || !operation.tool);
    expect(oneDoor.filter((operation) => !operation.oneDoor).map((operation) => operation.name)).toEqual([]);
  });

  it('is what the policy can name: the declared operations and the transport’s own tools', () => {
    const declared = operations().map((operation) => operation.name);
    expect(new Set(declared).size).toBe(declared.length);
    expect([...t.app.get(Authorizer).operations].sort()).toEqual([...declared, ...McpRegistry.ownTools].sort());
  });

  it('serves a REST route for each declared route and nothing else', async () => {
    const document = await openApiDocument(t.app);
    const served = Object.values(document.paths).flatMap((item) => Object.values(item).flatMap((op) => (op && typeof op === 'object' && 'operationId' in op ? [op.operationId as string] : [])));
    const names = served.map((id) => id.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)).sort();
    expect(names).toEqual(operations().filter((operation) => operation.rest).map((operation) => operation.name).sort());
  });

  it('serves an MCP tool for each declared tool and nothing else (besides the transport’s own)', () => {
    const tools = t.app.get(McpRegistry).toolNames().filter((name) => !McpRegistry.ownTools.includes(name)).sort();
    expect(tools).toEqual(operations().filter((operation) => operation.tool).map((operation) => operation.name).sort());
  });
});

describe('one refusal on both doors', () => {
  it.each(SAMPLE)('refuses %s outside the granted namespace with the same answer on REST and MCP, each journaled', async (name, args) => {
    const request = restRequest(byName(name), args);
    const rest = await call(t.url, request.method, request.path, request.body, bearer(VIEWER_TOKEN));
    const mcp = await viewer.callTool({ name, arguments: args });

    expect(rest.status).toBe(403);
    expect(rest.body.error.code).toBe('forbidden');
    expect(rest.body.error.message).toMatch(new RegExp(`^${name} in namespace "(team-b|\\*)" is not granted to token:viewer \\(it is granted in namespaces "team-a"\\)`));
    expect(mcp.isError).toBe(true);
    expect(mcp.structuredContent).toEqual(rest.body);

    const journal = await call(t.url, 'GET', `/api/v1/operations?operation=${name}&outcome=refused`, undefined, bearer(ADMIN_TOKEN));
    expect(journal.status).toBe(200);
    const refusals = (journal.body.items as { count: number; subject: string }[]).filter((entry) => entry.subject === 'token:viewer');
    expect(refusals.reduce((sum, entry) => sum + entry.count, 0)).toBe(2);
  });
});
