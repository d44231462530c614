import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Authorizer } from '@app/auth';
import { McpRegistry } from '@app/mcp';
import { openApiDocument } from '../../apps/agent-manager/src/app.factory.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});

afterAll(async () => {
  await t?.close();
});

/** The reference's section 2 regression guard: nothing is served that the policy cannot name. */
describe('the registration invariant', () => {
  it('lets the policy name every MCP tool the service registers', () => {
    const operations = t.app.get(Authorizer).operations;
    const tools = t.app.get(McpRegistry).toolNames();
    expect(tools.length).toBeGreaterThan(10);
    expect(tools.filter((name) => !operations.includes(name))).toEqual([]);
  });

  it('lets the policy name every REST operation, by the tool name of its operationId', () => {
    const operations = t.app.get(Authorizer).operations;
    const document = openApiDocument(t.app);
    const ids = Object.values(document.paths).flatMap((item) => Object.values(item).flatMap((op) => (op && typeof op === 'object' && 'operationId' in op ? [op.operationId as string] : [])));
    const names = ids.map((id) => id.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
    expect(names).toContain('list_operations');
    expect(names.filter((name) => !operations.includes(name))).toEqual([]);
  });

  it('names no operation nothing serves', () => {
    const served = new Set([...t.app.get(McpRegistry).toolNames()]);
    expect(t.app.get(Authorizer).operations.filter((op) => !served.has(op))).toEqual([]);
  });
});
