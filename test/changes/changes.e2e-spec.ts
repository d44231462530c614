// npm test: also on PostgreSQL — proposals, conditional state changes, expiry by the store clock and the namespace filter in SQL
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema, type LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import { ChangesService } from '@app/agents';
import { AUDIENCE, bearer, connectAs, seedAgent } from '../auth/auth-support.js';
import { TestIssuer } from '../auth/oidc-issuer.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';
import { approvalEnv, TOKENS } from './support.js';

/**
 * Four eyes without a cluster (docs/approvals.md): a write an approval rule selects becomes a
 * proposal (its dry run is `helm template` only), and every review step that does not apply —
 * the proposer's own approval, the first of two, reject, withdraw, expiry, an agent that moved —
 * is decided here. The applying approval runs helm: test/changes/changes.cluster-spec.ts.
 */
let t: TestApp;
/** A second replica on the same store: the proposer's session is held by t, the decisions are made here. */
let other: TestApp;
let dir: string;
let issuer: TestIssuer;
const as = (token: string) => bearer(token);
const update = (ns: string, name: string, description: string, token = TOKENS.llm) => call(t.url, 'PATCH', `/api/v1/agents/${ns}/${name}`, { description }, as(token));
const approve = (id: string, token: string, comment?: string) => call(t.url, 'POST', `/api/v1/changes/${id}/approve`, comment ? { comment } : {}, as(token));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'changes-e2e-'));
  issuer = await TestIssuer.start();
  // MCP sessions outlive the hours the tests move the clock by (expiry), so a listening proposer stays open.
  const env = { ...approvalEnv(dir), OIDC_ISSUER_URL: issuer.url, OIDC_AUDIENCE: AUDIENCE, MCP_SESSION_IDLE_SECONDS: '86400' };
  t = await startTestApp(env);
  other = await startTestApp({ ...env, DATABASE_URL: t.databaseUrl, REPLICA_ID: 'other' }, t.clock);
  for (const [ns, name] of [
    ['prod-eu', 'biller'],
    ['prod-eu', 'moving'],
    ['prod-eu', 'lapsing'],
    ['prod-eu', 'resumed'],
    ['prod-eu', 'told'],
    ['prod-eu', 'swept'],
    ['prod-critical', 'core'],
    ['dev-a', 'toy'],
  ]) {
    await seedAgent(t.store, ns, name);
  }
});

afterAll(async () => {
  await other?.close();
  await t?.close();
  await issuer?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a write an approval rule selects becomes a proposal', () => {
  it('answers 202 with Location and the diff, journals the proposal, and applies nothing', async () => {
    const res = await update('prod-eu', 'biller', 'reviewed first');
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('pending_approval');
    expect(res.headers.get('location')).toBe(`/api/v1/changes/${res.body.change.id}`);
    expect(res.body.change.diff).toContain('+');
    expect(res.body.change.diff).toContain('reviewed first');
    expect(res.body.change.approvers).toEqual([{ pattern: 'prod-*', subjects: ['token:alice', 'token:bob', 'token:llm'], groups: [] }]);
    const agent = await call(t.url, 'GET', '/api/v1/agents/prod-eu/biller', undefined, as(TOKENS.admin));
    expect([agent.body.version, agent.body.spec.description ?? '']).toEqual([1, '']);
    const change = await call(t.url, 'GET', `/api/v1/changes/${res.body.change.id}`, undefined, as(TOKENS.alice));
    expect(change.body).toMatchObject({ state: 'pending', operation: 'update_agent', proposer: 'token:llm', plannedVersion: 1, required: 1, request: { description: 'reviewed first' } });
    const journal = await call(t.url, 'GET', '/api/v1/operations?namespace=prod-eu&name=biller', undefined, as(TOKENS.admin));
    expect(journal.body.items.map((op: { operation: string; outcome: string }) => [op.operation, op.outcome])).toEqual([['update_agent', 'proposed']]);
  });

  it('answers a retry with the same idempotency key with the same change; the key with other arguments is refused', async () => {
    const send = (description: string) => call(t.url, 'PATCH', '/api/v1/agents/prod-eu/biller', { description }, { ...as(TOKENS.llm), 'idempotency-key': 'retry-me-1' });
    const [first, retry] = await Promise.all([send('once'), send('once')]);
    expect([first.status, retry.status]).toEqual([202, 202]);
    expect(retry.body.change.id).toBe(first.body.change.id);
    expect(retry.body.after).toEqual(first.body.after);
    const other = await send('other');
    expect([other.status, other.body.error.details]).toEqual([409, [{ path: 'requestId', message: `already used for change ${first.body.change.id}` }]]);
  });

  it('selects an OIDC caller by the groups its token carries, and names it the proposer', async () => {
    const res = await call(t.url, 'PATCH', '/api/v1/agents/prod-eu/biller', { description: 'from oidc' }, bearer(await issuer.token(AUDIENCE)));
    expect([res.status, res.body.status]).toEqual([202, 'pending_approval']);
    const change = await call(t.url, 'GET', res.headers.get('location')!, undefined, as(TOKENS.alice));
    expect(change.body.proposer).not.toMatch(/^token:/);
    expect(change.body.state).toBe('pending');
  });

  it('runs as today where no rule selects the write (a dev namespace; a dry run)', async () => {
    const dryRun = await call(t.url, 'PATCH', '/api/v1/agents/prod-eu/biller', { description: 'x', dryRun: true }, as(TOKENS.llm));
    expect([dryRun.status, dryRun.body.status, dryRun.body.dryRun]).toEqual([200, undefined, true]);
    // dev-a is not selected: the write runs (and fails at helm: no cluster here), it is not proposed
    const dev = await update('dev-a', 'toy', 'no review');
    expect(dev.status).not.toBe(202);
    expect(dev.body.status).toBeUndefined();
  });

  it('refuses the proposer approving its own change, and someone without the approver role; a second person approves', async () => {
    const { body } = await update('prod-eu', 'moving', 'moves');
    const own = await approve(body.change.id, TOKENS.llm);
    expect(own.status).toBe(403);
    expect(own.body.error.message).toContain('token:llm proposed change');
    // the admin holds every operation but not the rule's approver role: approving is the role's
    const admin = await approve(body.change.id, TOKENS.admin);
    expect(admin.status).toBe(403);
    expect(admin.body.error.message).toContain('needs role approver bound in namespace "prod-eu"');
    const refusals = await call(t.url, 'GET', '/api/v1/operations?namespace=prod-eu&name=moving&outcome=refused', undefined, as(TOKENS.admin));
    expect(refusals.body.items.map((op: { subject: string }) => op.subject).sort()).toEqual(['token:ci-platform', 'token:llm']);
  });

  it('ends conflicted, saying to re-propose, when the agent moved since the proposal was planned', async () => {
    const { body } = await update('prod-eu', 'moving', 'stale');
    await t.store.client.agent.update({ where: { id: 'prod-eu-moving' }, data: { version: 2 } });
    const approved = await approve(body.change.id, TOKENS.alice, 'looks fine');
    expect(approved.status).toBe(200);
    expect(approved.body.state).toBe('conflicted');
    expect(approved.body.message).toContain('propose the change again');
    expect(approved.body.approvals).toEqual([expect.objectContaining({ subject: 'token:alice', comment: 'looks fine' })]);
    expect((await approve(body.change.id, TOKENS.bob)).status).toBe(409);
  });

  it('with two approvals required, the first does not apply and the same person cannot count twice', async () => {
    const { body } = await update('prod-critical', 'core', 'two eyes more');
    const first = await approve(body.change.id, TOKENS.alice);
    expect([first.status, first.body.state, first.body.approvals.length, first.body.required]).toEqual([200, 'pending', 1, 2]);
    expect((await approve(body.change.id, TOKENS.alice)).status).toBe(409);
    const agent = await call(t.url, 'GET', '/api/v1/agents/prod-critical/core', undefined, as(TOKENS.admin));
    expect(agent.body.version).toBe(1);
  });

  it('rejects (an approver, with a comment) and withdraws (the proposer only), each journaled', async () => {
    const rejected = (await update('prod-eu', 'biller', 'rejected one')).body.change.id;
    const rejection = await call(t.url, 'POST', `/api/v1/changes/${rejected}/reject`, { comment: 'not during the freeze' }, as(TOKENS.bob));
    expect(rejection.body).toMatchObject({ state: 'rejected', decidedBy: 'token:bob', comment: 'not during the freeze' });
    const withdrawn = (await update('prod-eu', 'biller', 'withdrawn one')).body.change.id;
    expect((await call(t.url, 'POST', `/api/v1/changes/${withdrawn}/withdraw`, {}, as(TOKENS.alice))).status).toBe(403);
    const withdrawal = await call(t.url, 'POST', `/api/v1/changes/${withdrawn}/withdraw`, {}, as(TOKENS.llm));
    expect(withdrawal.body).toMatchObject({ state: 'withdrawn', decidedBy: 'token:llm' });
    expect((await approve(withdrawn, TOKENS.alice)).status).toBe(409);
    const journal = await call(t.url, 'GET', '/api/v1/operations?namespace=prod-eu&name=biller&outcome=succeeded', undefined, as(TOKENS.admin));
    expect(journal.body.items.map((op: { operation: string; subject: string }) => `${op.operation} ${op.subject}`)).toEqual(['withdraw_change token:llm', 'reject_change token:bob']);
    // each step is a change event of the agent (docs/contract.md §14); the refused withdrawal and approval are none
    const events = await call(t.url, 'GET', '/api/v1/events?type=io.agent-manager.change.*&subject=prod-eu/biller&limit=500', undefined, as(TOKENS.admin));
    const of = (id: string) =>
      events.body.items.filter((event: { data: { changeId: string } }) => event.data.changeId === id).map((event: { type: string; data: { actor: string } }) => `${event.type} ${event.data.actor}`);
    expect(of(rejected)).toEqual(['io.agent-manager.change.proposed token:llm', 'io.agent-manager.change.rejected token:bob']);
    expect(of(withdrawn)).toEqual(['io.agent-manager.change.proposed token:llm', 'io.agent-manager.change.withdrawn token:llm']);
    expect((await call(t.url, 'GET', '/api/v1/events', undefined, as(TOKENS.dev))).status).toBe(403);
  });

  it('expires a change nobody approved in time: it cannot be approved then', async () => {
    const { body } = await update('prod-eu', 'lapsing', 'too late');
    t.clock.advance(3_600_000 + 1000);
    const late = await approve(body.change.id, TOKENS.alice);
    expect(late.status).toBe(409);
    expect(late.body.error.message).toContain('expired');
    const change = await call(t.url, 'GET', `/api/v1/changes/${body.change.id}`, undefined, as(TOKENS.alice));
    expect(change.body.state).toBe('expired');
    const listed = await call(t.url, 'GET', '/api/v1/changes?state=expired&namespace=prod-eu', undefined, as(TOKENS.alice));
    expect(listed.body.items.map((c: { id: string }) => c.id)).toEqual([body.change.id]);
  });

  it('resumes a change left applying (its replica died) once a lease passed, through the stored write and its If-Match', async () => {
    const { body } = await update('prod-eu', 'resumed', 'left behind');
    await t.store.client.change.update({ where: { id: body.change.id }, data: { state: 'applying', updatedAt: await t.store.now(), approvals: [{ subject: 'token:alice', actor: 'token:alice', at: new Date().toISOString(), comment: null }] } });
    await t.store.client.agent.update({ where: { id: 'prod-eu-resumed' }, data: { version: 2 } });
    const soon = await call(t.url, 'GET', `/api/v1/changes/${body.change.id}`, undefined, as(TOKENS.alice));
    expect(soon.body.state).toBe('applying');
    t.clock.advance(10 * 60_000);
    const [first, second] = await Promise.all([1, 2].map(() => call(t.url, 'GET', `/api/v1/changes/${body.change.id}`, undefined, as(TOKENS.alice))));
    // one reader takes it over; the other sees it applying, or already decided
    expect([first.body.state, second.body.state]).toContain('conflicted');
    expect([first.body.state, second.body.state].every((state) => state === 'conflicted' || state === 'applying')).toBe(true);
    const after = await call(t.url, 'GET', `/api/v1/changes/${body.change.id}`, undefined, as(TOKENS.alice));
    expect(after.body.state).toBe('conflicted');
    expect(after.body.message).toContain('propose the change again');
  });

  it('shows nothing of a change to a caller who may not read its namespace', async () => {
    const { body } = await update('prod-eu', 'biller', 'hidden');
    const hidden = await call(t.url, 'GET', `/api/v1/changes/${body.change.id}`, undefined, as(TOKENS.dev));
    expect(hidden.status).toBe(404);
    expect(hidden.text).not.toContain('hidden');
    const listed = await call(t.url, 'GET', '/api/v1/changes', undefined, as(TOKENS.dev));
    expect([listed.status, listed.body.items]).toEqual([200, []]);
  });
});

describe('the MCP door', () => {
  it('answers the same update with a structured pending_approval result the SDK client validates', async () => {
    const { client } = await connectAs(t.url, TOKENS.llm, '?toolsets=agents,changes');
    try {
      const result = await client.callTool({ name: 'update_agent', arguments: { namespace: 'prod-eu', name: 'biller', description: 'over mcp' } });
      expect(result.isError).toBeFalsy();
      const answer = result.structuredContent as { status: string; change: { id: string; diff: string } };
      expect(answer.status).toBe('pending_approval');
      expect(answer.change.diff).toContain('over mcp');
      const read = await client.callTool({ name: 'get_change', arguments: { id: answer.change.id } });
      expect((read.structuredContent as { state: string }).state).toBe('pending');
      const own = await client.callTool({ name: 'approve_change', arguments: { id: answer.change.id } });
      expect(own.isError).toBe(true);
      const reviewer = (await connectAs(t.url, TOKENS.alice, '?only=changes')).client;
      try {
        const listed = await reviewer.callTool({ name: 'list_changes', arguments: { state: 'pending', proposer: 'token:llm', namespace: 'prod-eu' } });
        expect((listed.structuredContent as { items: { id: string }[] }).items.map((c) => c.id)).toContain(answer.change.id);
        const rejected = await reviewer.callTool({ name: 'reject_change', arguments: { id: answer.change.id, comment: 'not over mcp' } });
        expect(rejected.structuredContent).toMatchObject({ state: 'rejected', decidedBy: 'token:alice', comment: 'not over mcp' });
      } finally {
        await reviewer.close();
      }
    } finally {
      await client.close();
    }
  });
});

/** The proposer's client, its session held by replica t, and the log notifications its GET stream received. */
async function listeningProposer(token: string): Promise<{ client: Client; session: string; notices: LoggingMessageNotification['params'][] }> {
  const { client, transport } = await connectAs(t.url, token, '?toolsets=agents,changes');
  const notices: LoggingMessageNotification['params'][] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void notices.push(notification.params));
  return { client, session: transport.sessionId!, notices };
}

/** The notice about `change`, once the client's stream brought it (polled; the test's own timeout bounds it). */
async function noticeAbout(notices: LoggingMessageNotification['params'][], change: string): Promise<Record<string, unknown>> {
  for (;;) {
    const notice = notices.find((n) => (n.data as { change?: string }).change === change);
    if (notice) return { level: notice.level, logger: notice.logger, ...(notice.data as Record<string, unknown>) };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("the proposer's MCP session is told when its change is decided", () => {
  it('a rejection over REST on another replica reaches the OIDC proposer\'s client on its stream', async () => {
    const proposer = await listeningProposer(await issuer.token(AUDIENCE));
    try {
      const proposed = await proposer.client.callTool({ name: 'update_agent', arguments: { namespace: 'prod-eu', name: 'told', description: 'tell me' } });
      const id = (proposed.structuredContent as { change: { id: string } }).change.id;
      expect((await t.store.client.change.findUniqueOrThrow({ where: { id } })).proposerSession).toBe(proposer.session);
      const rejected = await call(other.url, 'POST', `/api/v1/changes/${id}/reject`, { comment: 'not this week' }, as(TOKENS.bob));
      expect(rejected.body.state).toBe('rejected');
      expect(await noticeAbout(proposer.notices, id)).toMatchObject({
        level: 'warning',
        logger: 'agent-manager/changes',
        event: 'change_decided',
        state: 'rejected',
        operation: 'update_agent',
        agent: 'prod-eu/told',
        decidedBy: ['token:bob'],
        comment: 'not this week',
        location: `/api/v1/changes/${id}`,
        message: expect.stringContaining('was rejected by token:bob: not this week'),
      });
    } finally {
      await proposer.client.close();
    }
  });

  it('an approval over REST whose write ended conflicted tells the proposer why, once; a withdrawal tells nothing', async () => {
    const proposer = await listeningProposer(TOKENS.llm);
    try {
      const proposed = await proposer.client.callTool({ name: 'update_agent', arguments: { namespace: 'prod-eu', name: 'told', description: 'stale soon' } });
      const id = (proposed.structuredContent as { change: { id: string } }).change.id;
      await t.store.client.agent.update({ where: { id: 'prod-eu-told' }, data: { version: { increment: 1 } } });
      expect((await approve(id, TOKENS.alice)).body.state).toBe('conflicted');
      const notice = await noticeAbout(proposer.notices, id);
      expect(notice).toMatchObject({ state: 'conflicted', decidedBy: ['token:alice'], operationId: null, error: expect.stringContaining('propose the change again') });
      const withdrawn = await proposer.client.callTool({ name: 'update_agent', arguments: { namespace: 'prod-eu', name: 'told', description: 'taken back' } });
      const taken = (withdrawn.structuredContent as { change: { id: string } }).change.id;
      expect((await proposer.client.callTool({ name: 'withdraw_change', arguments: { id: taken } })).isError).toBeFalsy();
      // withdrawn on the replica holding the stream: a notice would have gone out before the tool's answer
      expect(proposer.notices.filter((n) => (n.data as { change?: string }).change === id)).toHaveLength(1);
      expect(proposer.notices.some((n) => (n.data as { change?: string }).change === taken)).toBe(false);
    } finally {
      await proposer.client.close();
    }
  });

  it('a decision after the proposer\'s session ended is made all the same', async () => {
    const proposer = await listeningProposer(TOKENS.llm);
    const proposed = await proposer.client.callTool({ name: 'update_agent', arguments: { namespace: 'prod-eu', name: 'told', description: 'nobody listens' } });
    const id = (proposed.structuredContent as { change: { id: string } }).change.id;
    await proposer.client.close();
    await call(t.url, 'DELETE', '/mcp', undefined, { ...as(TOKENS.llm), 'mcp-session-id': proposer.session });
    const rejected = await call(other.url, 'POST', `/api/v1/changes/${id}/reject`, {}, as(TOKENS.bob));
    expect([rejected.status, rejected.body.state]).toEqual([200, 'rejected']);
    expect(await t.store.client.mcpAnswer.count({ where: { sessionId: proposer.session } })).toBe(0);
  });

  it('the changes sweep, with nobody reading, expires a lapsed proposal and finishes one left applying, once across two replicas; the proposer is told both', async () => {
    const proposer = await listeningProposer(TOKENS.llm);
    try {
      const propose = async (name: string, description: string) =>
        ((await proposer.client.callTool({ name: 'update_agent', arguments: { namespace: 'prod-eu', name, description } })).structuredContent as { change: { id: string } }).change.id;
      const stalled = await propose('swept', 'left applying');
      const lapsing = await propose('told', 'left pending');
      // a replica died after taking the last approval: the change stays applying, untouched; the agent moved meanwhile
      await t.store.client.change.update({ where: { id: stalled }, data: { state: 'applying', updatedAt: await t.store.now(), approvals: [{ subject: 'token:alice', actor: 'token:alice', at: new Date().toISOString(), comment: null }] } });
      await t.store.client.agent.update({ where: { id: 'prod-eu-swept' }, data: { version: { increment: 1 } } });
      await Promise.all([t.app.get(ChangesService).sweep(), other.app.get(ChangesService).sweep()]);
      expect((await t.store.client.change.findUniqueOrThrow({ where: { id: stalled } })).state).toBe('applying');
      t.clock.advance(3_600_000 + 1000);
      await Promise.all([t.app.get(ChangesService).sweep(), other.app.get(ChangesService).sweep()]);
      const rows = await t.store.client.change.findMany({ where: { id: { in: [stalled, lapsing] } }, orderBy: { id: 'asc' } });
      expect(Object.fromEntries(rows.map((c) => [c.id, c.state]))).toEqual({ [stalled]: 'conflicted', [lapsing]: 'expired' });
      const expiries = await t.store.client.operation.count({ where: { kind: 'expire_change', name: 'told', actorNote: { contains: lapsing } } });
      expect(expiries).toBe(1);
      expect(await noticeAbout(proposer.notices, stalled)).toMatchObject({ state: 'conflicted', decidedBy: ['token:alice'] });
      expect(await noticeAbout(proposer.notices, lapsing)).toMatchObject({ state: 'expired', decidedBy: [], message: expect.stringContaining('propose it again') });
      expect(proposer.notices.filter((n) => [stalled, lapsing].includes((n.data as { change: string }).change))).toHaveLength(2);
    } finally {
      await proposer.client.close();
    }
  });
});
