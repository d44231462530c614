import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ADMIN_TOKEN, authEnv, bearer, connectAs, VIEWER_TOKEN } from '../auth/auth-support.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';
import { HELPER } from './blueprints-support.js';

jest.setTimeout(60_000);

/** token:viewer may use the blueprint incident_helper in team-a, and is granted create_agent nowhere. */
const POLICY = `
roles:
  helper-user: ["blueprint:incident_helper"]
  admin: ["*"]
bindings:
  - role: helper-user
    subjects: ["token:viewer"]
    namespaces: ["team-a"]
  - role: admin
    subjects: ["token:ci-platform"]
    namespaces: ["*"]
`;

let t: TestApp;
let dir: string;
let viewer: Client;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bp-grants-'));
  t = await startTestApp(authEnv(dir, undefined, POLICY));
  expect((await call(t.url, 'POST', '/api/v1/blueprints', HELPER, bearer(ADMIN_TOKEN))).status).toBe(201);
  ({ client: viewer } = await connectAs(t.url, VIEWER_TOKEN, '?toolsets=blueprints'));
});

afterAll(async () => {
  await viewer?.close();
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const text = (result: Awaited<ReturnType<Client['callTool']>>) => (result.content as { text: string }[])[0].text;

describe("a blueprint's tool, granted as blueprint:<name>", () => {
  it('is listed to and runs for a caller granted only the blueprint, in its namespace', async () => {
    const { tools } = await viewer.listTools();
    expect(tools.map((tool) => tool.name)).toContain('incident_helper');
    const result = await viewer.callTool({ name: 'incident_helper', arguments: { name: 'pay-helper', namespace: 'team-a', dryRun: true } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ dryRun: true, values: { modelConfig: 'secret-model-config' } });
  });

  it("is refused in a namespace where neither the blueprint nor create_agent is granted, as create_agent's refusal, and journaled", async () => {
    const result = await viewer.callTool({ name: 'incident_helper', arguments: { name: 'pay-helper', namespace: 'team-b', dryRun: true } });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/create_agent in namespace "team-b" is not granted to token:viewer/);
    const rows = await t.store.client.operation.findMany({ where: { actor: 'token:viewer', kind: 'create_agent', state: 'refused' } });
    expect(rows).toEqual([expect.objectContaining({ namespace: 'team-b', door: 'mcp-http', errorCode: 'forbidden' })]);
  });
});
