// npm test: also on PostgreSQL — the outbox written in each write's transaction, deliveries kept in the store across a restart, two replicas contending for the dispatcher's lease
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { WebhookDispatcher as WebhookDispatcherRef } from '@app/agents';
import { RolloutsRepository } from '../../libs/agents/src/rollout/rollouts.repository.js';
import { call as callTool, connect } from '../mcp/mcp-support.js';
import { call, freshDatabaseUrl, startTestApp, type FreshDatabase, type TestApp } from '../support/test-app.js';
import { QUICK_WEBHOOKS, TestReceiver, until, webhooksFile } from './events-support.js';

jest.setTimeout(120_000);

/**
 * Change events delivered to webhooks (docs/contract.md §14), with blueprint writes (store
 * transactions, no cluster needed): each committed write arrives once, signed, in commit order per
 * subject; a refused write sends nothing; a receiver that was down and a service restarted
 * meanwhile lose nothing; two replicas deliver each event once per subscription.
 */
const SECRET = 'a-webhook-secret-of-some-length';
const blueprint = (name: string, systemMessage = 'first') => ({
  name,
  description: 'Creates an incident helper.',
  fixed: { modelConfig: 'm', toolset: ['preset:read-only'], systemMessage },
  open: ['displayName'],
  defaults: { namespace: 'agents' },
});
const version = (systemMessage: string, expectedVersion?: number) => ({ ...blueprint('x', systemMessage), name: undefined, ...(expectedVersion && { expectedVersion }) });

describe('change events delivered to webhooks', () => {
  let dir: string;
  let db: FreshDatabase;
  const apps: TestApp[] = [];
  const receiver = new TestReceiver(SECRET);

  const start = async (env: Record<string, string> = {}) => {
    const hooks = env.WEBHOOKS_FILE ?? webhooksFile(dir, 'chat.yaml', [{ name: 'chat', url: receiver.url(), secret: SECRET }]);
    const app = await startTestApp({ DATABASE_URL: db.url, ...QUICK_WEBHOOKS, ...env, WEBHOOKS_FILE: hooks });
    apps.push(app);
    return app;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'am-webhooks-'));
    await receiver.up();
  });

  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
    await db?.drop();
  });

  afterAll(async () => {
    await receiver.down();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends each committed write once, signed, in commit order; refused writes send nothing; GET /api/v1/events lists the same', async () => {
    db = await freshDatabaseUrl();
    receiver.received.length = 0;
    const t = await start();
    expect((await call(t.url, 'POST', '/api/v1/blueprints', blueprint('helper'))).status).toBe(201);
    expect((await call(t.url, 'POST', '/api/v1/blueprints/helper/versions', version('second'))).status).toBe(201);
    // refused: a stale expectedVersion, a taken name, an agent the cluster cannot take (no cluster here), a toolset the grammar refuses
    expect((await call(t.url, 'POST', '/api/v1/blueprints/helper/versions', version('stale', 1))).status).toBe(409);
    expect((await call(t.url, 'POST', '/api/v1/blueprints', blueprint('helper'))).status).toBe(400);
    expect((await call(t.url, 'POST', '/api/v1/agents', { namespace: 'agents', name: 'no-cluster', modelConfig: 'm', toolset: ['preset:none'] })).status).toBeGreaterThanOrEqual(400);
    expect((await call(t.url, 'POST', '/api/v1/agents', { namespace: 'agents', name: 'bad-toolset', modelConfig: 'm', toolset: ['no such thing'] })).status).toBe(400);
    expect((await call(t.url, 'POST', '/api/v1/blueprints/helper/rollback', { version: 1 })).status).toBe(200);
    expect((await call(t.url, 'DELETE', '/api/v1/blueprints/helper')).status).toBe(200);

    const types = ['created', 'updated', 'rolled_back', 'deleted'].map((what) => `io.agent-manager.blueprint.${what}`);
    await until('four events', () => receiver.accepted().length >= 4);
    await new Promise((resolve) => setTimeout(resolve, 300)); // nothing more comes
    const got = receiver.accepted();
    expect(got.map((event) => event.type)).toEqual(types);
    expect(receiver.received.every((r) => r.signed)).toBe(true);
    expect(got.every((event) => event.subject === 'helper' && event.specversion === '1.0' && event.source === '/agent-manager/blueprints')).toBe(true);
    expect(new Set(got.map((event) => event.id)).size).toBe(4);
    expect(got.map((event) => Number(event.sequence))).toEqual([...got.map((event) => Number(event.sequence))].sort((a, b) => a - b));
    expect(got[1].data).toMatchObject({ actor: expect.any(String), version: 2, changes: [{ path: 'fixed', before: expect.anything(), after: expect.anything() }] });
    expect(got[2].data).toMatchObject({ version: 3, rolledBackTo: 1 });

    const listed = await call(t.url, 'GET', '/api/v1/events?limit=2');
    expect(listed.status).toBe(200);
    const rest = await call(t.url, 'GET', `/api/v1/events?cursor=${listed.body.nextCursor}`);
    expect([...listed.body.items, ...rest.body.items].map((event: { id: string }) => event.id)).toEqual(got.map((event) => event.id));
    expect(rest.body.items[0]).toMatchObject({ specversion: '1.0', type: types[2], subject: 'helper', data: { rolledBackTo: 1 } });
    const deleted = await call(t.url, 'GET', '/api/v1/events?type=io.agent-manager.blueprint.d*');
    expect(deleted.body.items.map((event: { type: string }) => event.type)).toEqual([types[3]]);
    expect((await call(t.url, 'GET', '/api/v1/events?cursor=not-one')).status).toBe(400);

    // the same on MCP: list_events in the audit toolset
    const mcp = await connect(t.url, '?toolsets=audit');
    try {
      const result = await callTool(mcp, 'list_events', { subject: 'helper', limit: 10 });
      expect(result.isError).toBeFalsy();
      expect((result.structuredContent as { items: { id: string }[] }).items.map((event) => event.id)).toEqual(got.map((event) => event.id));
    } finally {
      await mcp.close();
    }
  });

  it('refuses to start with a WEBHOOKS_FILE entry it cannot use, naming the entry and field', async () => {
    db = await freshDatabaseUrl();
    const bad = webhooksFile(dir, 'bad.yaml', [{ name: 'chat', url: 'ftp://example.com', secret: SECRET }]);
    await expect(start({ WEBHOOKS_FILE: bad })).rejects.toThrow(/webhook 1 \(chat\), url: must be an http:\/\/ or https:\/\/ URL/);
  });

  it("records a fleet rollout's state changes as events, and none for a move refused because the rollout was elsewhere", async () => {
    db = await freshDatabaseUrl();
    const t = await start();
    const rollouts = t.app.get(RolloutsRepository);
    const request = { selector: {}, waves: [1], gate: { timeoutSeconds: 60 }, failureBudget: 0 };
    await rollouts.create({ id: 'r-0123456789ab', state: 'running', chart: { ref: 'oci://charts/agent', version: '1.0.0' }, request, createdBy: 'token:ci-platform', caller: {} }, []);
    expect(await rollouts.transition('r-0123456789ab', ['running'], 'paused')).toBe(true);
    expect(await rollouts.transition('r-0123456789ab', ['running'], 'cancelled')).toBe(false);
    expect(await rollouts.transition('r-0123456789ab', ['paused'], 'running')).toBe(true);
    expect(await rollouts.transition('r-0123456789ab', ['running'], 'succeeded', 'all moved')).toBe(true);
    const events = await call(t.url, 'GET', '/api/v1/events?type=io.agent-manager.rollout.*');
    expect(events.body.items.map((event: { type: string; subject: string; data: { actor: string } }) => [event.type, event.subject, event.data.actor])).toEqual(
      ['started', 'paused', 'resumed', 'succeeded'].map((what) => [`io.agent-manager.rollout.${what}`, 'r-0123456789ab', 'token:ci-platform']),
    );
    expect(events.body.items[3]).toMatchObject({ source: '/agent-manager/rollouts', data: { state: 'succeeded', message: 'all moved' } });
  });

  it('loses nothing while the receiver is down and the service restarts meanwhile: every event arrives afterwards, in order', async () => {
    db = await freshDatabaseUrl();
    receiver.received.length = 0;
    await receiver.down();
    const first = await start();
    expect((await call(first.url, 'POST', '/api/v1/blueprints', blueprint('one'))).status).toBe(201);
    expect((await call(first.url, 'POST', '/api/v1/blueprints', blueprint('two'))).status).toBe(201);
    expect((await call(first.url, 'POST', '/api/v1/blueprints/one/versions', version('again'))).status).toBe(201);
    // the dispatcher tried and failed (connection refused), and keeps the attempts in the store
    await until('failed attempts', async () => (await first.store.client.eventDelivery.count({ where: { attempts: { gt: 0 }, state: 'pending' } })) >= 2);
    await apps.splice(0)[0].close();

    const second = await start();
    expect((await call(second.url, 'POST', '/api/v1/blueprints/two/versions', version('later'))).status).toBe(201);
    await receiver.up();
    await until('four events', () => receiver.accepted().length >= 4);
    const got = receiver.accepted();
    expect(got.map((event) => `${event.subject} ${event.type}`)).toEqual(
      expect.arrayContaining(['one io.agent-manager.blueprint.created', 'two io.agent-manager.blueprint.created', 'one io.agent-manager.blueprint.updated', 'two io.agent-manager.blueprint.updated']),
    );
    for (const subject of ['one', 'two']) {
      expect(got.filter((event) => event.subject === subject).map((event) => event.type)).toEqual(['io.agent-manager.blueprint.created', 'io.agent-manager.blueprint.updated']);
    }
    expect(new Set(got.map((event) => event.id)).size).toBe(4);
  });

  it('gives an event up as dead after WEBHOOK_MAX_ATTEMPTS, holding the later events of its subject until then', async () => {
    db = await freshDatabaseUrl();
    receiver.received.length = 0;
    receiver.refuse = (event) => event.subject === 'refused' && event.type.endsWith('.created');
    try {
      const t = await start({ WEBHOOK_MAX_ATTEMPTS: '3' });
      expect((await call(t.url, 'POST', '/api/v1/blueprints', blueprint('refused'))).status).toBe(201);
      expect((await call(t.url, 'POST', '/api/v1/blueprints/refused/versions', version('next'))).status).toBe(201);
      expect((await call(t.url, 'POST', '/api/v1/blueprints', blueprint('other'))).status).toBe(201);
      await until('the update after the dead create', () => receiver.accepted().some((event) => event.subject === 'refused'));
      const refused = receiver.received.filter((r) => r.event.subject === 'refused').map((r) => `${r.event.type} ${r.status}`);
      expect(refused).toEqual([...Array(3).fill('io.agent-manager.blueprint.created 500'), 'io.agent-manager.blueprint.updated 204']);
      expect(receiver.accepted().some((event) => event.subject === 'other')).toBe(true);
      const dead = await t.store.client.eventDelivery.findMany({ where: { state: 'dead' } });
      expect(dead).toEqual([expect.objectContaining({ subject: 'refused', attempts: 3, lastError: 'the receiver answered HTTP 500' })]);
    } finally {
      receiver.refuse = () => false;
    }
  });

  it('two replicas on one store deliver each event once per subscription; filters select', async () => {
    db = await freshDatabaseUrl();
    receiver.received.length = 0;
    const hooks = webhooksFile(dir, 'three.yaml', [
      { name: 'all', url: receiver.url('/all'), secret: SECRET },
      { name: 'created-only', url: receiver.url('/created'), secret: SECRET, types: ['io.agent-manager.*.created'] },
      { name: 'team-a', url: receiver.url('/team-a'), secret: SECRET, namespaces: ['team-a'] },
    ]);
    // a short lease: the replica left contends again every second
    const a = await start({ WEBHOOKS_FILE: hooks, LEASE_TTL_SECONDS: '3' });
    const b = await start({ WEBHOOKS_FILE: hooks, LEASE_TTL_SECONDS: '3' });
    const writes = [];
    for (let i = 0; i < 6; i++) writes.push(call(i % 2 ? b.url : a.url, 'POST', '/api/v1/blueprints', blueprint(`bp_${i}`)));
    for (let i = 0; i < 6; i++) writes.push(call(i % 2 ? a.url : b.url, 'POST', `/api/v1/blueprints/bp_${i}/versions`, version(`v${i}`)));
    // the versions may race their creates: what committed is what must arrive
    await Promise.all(writes);
    const committed = (await a.store.client.changeEvent.findMany({ orderBy: { seq: 'asc' } })).map((row) => row.id);
    expect(committed.length).toBeGreaterThanOrEqual(6);
    await until('every event at /all', () => receiver.accepted('/all').length >= committed.length);
    await new Promise((resolve) => setTimeout(resolve, 500)); // no second copy follows
    expect(receiver.accepted('/all').map((event) => event.id).sort()).toEqual([...committed].sort());
    expect(receiver.accepted('/created').map((event) => event.type)).toEqual(Array(6).fill('io.agent-manager.blueprint.created'));
    expect(receiver.accepted('/team-a')).toEqual([]); // blueprints have no namespace
    const leaders = [a, b].filter((app) => app.app.get(WebhookDispatcherRef).leading);
    expect(leaders).toHaveLength(1);

    // the delivering replica stops (giving its lease up): the other one takes over and delivers what follows, once
    const other = leaders[0] === a ? b : a;
    await leaders[0].close();
    apps.splice(apps.indexOf(leaders[0]), 1);
    expect((await call(other.url, 'POST', '/api/v1/blueprints', blueprint('after_handover'))).status).toBe(201);
    await until('the event after the handover', () => receiver.accepted('/all').some((event) => event.subject === 'after_handover'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.accepted('/all')).toHaveLength(committed.length + 1);
    expect(other.app.get(WebhookDispatcherRef).leading).toBe(true);
  });
});
