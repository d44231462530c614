// npm test: also on PostgreSQL — hundreds of blueprints: queries with a fixed parameter count, paging
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call as rest, freshDatabaseUrl, startTestApp, type FreshDatabase, type TestApp } from '../support/test-app.js';
import { connect } from '../mcp/mcp-support.js';
import { HELPER } from './blueprints-support.js';

// Scale is asserted as "answered", never as time: the figures are the benchmark's (bench/blueprints.bench.mjs).
jest.setTimeout(300_000);

/** Past the 499 blueprints at which the store's list once exceeded SQLite's 999 bound parameters. */
const SEEDED = 590;
const CREATED = 10;
const { name: _name, note: _note, ...body } = HELPER;
const nameOf = (i: number) => `bp_${String(i).padStart(4, '0')}`;

let db: FreshDatabase;
let dir: string;
let t: TestApp | undefined;

beforeAll(async () => {
  db = await freshDatabaseUrl();
  dir = mkdtempSync(join(tmpdir(), 'agent-manager-scale-'));
  const file = join(dir, 'blueprints.yaml');
  // JSON is YAML, and keeps the shared body from becoming YAML aliases
  writeFileSync(file, JSON.stringify({ blueprints: Array.from({ length: SEEDED }, (_, i) => ({ name: nameOf(i), ...body })) }));
  t = await startTestApp({ DATABASE_URL: db.url, BLUEPRINTS_FILE: file });
});

afterAll(async () => {
  await t?.close();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** Every blueprint name, page by page (limit 100). */
async function listAll(base: string): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const res = await rest(base, 'GET', `/api/v1/blueprints?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status).toBe(200);
    expect(res.body.items.length).toBeLessThanOrEqual(100);
    names.push(...res.body.items.map((item: { name: string }) => item.name));
    cursor = res.body.nextCursor ?? undefined;
  } while (cursor);
  return names;
}

/** Every tool of a session, following nextCursor as an MCP client does. */
async function listTools(client: Client): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    names.push(...page.tools.map((tool) => tool.name));
    cursor = page.nextCursor;
  } while (cursor);
  return names;
}

describe('blueprints at scale (600, past the old ceiling of 499)', () => {
  it('creates answer 201, list pages through all of them, tools/list pages through every tool, delete answers 200', async () => {
    for (let i = SEEDED; i < SEEDED + CREATED; i++) {
      const res = await rest(t!.url, 'POST', '/api/v1/blueprints', { ...HELPER, name: nameOf(i) });
      expect(res.status).toBe(201);
    }
    const expected = Array.from({ length: SEEDED + CREATED }, (_, i) => nameOf(i));
    expect(await listAll(t!.url)).toEqual(expected);

    const client = await connect(t!.url);
    try {
      const first = await client.listTools();
      expect(first.nextCursor).toEqual(expect.any(String));
      expect((await listTools(client)).filter((name) => name.startsWith('bp_')).sort()).toEqual(expected);
    } finally {
      await client.close();
    }

    const removed = await rest(t!.url, 'DELETE', `/api/v1/blueprints/${nameOf(0)}`);
    expect(removed.status).toBe(200);
    expect((await rest(t!.url, 'GET', `/api/v1/blueprints/${nameOf(0)}`)).status).toBe(404);
  });

  it('a restart on the same store serves every blueprint', async () => {
    await t!.close();
    t = undefined;
    t = await startTestApp({ DATABASE_URL: db.url });
    const names = await listAll(t.url);
    expect(names).toHaveLength(SEEDED + CREATED - 1);
    const client = await connect(t.url);
    try {
      expect((await listTools(client)).filter((name) => name.startsWith('bp_'))).toHaveLength(SEEDED + CREATED - 1);
    } finally {
      await client.close();
    }
  });
});
