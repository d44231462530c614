// npm test: also on PostgreSQL — a session read that waits on the PostgreSQL pool (the suite runs on this pass only)
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { testStoreProvider } from '../pg/fresh-database.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

/**
 * A client that leaves while its session is read from the store. On PostgreSQL that read waits
 * on the network (here: on a lock a second connection holds on the sessions' table), and the
 * service learns of the closed connection meanwhile; SQLite's reads never wait, so the case
 * cannot happen there and the suite runs on the PostgreSQL pass only.
 */
const onPostgres = testStoreProvider() === 'postgresql';

let t: TestApp;

beforeAll(async () => {
  if (onPostgres) t = await startTestApp();
}, 120_000);

afterAll(async () => {
  await t?.close();
});

const HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };

function send(method: string, headers: Record<string, string>, body?: unknown): { req: ClientRequest; res: Promise<IncomingMessage> } {
  const { port } = new URL(t.url);
  let req!: ClientRequest;
  const res = new Promise<IncomingMessage>((resolve, reject) => {
    req = request({ host: '127.0.0.1', port, method, path: '/mcp', headers }, resolve);
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
  return { req, res };
}

async function openSession(): Promise<string> {
  const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'gone', version: '1' } } };
  const opened = await send('POST', HEADERS, init).res;
  opened.resume();
  const id = opened.headers['mcp-session-id'];
  if (opened.statusCode !== 200 || typeof id !== 'string') throw new Error(`initialize answered ${opened.statusCode}`);
  (await send('POST', { ...HEADERS, 'mcp-session-id': id }, { jsonrpc: '2.0', method: 'notifications/initialized' }).res).resume();
  return id;
}

/** Holds the sessions' table locked until `release`; `waiting` says when a statement of the service waits on it. */
async function lockSessions(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('BEGIN');
  await client.query('LOCK TABLE "McpSession" IN ACCESS EXCLUSIVE MODE');
  return {
    async waiting(): Promise<boolean> {
      const rows = await client.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`);
      return rows.rows[0].n > 0;
    },
    async release(): Promise<void> {
      await client.query('COMMIT');
      await client.end();
    },
  };
}

(onPostgres ? describe : describe.skip)('/mcp when the client leaves while its session is read', () => {
  it('holds no stream for a GET whose client left: the session opens its stream again at once (not 409)', async () => {
    const session = await openSession();
    const lock = await lockSessions(t.databaseUrl);
    const gone = send('GET', { accept: 'text/event-stream', 'mcp-protocol-version': LATEST_PROTOCOL_VERSION, 'mcp-session-id': session });
    gone.res.catch(() => undefined);
    try {
      for (let i = 0; !(await lock.waiting()); i++) {
        if (i > 200) throw new Error('the session read did not wait on the lock within 10 s');
        await sleep(50);
      }
      gone.req.destroy();
      await sleep(200); // the service sees the connection close while the read still waits
    } finally {
      await lock.release();
    }
    await sleep(300); // the read answers, and the service goes on with a request nobody waits for

    const again = send('GET', { accept: 'text/event-stream', 'mcp-protocol-version': LATEST_PROTOCOL_VERSION, 'mcp-session-id': session });
    const answer = await again.res;
    expect(answer.statusCode).toBe(200);
    again.req.destroy();
  }, 60_000);
});
