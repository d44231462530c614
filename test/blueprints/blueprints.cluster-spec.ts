// npm test: also on PostgreSQL — blueprint rows, origins and the holder upgrade recorded in the store
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { TestCluster } from '../support/cluster.js';
import { call as rest, startTestApp, type TestApp } from '../support/test-app.js';
import { call, connect } from '../mcp/mcp-support.js';
import { HELPER } from './blueprints-support.js';

jest.setTimeout(240_000);

/**
 * A blueprint's tool creating a real agent (the real helm and kube-apiserver), the agent's origin,
 * a real upgrade to a saved version, and delete refused until the agent is gone. Steps build on each other.
 */
describe('blueprints against a real API server', () => {
  let t: TestApp;
  let cluster: TestCluster;
  let client: Client;
  let ns: string;
  const name = 'pay-helper';

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    // The automatic reconciler is not under test here (test/lifecycle/reconciler.cluster-spec.ts is its
    // suite), and a finding of its own would race the assertions: off, as in the other cluster suites.
    t = await startTestApp({ KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '60', RECONCILE_AUTOMATIC: 'false' });
    ns = await cluster.freshNamespace('blueprint');
    client = await connect(t.url, '?toolsets=blueprints,blueprint-admin');
    expect((await rest(t.url, 'POST', '/api/v1/blueprints', { ...HELPER, defaults: { ...HELPER.defaults, namespace: ns } })).status).toBe(201);
  });

  afterAll(async () => {
    await client?.close();
    await t?.close();
  });

  it("creates an agent through the blueprint's tool: the Agent carries the fixed values, the record its origin", async () => {
    const result = await call(client, 'incident_helper', { name, displayName: 'Payments helper' });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ dryRun: false, agent: { namespace: ns, name, blueprint: { blueprint: 'incident_helper', version: 1 } } });
    const agent = await cluster.agent(ns, name);
    expect(agent.spec.declarative.systemMessage).toBe(HELPER.fixed.systemMessage);
    expect(agent.spec.declarative.modelConfig).toBe(HELPER.fixed.modelConfig);
    expect(agent.metadata.labels.tier).toBe('gold-tier');
    const listed = await rest(t.url, 'GET', `/api/v1/agents?blueprint=incident_helper&namespace=${ns}`);
    expect(listed.body.items.map((a: { name: string }) => a.name)).toEqual([name]);
  });

  it('upgrades the holder for real after a save: a new revision with the new fixed value, its own values kept', async () => {
    const saved = await call(client, 'save_blueprint_version', { ...HELPER, defaults: { ...HELPER.defaults, namespace: ns }, fixed: { ...HELPER.fixed, systemMessage: 'Triage, then hand over.' } });
    expect(saved.isError).toBeFalsy();
    const upgraded = await rest(t.url, 'POST', '/api/v1/blueprints/incident_helper/upgrade', {});
    expect(upgraded.status).toBe(200);
    expect(upgraded.body.items).toEqual([expect.objectContaining({ namespace: ns, name, fromVersion: 1, outcome: 'updated' })]);
    const agent = await rest(t.url, 'GET', `/api/v1/agents/${ns}/${name}`);
    expect(agent.body).toMatchObject({ revision: 2, blueprint: { blueprint: 'incident_helper', version: 2 }, values: { systemMessage: 'Triage, then hand over.', displayName: 'Payments helper' } });
    expect((await cluster.agent(ns, name)).spec.declarative.systemMessage).toBe('Triage, then hand over.');
    const again = await rest(t.url, 'POST', '/api/v1/blueprints/incident_helper/upgrade', {});
    expect(again.body.items).toEqual([]);
  });

  it('refuses delete while the agent holds the blueprint, and deletes once it is gone', async () => {
    const refused = await rest(t.url, 'DELETE', '/api/v1/blueprints/incident_helper');
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain(`${ns}/${name} (version 2)`);
    expect((await rest(t.url, 'DELETE', `/api/v1/agents/${ns}/${name}`)).status).toBe(200);
    expect((await rest(t.url, 'DELETE', '/api/v1/blueprints/incident_helper')).status).toBe(200);
  });
});
