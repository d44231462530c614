import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Authorizer } from '@app/auth';
import { McpRegistry } from '@app/mcp';
import { AGENT_OPERATIONS, MODEL_CONFIG_OPERATIONS, PRESET_OPERATIONS, RECONCILE_OPERATIONS, ROLLOUT_OPERATIONS } from '@app/agents';
import { BLUEPRINT_OPERATIONS } from '@app/blueprints';
import { openApiDocument } from '../../apps/agent-manager/src/app.factory.js';
import { call } from '../support/test-app.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});

afterAll(async () => {
  await t?.close();
});

/** The policy names every operation (docs/contract.md §8): nothing is served that the policy cannot name. */
describe('the registration invariant', () => {
  it('lets the policy name every MCP tool the service registers', () => {
    const operations = t.app.get(Authorizer).operations;
    const tools = t.app.get(McpRegistry).toolNames();
    expect(tools.length).toBeGreaterThan(10);
    expect(tools.filter((name) => !operations.includes(name))).toEqual([]);
  });

  it('lets the policy name every REST operation, by the tool name of its operationId', async () => {
    const operations = t.app.get(Authorizer).operations;
    const document = await openApiDocument(t.app);
    const ids = Object.values(document.paths).flatMap((item) => Object.values(item).flatMap((op) => (op && typeof op === 'object' && 'operationId' in op ? [op.operationId as string] : [])));
    const names = ids.map((id) => id.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
    expect(names).toContain('list_operations');
    expect(names.filter((name) => !operations.includes(name))).toEqual([]);
  });

  it("lets the policy name a blueprint's tool, served at run time, as blueprint:<name>", async () => {
    const blueprint = { name: 'invariant_probe', description: 'd', fixed: { modelConfig: 'm', toolset: ['preset:none'] }, open: [] };
    expect((await call(t.url, 'POST', '/api/v1/blueprints', blueprint)).status).toBe(201);
    const authorizer = t.app.get(Authorizer);
    const tools = t.app.get(McpRegistry).toolNames();
    expect(tools).toContain('invariant_probe');
    expect(tools.filter((name) => !authorizer.operations.includes(name) && !authorizer.knows(`blueprint:${name}`))).toEqual([]);
    expect((await call(t.url, 'DELETE', '/api/v1/blueprints/invariant_probe')).status).toBe(200);
  });

  it('names no operation nothing serves', () => {
    const served = new Set([...t.app.get(McpRegistry).toolNames()]);
    expect(t.app.get(Authorizer).operations.filter((op) => !served.has(op))).toEqual([]);
  });
});

/** docs/mcp.md "Confirming destructive calls": which tools ask the person at an eliciting client. */
describe('the tools that ask before they act', () => {
  const sets = [AGENT_OPERATIONS, RECONCILE_OPERATIONS, ROLLOUT_OPERATIONS, PRESET_OPERATIONS, BLUEPRINT_OPERATIONS, MODEL_CONFIG_OPERATIONS];
  const operations = sets.flatMap((set) => set.operations);

  it('are the deleting, rolling back and fleet-wide writes, each destructive by its annotations', () => {
    const asking = operations.filter((operation) => operation.confirm).map((operation) => operation.name);
    expect(asking.sort()).toEqual(
      ['cancel_fleet_rollout', 'delete_agent', 'delete_blueprint', 'reconcile_agents', 'rollback_agent', 'start_fleet_rollout', 'upgrade_blueprint_agents'].sort(),
    );
    expect(operations.filter((operation) => operation.confirm && !operation.tool?.annotations.destructiveHint).map((operation) => operation.name)).toEqual([]);
  });
});
