// npm test: also on PostgreSQL — blueprint writes racing agent writes in the store
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { HelmClient } from '@app/helm';
import { FakeHelm } from '../support/fake-helm.js';
import { call as rest, startTestApp, type TestApp } from '../support/test-app.js';
import { connect } from '../mcp/mcp-support.js';

jest.setTimeout(60_000);

/**
 * A create through a blueprint's tool takes as long as helm; the blueprint may be renamed or
 * deleted meanwhile (neither waits for creates not recorded yet). The agent records the blueprint
 * as it stands then: under its new name, or none — never another blueprint later created under
 * the old name. helm is a FAKE here (named as such: an install that takes 1.5 s, no cluster).
 */
const BLUEPRINT = {
  description: 'Creates an incident helper.',
  fixed: { modelConfig: 'm', toolset: ['preset:read-only'] },
  open: ['displayName'],
  defaults: { namespace: 'agents' },
};

let t: TestApp;
let client: Client;
const fake = new FakeHelm();

beforeAll(async () => {
  t = await startTestApp();
  const helm = t.app.get(HelmClient) as unknown as Record<string, unknown>;
  for (const method of ['install', 'upgradeInstall', 'uninstall', 'status', 'history', 'rollback', 'template'] as const) {
    helm[method] = (fake[method] as (...args: unknown[]) => unknown).bind(fake);
  }
  client = await connect(t.url, '?toolsets=blueprints');
});

afterAll(async () => {
  await client?.close();
  await t?.close();
});

/** Calls the blueprint's tool, and while helm runs the create, does `meanwhile`. */
async function createWhile(tool: string, agent: string, meanwhile: () => Promise<{ status: number }>) {
  await client.listTools();
  fake.delayMs = 1_500;
  try {
    const creating = client.callTool({ name: tool, arguments: { name: agent } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await meanwhile()).status).toBe(200);
    const result = await creating;
    expect(result.isError).toBeFalsy();
  } finally {
    fake.delayMs = 0;
  }
}

describe('a blueprint changed while an agent is created from it', () => {
  it('renamed: the agent holds it under its new name', async () => {
    expect((await rest(t.url, 'POST', '/api/v1/blueprints', { ...BLUEPRINT, name: 'first_name' })).status).toBe(201);
    await createWhile('first_name', 'renamed-holder', () => rest(t.url, 'POST', '/api/v1/blueprints/first_name/rename', { newName: 'second_name' }));
    const agent = await rest(t.url, 'GET', '/api/v1/agents/agents/renamed-holder');
    expect(agent.body.blueprint).toEqual({ blueprint: 'second_name', version: 1 });
    expect((await rest(t.url, 'GET', '/api/v1/blueprints/second_name/referees')).body.holders).toEqual([{ namespace: 'agents', name: 'renamed-holder', version: 1 }]);
  });

  it('deleted: the agent holds no blueprint, and a new blueprint of the old name has no holder it never made', async () => {
    expect((await rest(t.url, 'POST', '/api/v1/blueprints', { ...BLUEPRINT, name: 'short_lived' })).status).toBe(201);
    await createWhile('short_lived', 'orphan-holder', () => rest(t.url, 'DELETE', '/api/v1/blueprints/short_lived'));
    expect((await rest(t.url, 'GET', '/api/v1/agents/agents/orphan-holder')).body.blueprint ?? null).toBeNull();
    expect((await rest(t.url, 'POST', '/api/v1/blueprints', { ...BLUEPRINT, name: 'short_lived', fixed: { ...BLUEPRINT.fixed, systemMessage: 'another team' } })).status).toBe(201);
    expect((await rest(t.url, 'GET', '/api/v1/blueprints/short_lived/referees')).body.holders).toEqual([]);
    expect((await rest(t.url, 'DELETE', '/api/v1/blueprints/short_lived')).status).toBe(200);
  });
});
