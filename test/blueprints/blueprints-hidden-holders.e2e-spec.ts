// npm test: also on PostgreSQL — holder queries across namespaces the caller cannot see
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { ADMIN_TOKEN, authEnv, bearer, VIEWER_TOKEN } from '../auth/auth-support.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';
import { HELPER, seedHolder } from './blueprints-support.js';

jest.setTimeout(60_000);

/**
 * Holders in namespaces the caller may not read are never named: they are counted per namespace
 * pattern of the policy under which someone may delete them, and the answer says who that is.
 */
const POLICY = `
roles:
  viewer: [get_info, list_agents, get_agent]
  blueprint-keeper: [list_blueprints, get_blueprint, list_blueprint_referees, delete_blueprint, upgrade_blueprint_agents]
  cleaner: [get_agent, delete_agent]
  admin: ["*"]
bindings:
  - role: viewer
    subjects: ["token:viewer"]
    namespaces: ["team-a"]
  # Blueprints are not namespaced: their operations are granted under "*".
  - role: blueprint-keeper
    subjects: ["token:viewer"]
    namespaces: ["*"]
  - role: cleaner
    groups: [team-payments]
    namespaces: ["payments-*"]
  - role: admin
    subjects: ["token:ci-platform"]
    namespaces: ["*"]
`;

let t: TestApp;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bp-hidden-'));
  t = await startTestApp(authEnv(dir, undefined, POLICY));
  const created = await call(t.url, 'POST', '/api/v1/blueprints', HELPER, bearer(ADMIN_TOKEN));
  expect(created.status).toBe(201);
  await seedHolder(t.app, 'team-a', 'mine', { blueprint: HELPER.name, version: 1 });
  await seedHolder(t.app, 'payments-eu', 'pay-1', { blueprint: HELPER.name, version: 1 });
  await seedHolder(t.app, 'payments-us', 'pay-2', { blueprint: HELPER.name, version: 1 });
  await seedHolder(t.app, 'search', 'find-1', { blueprint: HELPER.name, version: 1 });
});

afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('blueprint holders the caller may not read', () => {
  it('are counted per namespace pattern that lets someone delete them, with who that is, never named', async () => {
    const referees = await call(t.url, 'GET', `/api/v1/blueprints/${HELPER.name}/referees`, undefined, bearer(VIEWER_TOKEN));
    expect(referees.status).toBe(200);
    expect(referees.body.holders).toEqual([{ namespace: 'team-a', name: 'mine', version: 1 }]);
    expect(referees.body.counted).toEqual([
      { namespaces: '*, payments-*', count: 2, summary: '2 agents you may not read; delete_agent there is granted to group team-payments, token:ci-platform' },
      { namespaces: '*', count: 1, summary: '1 agent you may not read; delete_agent there is granted to token:ci-platform' },
    ]);
    const shown = JSON.stringify(referees.body);
    for (const hidden of ['pay-1', 'pay-2', 'find-1', 'payments-eu', 'payments-us', 'search']) expect(shown).not.toContain(hidden);
  });

  it('a delete refused for them names the readable holder, counts the others and says who can clear them', async () => {
    const refused = await call(t.url, 'DELETE', `/api/v1/blueprints/${HELPER.name}`, undefined, bearer(VIEWER_TOKEN));
    expect(refused.status).toBe(409);
    const message: string = refused.body.error.message;
    expect(message).toContain('team-a/mine (version 1)');
    expect(message).toContain('2 agents in namespaces (*, payments-*) you may not read');
    expect(message).toContain('in *, payments-*: group team-payments, token:ci-platform');
    for (const hidden of ['pay-1', 'pay-2', 'find-1', 'payments-eu', 'search/']) expect(message).not.toContain(hidden);
  });

  it('an admin reads every holder by name', async () => {
    const referees = await call(t.url, 'GET', `/api/v1/blueprints/${HELPER.name}/referees`, undefined, bearer(ADMIN_TOKEN));
    expect(referees.body.holders.map((h: { name: string }) => h.name).sort()).toEqual(['find-1', 'mine', 'pay-1', 'pay-2']);
    expect(referees.body.counted).toEqual([]);
  });

  it('an upgrade names and moves only the holders the caller may read, and counts the others (also when asked for them by name)', async () => {
    const saved = await call(t.url, 'POST', `/api/v1/blueprints/${HELPER.name}/versions`, { ...HELPER, name: undefined, note: 'v2' }, bearer(ADMIN_TOKEN));
    expect(saved.status).toBe(201);
    const upgrade = await call(t.url, 'POST', `/api/v1/blueprints/${HELPER.name}/upgrade`, { dryRun: true }, bearer(VIEWER_TOKEN));
    expect(upgrade.status).toBe(200);
    expect(upgrade.body.items.map((i: { namespace: string; name: string }) => `${i.namespace}/${i.name}`)).toEqual(['team-a/mine']);
    expect(upgrade.body.notShown).toBe(3);
    const probed = await call(t.url, 'POST', `/api/v1/blueprints/${HELPER.name}/upgrade`, { dryRun: true, agents: ['payments-eu/pay-1'] }, bearer(VIEWER_TOKEN));
    expect(probed.body.items).toEqual([]);
    for (const answer of [upgrade, probed]) {
      const shown = JSON.stringify(answer.body);
      for (const hidden of ['pay-1', 'pay-2', 'find-1', 'payments-eu', 'payments-us', 'search']) expect(shown).not.toContain(hidden);
    }
  });
});
