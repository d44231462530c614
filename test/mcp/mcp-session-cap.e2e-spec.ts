// npm test: also on PostgreSQL — the per-principal session cap as an atomic count-and-insert
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Store } from '@app/store';
import { freshDatabaseUrl, type FreshDatabase } from '../pg/fresh-database.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { unreachableKubeconfig } from '../support/test-app.js';

const CAP = 3;
const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'cap', version: '1' } } };

/**
 * MCP_SESSIONS_PER_PRINCIPAL across replicas: two service processes on one store, 40 initialize
 * requests at once from one principal, alternating between them.
 */
describe('the MCP session cap across replicas', () => {
  let dir: string;
  let db: FreshDatabase;
  let replicas: ServiceProcess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agent-manager-cap-'));
    db = await freshDatabaseUrl();
    const env = { DATABASE_URL: db.url, KUBECONFIG: unreachableKubeconfig(dir), MCP_SESSIONS_PER_PRINCIPAL: String(CAP), RECONCILE_AUTOMATIC: 'false' };
    // One at a time: both migrating one fresh SQLite file at once would race.
    replicas = [await startServiceProcess({ ...env, REPLICA_ID: 'am-0' })];
    replicas.push(await startServiceProcess({ ...env, REPLICA_ID: 'am-1' }));
  }, 240_000);

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`opens at most ${CAP} sessions for one principal from 40 simultaneous opens on two replicas`, async () => {
    const opens = Array.from({ length: 40 }, (_, i) =>
      fetch(`${replicas[i % 2].url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(INITIALIZE),
      }).then(async (res) => ({ status: res.status, session: res.headers.get('mcp-session-id'), text: await res.text() })),
    );
    const answers = await Promise.all(opens);
    const opened = answers.filter((a) => a.status === 200);
    const unexpected = answers.filter((a) => a.status !== 200 && a.status !== 429);
    expect({ unexpected, log: unexpected.length > 0 ? readFileSync(replicas[0].log, 'utf8').slice(-2000) : '' }).toEqual({ unexpected: [], log: '' });
    expect(opened).toHaveLength(CAP);
    expect(new Set(opened.map((a) => a.session)).size).toBe(CAP);
    expect(answers.filter((a) => a.status === 429).every((a) => a.text.includes(`MCP_SESSIONS_PER_PRINCIPAL=${CAP}`))).toBe(true);
    const store = await Store.open(db.url);
    try {
      expect(await store.client.mcpSession.count()).toBe(CAP);
    } finally {
      await store.client.$disconnect();
    }
  });
});
