// npm test: also on PostgreSQL — the store read page by page in listing order, labels and origins filtered in SQL, versions compared for conflicts
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { parse } from 'yaml';
import { sha256Hex } from '@app/auth';
import { call as callTool, connect } from '../mcp/mcp-support.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';
import { edited, exportText, importYaml, lines, seedAgent } from './transfer-support.js';

jest.setTimeout(120_000);

const BLUEPRINT = {
  name: 'helper',
  description: 'Creates a helper for a team.',
  fixed: { modelConfig: 'default-model-config', toolset: ['preset:read-only'] },
  open: ['systemMessage', 'labels'],
  defaults: { namespace: 'team-a' },
};

/**
 * Export and the import plan (docs/contract.md §12) without a cluster: the document, its bytes, its
 * filters, the plan of an edited document (creates, updates, conflicts, prunes), refusals per item,
 * and bad documents refused naming the field. Applying is in transfer.cluster-spec.ts (real helm).
 */
describe('agents as code: export and the import plan', () => {
  let t: TestApp;
  let mcp: Client;

  beforeAll(async () => {
    t = await startTestApp();
    expect((await call(t.url, 'POST', '/api/v1/blueprints', BLUEPRINT)).status).toBe(201);
    for (let i = 0; i < 10; i += 1) {
      await seedAgent(t.app, 'team-a', `agent-${i}`, { labels: { team: 'a', tier: i < 5 ? 'gold' : 'silver' }, description: `agent number ${i}` }, i === 0 ? { blueprint: 'helper', version: 1 } : undefined);
    }
    await seedAgent(t.app, 'team-b', 'other', { systemMessage: 'line one\nline two: with a colon\n' });
    mcp = await connect(t.url, '?toolsets=admin');
  });

  afterAll(async () => {
    await mcp?.close();
    await t?.close();
  });

  it('exports the same bytes twice, YAML by default, agents by namespace and name, no times, values or journal', async () => {
    const first = await exportText(t.url);
    expect(first.status).toBe(200);
    expect(first.type).toMatch(/^application\/yaml/);
    expect((await exportText(t.url)).text).toBe(first.text);
    expect(first.text).toMatch(/^apiVersion: agent-manager.io\/v1\nkind: AgentFleet\nselection: {}\nblueprints:\n {2}- name: helper\n {4}version: 1\n/);
    const doc = parse(first.text);
    expect(doc.agents.map((a: { namespace: string; name: string }) => `${a.namespace}/${a.name}`)).toEqual([...Array.from({ length: 10 }, (_, i) => `team-a/agent-${i}`), 'team-b/other']);
    expect(doc.agents[0]).toEqual({
      namespace: 'team-a',
      name: 'agent-0',
      version: 1,
      blueprint: { name: 'helper', version: 1 },
      chart: { name: 'agent', version: expect.any(String) },
      spec: { modelConfig: 'default-model-config', toolset: ['preset:read-only'], description: 'agent number 0', labels: { team: 'a', tier: 'gold' } },
    });
    expect(doc.agents[10].spec.systemMessage).toBe('line one\nline two: with a colon\n');
    expect(first.text).not.toMatch(/createdAt|updatedAt|lastOperation|values|operation/);
  });

  it('filters by namespace, labels and blueprint, and records the filters as the selection', async () => {
    const byLabel = parse((await exportText(t.url, '?namespace=team-a&label=tier=gold&label=team=a')).text);
    expect(byLabel.selection).toEqual({ namespaces: ['team-a'], labels: { team: 'a', tier: 'gold' } });
    expect(byLabel.agents.map((a: { name: string }) => a.name)).toEqual(['agent-0', 'agent-1', 'agent-2', 'agent-3', 'agent-4']);
    const byBlueprint = parse((await exportText(t.url, '?blueprint=helper')).text);
    expect(byBlueprint.agents.map((a: { name: string }) => a.name)).toEqual(['agent-0']);
    expect(byBlueprint.blueprints.map((b: { name: string }) => b.name)).toEqual(['helper']);
    const saved = await call(t.url, 'POST', '/api/v1/blueprints/helper/versions', { ...BLUEPRINT, name: undefined, description: 'Creates a helper, second edition.' });
    expect(saved.status).toBe(201);
    const history = parse((await exportText(t.url, '?blueprint=helper&blueprintHistory=true')).text).blueprints[0];
    expect(history).toMatchObject({ name: 'helper', version: 2, description: 'Creates a helper, second edition.' });
    expect(history.history.map((v: { version: number; description: string }) => [v.version, v.description])).toEqual([
      [1, BLUEPRINT.description],
      [2, 'Creates a helper, second edition.'],
    ]);
    const bad = await exportText(t.url, '?label=tier');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error.details[0].path).toMatch(/^label/);
  });

  it('answers the JSON form on Accept: application/json, and the same YAML over MCP', async () => {
    const yaml = (await exportText(t.url, '?namespace=team-b')).text;
    const json = await exportText(t.url, '?namespace=team-b', { accept: 'application/json' });
    expect(json.type).toMatch(/^application\/json/);
    expect(JSON.parse(json.text)).toEqual(parse(yaml));
    const tool = await callTool(mcp, 'export_agents', { namespace: ['team-b'] });
    expect(tool.isError).toBeFalsy();
    expect(tool.structuredContent).toEqual({ yaml, agents: 1, blueprints: 1 });
  });

  it('plans an unchanged document as unchanged, item by item', async () => {
    const res = await importYaml(t.url, (await exportText(t.url)).text, '?dryRun=true');
    expect(res.status).toBe(200);
    expect(res.body.summary).toEqual({ unchanged: 12 });
    expect(res.body.dryRun).toBe(true);
    expect(res.body.digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it('plans exactly the 3 agents an edit changed, with their fields before → after', async () => {
    const yaml = edited((await exportText(t.url, '?namespace=team-a')).text, (doc) => {
      doc.agents[2].spec.toolset = ['preset:none'];
      doc.agents[5].spec.labels.tier = 'gold';
      delete doc.agents[7].spec.description;
    });
    const res = await importYaml(t.url, yaml, '?dryRun=true');
    expect(res.status).toBe(200);
    expect(lines(res.body).filter((line) => !line.endsWith('unchanged → unchanged'))).toEqual([
      'agent team-a/agent-2: update → planned',
      'agent team-a/agent-5: update → planned',
      'agent team-a/agent-7: update → planned',
    ]);
    const changes = Object.fromEntries(res.body.items.filter((i: { action: string }) => i.action === 'update').map((i: { name: string; changes: unknown }) => [i.name, i.changes]));
    expect(changes).toEqual({
      'agent-2': [{ path: 'toolset', before: ['preset:read-only'], after: ['preset:none'] }],
      'agent-5': [{ path: 'labels.tier', before: 'silver', after: 'gold' }],
      'agent-7': [{ path: 'description', before: 'agent number 7' }],
    });
    // Nothing was written by the plan.
    const read = await call(t.url, 'GET', '/api/v1/agents/team-a/agent-2');
    expect(read.body.spec.toolset).toEqual(['preset:read-only']);
  });

  it('plans a conflict for an agent changed since the export, a create for one the store lacks', async () => {
    const yaml = edited((await exportText(t.url, '?namespace=team-b')).text, (doc) => {
      doc.agents[0].version = 7;
      doc.agents[0].spec.toolset = ['preset:none'];
      doc.agents.push({ namespace: 'team-b', name: 'newcomer', spec: { modelConfig: 'default-model-config', toolset: ['preset:none'] } });
    });
    const res = await importYaml(t.url, yaml, '?dryRun=true');
    expect(lines(res.body)).toEqual(['blueprint helper: unchanged → unchanged', 'agent team-b/newcomer: create → planned', 'agent team-b/other: conflict → conflict']);
    expect(res.body.items[2].reason).toMatch(/at version 1 in the store, not 7 as exported/);
  });

  it("prunes only the selection's agents the document no longer lists, and only with prune", async () => {
    const yaml = edited((await exportText(t.url, '?namespace=team-a&label=tier=silver')).text, (doc) => {
      doc.agents = doc.agents.filter((a: { name: string }) => a.name !== 'agent-6' && a.name !== 'agent-8');
    });
    const without = await importYaml(t.url, yaml, '?dryRun=true');
    expect(without.body.summary).toEqual({ unchanged: 4 });
    const pruning = await importYaml(t.url, yaml, '?dryRun=true&prune=true');
    expect(pruning.body.prune).toBe(true);
    expect(lines(pruning.body).filter((line) => line.includes('prune'))).toEqual(['agent team-a/agent-6: prune → planned', 'agent team-a/agent-8: prune → planned']);
    const inDocument = await importYaml(t.url, edited(yaml, (doc) => (doc.prune = true)), '?dryRun=true');
    expect(inDocument.body.summary).toEqual({ unchanged: 4, planned: 2 });
  });

  it('takes the JSON form and the MCP tool alike', async () => {
    const yaml = (await exportText(t.url, '?namespace=team-b')).text;
    const rest = await call(t.url, 'POST', '/api/v1/import?dryRun=true', parse(yaml));
    expect(rest.status).toBe(200);
    expect(rest.body.summary).toEqual({ unchanged: 2 });
    const tool = await callTool(mcp, 'import_agents', { document: yaml, dryRun: true });
    expect(tool.isError).toBeFalsy();
    expect(tool.structuredContent).toEqual(rest.body);
  });

  it.each([
    ['a spec the create rules refuse', (doc: any) => (doc.agents[0].spec.toolset = ['everything']), 'agents[0].spec.toolset[0]'],
    ['an unknown field', (doc: any) => (doc.agents[0].colour = 'red'), 'agents[0].colour'],
    ['a wrong kind', (doc: any) => (doc.kind = 'Fleet'), 'kind'],
    ['a blueprint body the blueprint rules refuse', (doc: any) => (doc.blueprints[0].open = ['modelConfig']), 'blueprints[0].open'],
  ])('refuses a document with %s: 400 naming the field path', async (_case, edit, path) => {
    const res = await importYaml(t.url, edited((await exportText(t.url, '?namespace=team-b')).text, edit), '?dryRun=true');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
  });

  it('refuses text that is not YAML, and a body sent as another type', async () => {
    const bad = await importYaml(t.url, 'agents: [unclosed', '?dryRun=true');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toBe('document');
    const plain = await fetch(`${t.url}/api/v1/import`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    expect(plain.status).toBe(400);
  });

  it('takes a document of 100 agents with long system messages, past the default body limit', async () => {
    const agents = Array.from({ length: 100 }, (_, i) => ({
      namespace: 'bulk',
      name: `bulk-${String(i).padStart(3, '0')}`,
      spec: { modelConfig: 'default-model-config', toolset: ['preset:read-only', 'server:github'], systemMessage: 'x'.repeat(15_000), labels: { team: 'bulk' } },
    }));
    const yaml = edited('apiVersion: agent-manager.io/v1\nkind: AgentFleet\n', (doc) => (doc.agents = agents));
    expect(Buffer.byteLength(yaml)).toBeGreaterThan(1_048_576);
    const res = await importYaml(t.url, yaml, '?dryRun=true');
    expect(res.status).toBe(200);
    expect(res.body.summary).toEqual({ planned: 100 });
  });
});

describe('agents as code: who may export and import', () => {
  let t: TestApp;
  let dir: string;
  const ADMIN = 'am_admin_7d1c0b9a8f7e6d5c4b3a29180716253a';
  const TEAM = 'am_team_1a2b3c4d5e6f708192a3b4c5d6e7f801';
  const auth = (token: string) => ({ authorization: `Bearer ${token}` });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'transfer-auth-'));
    writeFileSync(join(dir, 'tokens.yaml'), `- {name: admin, sha256: ${sha256Hex(ADMIN)}}\n- {name: team, sha256: ${sha256Hex(TEAM)}}\n`);
    writeFileSync(
      join(dir, 'policy.yaml'),
      [
        'roles:',
        '  team: [list_agents, get_agent, create_agent, update_agent, delete_agent, import_agents]',
        '  admin: ["*"]',
        'bindings:',
        '  - {role: admin, subjects: ["token:admin"], namespaces: ["*"]}',
        '  - {role: team, subjects: ["token:team"], namespaces: ["team-a"]}',
        '',
      ].join('\n'),
    );
    t = await startTestApp({ API_TOKENS_FILE: join(dir, 'tokens.yaml'), AUTHZ_POLICY_FILE: join(dir, 'policy.yaml') });
    await seedAgent(t.app, 'team-a', 'mine');
    await seedAgent(t.app, 'team-b', 'theirs');
  });

  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('exports to admins only', async () => {
    expect((await exportText(t.url, '', auth(ADMIN))).status).toBe(200);
    const refused = await exportText(t.url, '?namespace=team-a', auth(TEAM));
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.text).error.message).toMatch(/export_agents/);
  });

  it("plans the items the caller may not write as refused, the others as planned", async () => {
    const yaml = edited((await exportText(t.url, '', auth(ADMIN))).text, (doc) => {
      for (const agent of doc.agents) agent.spec.toolset = ['preset:none'];
    });
    const res = await importYaml(t.url, yaml, '?dryRun=true', auth(TEAM));
    expect(res.status).toBe(200);
    expect(lines(res.body)).toEqual(['agent team-a/mine: update → planned', 'agent team-b/theirs: update → refused']);
  });
});
