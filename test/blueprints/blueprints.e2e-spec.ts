// npm test: also on PostgreSQL — blueprint rows, revisions and their generation
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Store } from '@app/store';
import { BlueprintCatalog } from '@app/blueprints';
import { call as rest, startTestApp, type TestApp } from '../support/test-app.js';
import { call, connect, text } from '../mcp/mcp-support.js';
import { forgetHolder, HELPER, SECRETS, seedHolder } from './blueprints-support.js';

jest.setTimeout(60_000);

let t: TestApp;
let client: Client;
let admin: Client;
let changes = 0;

beforeAll(async () => {
  t = await startTestApp();
  client = await connect(t.url);
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    changes++;
  });
  admin = await connect(t.url, '?toolsets=blueprint-admin');
});

afterAll(async () => {
  await client?.close();
  await admin?.close();
  await t?.close();
});

const noSecret = (value: unknown) => {
  const shown = typeof value === 'string' ? value : JSON.stringify(value);
  for (const secret of SECRETS) expect(shown).not.toContain(secret);
};

async function waitFor<T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  for (let i = 0; ; i++) {
    const value = await read();
    if (ok(value) || i > 100) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('blueprints end to end (REST and MCP)', () => {
  it('refuses a body with every problem in one 400, toolNames with its SPEC text', async () => {
    const res = await rest(t.url, 'POST', '/api/v1/blueprints', {
      name: 'Bad-Name',
      description: '',
      fixed: { modelConfig: 'm', toolset: ['label:x'], toolNames: ['x'], name: 'x' },
      open: ['modelConfig'],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toEqual(expect.arrayContaining(['name', 'description', 'fixed.toolset[0]', 'fixed.toolNames', 'fixed.name', 'open']));
  });

  it('validate answers 200 {valid, violations} without writing', async () => {
    const bad = await rest(t.url, 'POST', '/api/v1/blueprints/validate', { ...HELPER, name: 'list_agents' });
    expect(bad.status).toBe(200);
    expect(bad.body.valid).toBe(false);
    expect(bad.body.violations[0].message).toMatch(/is the name of a tool agent-manager serves/);
    const good = await call(admin, 'validate_blueprint', HELPER);
    expect(good.structuredContent).toEqual({ valid: true, checked: 'create', violations: [] });
    expect((await rest(t.url, 'GET', '/api/v1/blueprints')).body.items).toEqual([]);
  });

  it('answers a create with dryRun (REST 200, MCP create_blueprint) as version 1 would be stored, storing and serving nothing', async () => {
    const before = changes;
    const previewed = await rest(t.url, 'POST', '/api/v1/blueprints', { ...HELPER, dryRun: true });
    expect(previewed.status).toBe(200);
    expect(previewed.body).toMatchObject({ name: 'incident_helper', activeVersion: 1, latestVersion: 1, owner: 'operator', body: { version: 1, fixed: HELPER.fixed, note: 'first version' } });
    const viaMcp = await call(admin, 'create_blueprint', { ...HELPER, dryRun: true });
    expect(viaMcp.structuredContent).toMatchObject({ name: 'incident_helper', activeVersion: 1 });
    const refused = await rest(t.url, 'POST', '/api/v1/blueprints', { ...HELPER, name: 'list_agents', dryRun: true });
    expect(refused.status).toBe(400);
    expect((await rest(t.url, 'GET', '/api/v1/blueprints')).body.items).toEqual([]);
    expect((await rest(t.url, 'GET', '/api/v1/operations?limit=100')).body.items.filter((o: { operation: string }) => o.operation === 'create_blueprint')).toEqual([]);
    expect((await client.listTools()).tools.map((x) => x.name)).not.toContain('incident_helper');
    expect(changes).toBe(before);
  });

  it('creates a blueprint whose tool lists only the open arguments and no fixed value', async () => {
    const before = changes;
    const created = await rest(t.url, 'POST', '/api/v1/blueprints', HELPER);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'incident_helper', activeVersion: 1, owner: 'operator', conflicted: false, body: { fixed: HELPER.fixed, note: 'first version' } });
    await waitFor(async () => changes, (n) => n > before);
    const { tools } = await client.listTools();
    const tool = tools.find((x) => x.name === 'incident_helper');
    expect(tool).toBeDefined();
    expect(Object.keys(tool!.inputSchema.properties ?? {})).toEqual(['name', 'namespace', 'displayName', 'annotations', 'dryRun', 'requestId']);
    noSecret(tools);
    expect(tools.map((x) => x.name)).not.toContain('create_blueprint');
  });

  it('refuses a call that sends a fixed argument, without showing any fixed value', async () => {
    const refused = await call(client, 'incident_helper', { name: 'pay-helper', toolset: ['server:evil'], systemMessage: 'mine' });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/unknown field "toolset"/);
    noSecret(refused);
  });

  it('creates with dryRun through the same create operation', async () => {
    const result = await call(client, 'incident_helper', { name: 'pay-helper', displayName: 'Payments helper', dryRun: true });
    expect(result.isError).toBeFalsy();
    const answer = result.structuredContent as { dryRun: boolean; values: Record<string, unknown> };
    expect(answer.dryRun).toBe(true);
    expect(answer.values).toMatchObject({ modelConfig: 'secret-model-config', displayName: 'Payments helper', annotations: { 'example.com/team': 'sre' } });
  });

  it('reads the blueprint, saves version 2, lists versions', async () => {
    const saved = await call(admin, 'save_blueprint_version', { ...HELPER, fixed: { ...HELPER.fixed, systemMessage: 'SECRET-PROMPT-7731 v2' }, note: 'v2' });
    expect(saved.isError).toBeFalsy();
    expect(saved.structuredContent).toMatchObject({ activeVersion: 2, latestVersion: 2 });
    const v1 = await rest(t.url, 'GET', '/api/v1/blueprints/incident_helper?version=1');
    expect(v1.body.body).toMatchObject({ version: 1, active: false, fixed: HELPER.fixed });
    const versions = await rest(t.url, 'GET', '/api/v1/blueprints/incident_helper/versions');
    expect(versions.body.items.map((v: { version: number; note: string }) => [v.version, v.note])).toEqual([[1, 'first version'], [2, 'v2']]);
  });

  it('upgrades a holder of version 1 with a dry run: before and after', async () => {
    await seedHolder(t.app, 'agents', 'pay-helper', { blueprint: 'incident_helper', version: 1 });
    const agent = await rest(t.url, 'GET', '/api/v1/agents/agents/pay-helper');
    expect(agent.body.blueprint).toEqual({ blueprint: 'incident_helper', version: 1 });
    const listed = await rest(t.url, 'GET', '/api/v1/agents?blueprint=incident_helper');
    expect(listed.body.items.map((a: { name: string }) => a.name)).toEqual(['pay-helper']);
    const dry = await rest(t.url, 'POST', '/api/v1/blueprints/incident_helper/upgrade', { dryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.body.items).toEqual([
      expect.objectContaining({ namespace: 'agents', name: 'pay-helper', fromVersion: 1, outcome: 'would-update', before: expect.objectContaining({ systemMessage: 'SECRET-PROMPT-7731' }), after: expect.objectContaining({ systemMessage: 'SECRET-PROMPT-7731 v2' }) }),
    ]);
    expect((await rest(t.url, 'GET', '/api/v1/agents/agents/pay-helper')).body.blueprint.version).toBe(1);
  });

  it('rolls back to version 1 as version 3', async () => {
    const rolled = await rest(t.url, 'POST', '/api/v1/blueprints/incident_helper/rollback', { version: 1, note: 'back' });
    expect(rolled.status).toBe(200);
    expect(rolled.body).toMatchObject({ activeVersion: 3, body: { version: 3, rolledBackTo: 1, fixed: HELPER.fixed } });
  });

  it('refuses delete and rename with the holder listed; previews it in referees', async () => {
    const referees = await call(admin, 'list_blueprint_referees', { name: 'incident_helper' });
    expect(referees.structuredContent).toEqual({ name: 'incident_helper', holders: [{ namespace: 'agents', name: 'pay-helper', version: 1 }], counted: [] });
    const refused = await rest(t.url, 'DELETE', '/api/v1/blueprints/incident_helper');
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/agents\/pay-helper \(version 1\)/);
    const rename = await call(admin, 'rename_blueprint', { name: 'incident_helper', newName: 'incident_buddy' });
    expect(rename.isError).toBe(true);
    expect(text(rename)).toMatch(/cannot be renamed/);
  });

  it('deletes after the agent is gone, and stops serving the tool', async () => {
    await forgetHolder(t.app, 'agents', 'pay-helper');
    const before = changes;
    const deleted = await call(admin, 'delete_blueprint', { name: 'incident_helper' });
    expect(deleted.structuredContent).toEqual({ name: 'incident_helper', deleted: true });
    await waitFor(async () => changes, (n) => n > before);
    expect((await client.listTools()).tools.map((x) => x.name)).not.toContain('incident_helper');
    expect((await rest(t.url, 'GET', '/api/v1/blueprints/incident_helper')).status).toBe(404);
  });

  it('renames a blueprint nobody holds: the new tool is served, the old is gone', async () => {
    await rest(t.url, 'POST', '/api/v1/blueprints', { ...HELPER, name: 'chat_only', fixed: { modelConfig: 'm', toolset: ['preset:none'] }, open: [], defaults: {} });
    const renamed = await rest(t.url, 'POST', '/api/v1/blueprints/chat_only/rename', { newName: 'chat_buddy' });
    expect(renamed.status).toBe(200);
    const names = (await client.listTools()).tools.map((x) => x.name);
    expect(names).toContain('chat_buddy');
    expect(names).not.toContain('chat_only');
  });

  it('journals every blueprint write in the audit trail', async () => {
    const journal = await rest(t.url, 'GET', '/api/v1/operations?limit=100');
    const operations = journal.body.items.filter((o: { name: string }) => o.name === 'incident_helper').map((o: { operation: string }) => o.operation);
    expect(operations).toEqual(expect.arrayContaining(['create_blueprint', 'save_blueprint_version', 'rollback_blueprint', 'delete_blueprint']));
  });

  it('quarantines a blueprint whose stored body no longer passes the checks: not served, delete-only', async () => {
    await rest(t.url, 'POST', '/api/v1/blueprints', { ...HELPER, name: 'stale_one', note: undefined });
    expect((await client.listTools()).tools.map((x) => x.name)).toContain('stale_one');
    // A body a later release's rules refuse, as if stored before they tightened.
    const store = t.app.get(Store);
    const row = await store.client.blueprint.findUniqueOrThrow({ where: { name: 'stale_one' } });
    const stale = { ...HELPER, name: undefined, note: undefined, fixed: { ...HELPER.fixed, toolset: ['label:team=sre'] } } as never;
    await store.client.blueprintVersion.updateMany({ where: { blueprintId: row.id }, data: { body: stale } });
    // written as a write is: the row's active body and generation, and the store's generation
    const { value } = await store.client.storeGeneration.update({ where: { key: 'blueprints' }, data: { value: { increment: 1 } } });
    await store.client.blueprint.update({ where: { id: row.id }, data: { activeBody: stale, generation: value } });
    await t.app.get(BlueprintCatalog).sync();
    const listed = (await rest(t.url, 'GET', '/api/v1/blueprints')).body.items.find((b: { name: string }) => b.name === 'stale_one');
    expect(listed).toMatchObject({ conflicted: true, conflictedReason: expect.stringMatching(/fixed\.toolset\[0\]/) });
    expect((await client.listTools()).tools.map((x) => x.name)).not.toContain('stale_one');
    const save = await rest(t.url, 'POST', '/api/v1/blueprints/stale_one/versions', { ...HELPER, name: undefined });
    expect(save.status).toBe(409);
    expect(save.body.error.message).toMatch(/conflicted.*only delete clears it/);
    expect((await rest(t.url, 'POST', '/api/v1/blueprints/stale_one/rollback', { version: 1 })).status).toBe(409);
    expect((await rest(t.url, 'DELETE', '/api/v1/blueprints/stale_one')).status).toBe(200);
  });
});

describe('saving a version with an expectedVersion that is no version', () => {
  it('answers 400 naming expectedVersion, not a 409 saying the blueprint "is at version 1, not 1"', async () => {
    const created = await rest(t.url, 'POST', '/api/v1/blueprints', { ...HELPER, name: 'typed_version' });
    expect(created.status).toBe(201);
    for (const expectedVersion of ['1', 1.5]) {
      const save = await rest(t.url, 'POST', '/api/v1/blueprints/typed_version/versions', { ...HELPER, name: undefined, expectedVersion });
      expect(save.status).toBe(400);
      expect(save.body.error.details.map((d: { path: string }) => d.path)).toContain('expectedVersion');
    }
    expect((await rest(t.url, 'POST', '/api/v1/blueprints/typed_version/versions', { ...HELPER, name: undefined, expectedVersion: 1 })).status).toBe(201);
  });
});
