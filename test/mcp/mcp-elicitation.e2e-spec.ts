import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { askingClient, call, connect, connectStdio, seedAgent, startApp, testEnv, text, type McpTestApp } from './mcp-support.js';

interface ErrorContent {
  error: { code: string; message: string };
}

/** An SDK client that declares form elicitation and answers every question with `answer`, keeping what it was asked; `answersTo`: where its answers go instead. */
async function connectAsking(base: string, answer: ElicitResult, query = '', answersTo?: string): Promise<{ client: Client; asked: ElicitRequest['params'][]; rerouted: string[] }> {
  const asked: ElicitRequest['params'][] = [];
  const rerouted: string[] = [];
  const client = askingClient(answer, asked);
  // A balancer without session affinity, made certain: every POST holding only answers reaches the other replica.
  const routed: typeof fetch = (input, init) => {
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as { method?: string; result?: unknown }) : undefined;
    const answers = answersTo !== undefined && body !== undefined && body.method === undefined && body.result !== undefined;
    if (answers) rerouted.push(String(input).replace(base, answersTo));
    return fetch(answers ? String(input).replace(base, answersTo) : input, init);
  };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp${query}`), { fetch: routed }));
  return { client, asked, rerouted };
}

/** The journal's entries of one agent, newest first. */
async function journal(client: Client, namespace: string, name: string): Promise<{ operation: string; outcome: string }[]> {
  const result = await call(client, 'list_operations', { namespace, name });
  return (result.structuredContent as { items: { operation: string; outcome: string }[] }).items;
}

/**
 * Destructive tools ask the person at a client that declared elicitation (no cluster here: a
 * delete that goes ahead reaches helm and fails with backend_error; one declined never starts).
 */
describe('MCP elicitation: destructive tools ask first', () => {
  let t: McpTestApp;
  let plain: Client;

  beforeAll(async () => {
    t = await startApp();
    plain = await connect(t.base, '?toolsets=agents,audit,revisions');
    for (const name of ['kept', 'gone', 'plain', 'quiet']) await seedAgent(t.app, 'agents', name, ['server:github']);
  });

  afterAll(async () => {
    await plain?.close();
    await t?.close();
  });

  it('a declined delete answers isError saying so, and nothing was done', async () => {
    const { client, asked } = await connectAsking(t.base, { action: 'decline' });
    try {
      const result = await call(client, 'delete_agent', { namespace: 'agents', name: 'kept' });
      expect(result.isError).toBe(true);
      expect((result.structuredContent as unknown as ErrorContent).error.code).toBe('forbidden');
      expect(text(result)).toMatch(/^the person at the MCP client declined delete_agent agents\/kept: nothing was done/);
      expect(asked).toHaveLength(1);
      expect(asked[0].message).toContain('uninstalls the helm release of agent agents/kept');
      expect((asked[0] as { requestedSchema?: unknown }).requestedSchema).toMatchObject({ properties: { confirm: { type: 'boolean' } } });
    } finally {
      await client.close();
    }
    const agent = await call(plain, 'get_agent', { namespace: 'agents', name: 'kept' });
    expect(agent.isError).toBeFalsy();
    expect((agent.structuredContent as { status?: string; lastOperation: { kind: string } }).lastOperation.kind).toBe('create');
    expect((await journal(plain, 'agents', 'kept')).map((e) => e.operation)).not.toContain('delete_agent');
  });

  it('a cancelled or unticked form is no too', async () => {
    for (const answer of [{ action: 'cancel' }, { action: 'accept', content: { confirm: false } }] as ElicitResult[]) {
      const { client } = await connectAsking(t.base, answer);
      try {
        const result = await call(client, 'delete_agent', { namespace: 'agents', name: 'kept' });
        expect(result.isError).toBe(true);
        expect(text(result)).toContain('nothing was done');
      } finally {
        await client.close();
      }
    }
    expect((await journal(plain, 'agents', 'kept')).map((e) => e.operation)).not.toContain('delete_agent');
  });

  it('an accepted delete goes ahead (here it reaches helm, which has no cluster)', async () => {
    const { client, asked } = await connectAsking(t.base, { action: 'accept', content: { confirm: true } });
    try {
      const result = await call(client, 'delete_agent', { namespace: 'agents', name: 'gone' });
      expect(asked).toHaveLength(1);
      expect(result.isError).toBe(true);
      expect((result.structuredContent as unknown as ErrorContent).error.code).toBe('backend_error');
    } finally {
      await client.close();
    }
    expect((await journal(plain, 'agents', 'gone'))[0]).toMatchObject({ operation: 'delete_agent', outcome: 'failed' });
    // The write's operation id, as get_agent's lastOperation names it, reads back with get_operation.
    const agent = (await call(plain, 'get_agent', { namespace: 'agents', name: 'gone' })).structuredContent as { lastOperation: { id: string } };
    const entry = await call(plain, 'get_operation', { id: agent.lastOperation.id });
    expect(entry.structuredContent).toMatchObject({ id: agent.lastOperation.id, operation: 'delete_agent', namespace: 'agents', name: 'gone', outcome: 'failed' });
  });

  it('a dry run and a read are never asked', async () => {
    const { client, asked } = await connectAsking(t.base, { action: 'decline' });
    try {
      const dry = await call(client, 'delete_agent', { namespace: 'agents', name: 'kept', dryRun: true });
      expect(dry.isError).toBeFalsy();
      expect((await call(client, 'get_agent', { namespace: 'agents', name: 'kept' })).isError).toBeFalsy();
      expect(asked).toHaveLength(0);
    } finally {
      await client.close();
    }
  });

  it('rollback_agent says from which revision to which', async () => {
    const { client, asked } = await connectAsking(t.base, { action: 'decline' }, '?toolsets=revisions');
    try {
      const result = await call(client, 'rollback_agent', { namespace: 'agents', name: 'kept', revision: 1 });
      expect(result.isError).toBe(true);
      expect(asked[0].message).toContain('moves agent agents/kept from revision 1 back to the values of revision 1 with helm (its spec stays the same)');
    } finally {
      await client.close();
    }
  });

  it('a client without elicitation is not asked: the delete goes ahead as before', async () => {
    const result = await call(plain, 'delete_agent', { namespace: 'agents', name: 'plain' });
    expect((result.structuredContent as unknown as ErrorContent).error.code).toBe('backend_error');
    expect((await journal(plain, 'agents', 'plain'))[0]).toMatchObject({ operation: 'delete_agent' });
  });
});

describe('MCP elicitation: MCP_CONFIRM_DESTRUCTIVE=false', () => {
  let t: McpTestApp;

  beforeAll(async () => {
    t = await startApp({ MCP_CONFIRM_DESTRUCTIVE: 'false' });
    await seedAgent(t.app, 'agents', 'quiet', ['server:github']);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('never asks, even a client that could answer', async () => {
    const { client, asked } = await connectAsking(t.base, { action: 'decline' });
    try {
      const result = await call(client, 'delete_agent', { namespace: 'agents', name: 'quiet' });
      expect(asked).toHaveLength(0);
      expect((result.structuredContent as unknown as ErrorContent).error.code).toBe('backend_error');
    } finally {
      await client.close();
    }
  });
});

describe('MCP elicitation across replicas: the answer reaches another replica than the call', () => {
  let first: TestApp;
  let second: TestApp;

  beforeAll(async () => {
    first = await startTestApp({ RECONCILE_AUTOMATIC: 'false' });
    second = await startTestApp({ RECONCILE_AUTOMATIC: 'false', DATABASE_URL: first.databaseUrl }, first.clock);
    for (const name of ['stays', 'goes']) await seedAgent(first.app, 'agents', name, ['server:github']);
  });

  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  it('hands a decline and an accept to the waiting call through the store', async () => {
    const declining = await connectAsking(first.url, { action: 'decline' }, '', second.url);
    try {
      const result = await call(declining.client, 'delete_agent', { namespace: 'agents', name: 'stays' });
      expect(declining.asked).toHaveLength(1);
      expect(declining.rerouted).toEqual([`${second.url}/mcp`]);
      expect(text(result)).toMatch(/declined delete_agent agents\/stays: nothing was done/);
    } finally {
      await declining.client.close();
    }
    const accepting = await connectAsking(first.url, { action: 'accept', content: { confirm: true } }, '', second.url);
    try {
      const result = await call(accepting.client, 'delete_agent', { namespace: 'agents', name: 'goes' });
      expect((result.structuredContent as unknown as ErrorContent).error.code).toBe('backend_error');
    } finally {
      await accepting.client.close();
    }
    // Each answer was taken out of the store by the call it answered.
    expect(await first.store.client.mcpAnswer.count()).toBe(0);
  });
});

describe('MCP elicitation over stdio (agent-manager mcp)', () => {
  let dir: string;
  let databaseUrl: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agent-manager-elicit-stdio-'));
    databaseUrl = `file:${join(dir, 'store.db')}`;
    // The store migrated and the agent seeded by a service on the same file, then closed: the spawned process reads it.
    const seeder = await startTestApp({ DATABASE_URL: databaseUrl });
    await seedAgent(seeder.app, 'agents', 'local', ['server:github']);
    await seeder.close();
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('asks the person, and a decline leaves the agent as it was', async () => {
    const asked: ElicitRequest['params'][] = [];
    const client = await connectStdio([], testEnv(dir, { DATABASE_URL: databaseUrl }), { client: askingClient({ action: 'decline' }, asked) });
    try {
      const result = await call(client, 'delete_agent', { namespace: 'agents', name: 'local' });
      expect(text(result)).toMatch(/^the person at the MCP client declined delete_agent agents\/local: nothing was done/);
      expect(asked[0].message).toContain('uninstalls the helm release of agent agents/local');
      const agent = await call(client, 'get_agent', { namespace: 'agents', name: 'local' });
      expect(agent.structuredContent).toMatchObject({ state: 'active', lastOperation: { kind: 'create' } });
    } finally {
      await client.close();
    }
  }, 120_000);
});
