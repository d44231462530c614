// npm test: also on PostgreSQL — MCP session rows: the atomic cap, idle sweep and touch
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { Principal } from '@app/auth';
import { Store } from '@app/store';
import { freshDatabaseUrl, type FreshDatabase } from '../../../test/support/test-app.js';
import { McpSessionRepository } from './mcp-session.repository.js';

Logger.overrideLogger(false);

const alice: Principal = { subject: 'alice', groups: [], method: 'oidc' };
const session = (id: string, principal = alice) => ({ id, principal, query: 'agents', clientName: 'spec', replica: 'r1' });

describe(`${McpSessionRepository.name}.createWithin`, () => {
  let dir: string;
  let db: FreshDatabase;
  // Two stores on one database: two replicas' connections.
  let stores: Store[] = [];
  let replicas: McpSessionRepository[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mcp-sessions-'));
    db = await freshDatabaseUrl();
    stores = [await Store.open(db.url)];
    stores.push(await Store.open(db.url));
    replicas = stores.map((store) => new McpSessionRepository(store));
  });

  afterAll(async () => {
    await Promise.all(stores.map((store) => store.client.$disconnect()));
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores a session as the typed queries read it (times included)', async () => {
    expect(await replicas[0].createWithin(session('one', { subject: 'bob', groups: [], method: 'token' }), 3)).toBeNull();
    const found = await replicas[1].find('one');
    expect(found).toMatchObject({ id: 'one', subject: 'bob', authMethod: 'token', query: 'agents', clientName: 'spec', clientVersion: null });
    expect(found!.lastSeenAt).toBeInstanceOf(Date);
    expect(Math.abs(found!.lastSeenAt.getTime() - Date.now())).toBeLessThan(60_000);
    // The idle sweep compares lastSeenAt in SQL: a session stored this way is idle after its time, not before.
    expect(await replicas[0].removeIdle(60_000)).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await replicas[0].removeIdle(1)).toEqual(['one']);
  });

  it('never stores more than the cap for one principal, however many replicas open at once', async () => {
    const cap = 3;
    const opens = Array.from({ length: 40 }, (_, i) => replicas[i % 2].createWithin(session(`s${i}`), cap));
    const answers = await Promise.all(opens);
    expect(answers.filter((a) => a === null)).toHaveLength(cap);
    expect(answers.filter((a) => a !== null).every((open) => open === cap)).toBe(true);
    expect(await replicas[0].countOpen(alice)).toBe(cap);
    // Another principal has a cap of its own.
    expect(await replicas[1].createWithin(session('carol-1', { subject: 'carol', groups: [], method: 'oidc' }), cap)).toBeNull();
  });
});
