// npm test: also on PostgreSQL — two service processes on one store: the catalog poll by generation
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { call as rest, freshDatabaseUrl, unreachableKubeconfig, type FreshDatabase } from '../support/test-app.js';
import { connect } from '../mcp/mcp-support.js';
import { HELPER } from './blueprints-support.js';

jest.setTimeout(240_000);

/**
 * Two service processes on one store (PostgreSQL under npm run test:pg, else one SQLite file): a
 * blueprint change on one reaches the other's MCP sessions (tools/list and list_changed).
 */
describe('blueprints across replicas', () => {
  let db: FreshDatabase;
  let a: ServiceProcess;
  let b: ServiceProcess;
  let client: Client;
  let notices = 0;

  const toolsOnB = async () => (await client.listTools()).tools;
  const until = async <T>(what: string, probe: () => Promise<T | undefined | false>): Promise<T> => {
    for (let i = 0; i < 600; i++) {
      const value = await probe();
      if (value) return value;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`replica B never saw ${what}`);
  };

  beforeAll(async () => {
    db = await freshDatabaseUrl();
    const env = { DATABASE_URL: db.url, KUBECONFIG: unreachableKubeconfig(mkdtempSync(`${tmpdir()}/am-fleet-`)), RECONCILE_AUTOMATIC: 'false' };
    a = await startServiceProcess(env);
    b = await startServiceProcess(env);
    client = await connect(b.url);
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      notices++;
    });
  });

  afterAll(async () => {
    await client?.close();
    for (const proc of [a, b]) if (proc && proc.child.exitCode === null) await proc.stop();
    await db?.drop();
  });

  it('serves a blueprint created on A as a tool on B, and tells B’s session', async () => {
    const before = notices;
    expect((await rest(a.url, 'POST', '/api/v1/blueprints', HELPER)).status).toBe(201);
    await until('list_changed', async () => notices > before);
    const tool = await until('the tool', async () => (await toolsOnB()).find((t) => t.name === 'incident_helper'));
    expect(tool.description).toContain(HELPER.description);
  });

  it('serves a version saved on A on B', async () => {
    const before = notices;
    const saved = await rest(a.url, 'POST', '/api/v1/blueprints/incident_helper/versions', { ...HELPER, name: undefined, description: 'Version two of the incident helper.' });
    expect(saved.status).toBe(201);
    await until('list_changed', async () => notices > before);
    const tool = await until('version 2', async () => (await toolsOnB()).find((t) => t.name === 'incident_helper' && t.description?.startsWith('Version two')));
    expect(tool).toBeDefined();
  });

  it('stops serving on B a blueprint deleted on A', async () => {
    const before = notices;
    expect((await rest(a.url, 'DELETE', '/api/v1/blueprints/incident_helper')).status).toBe(200);
    await until('list_changed', async () => notices > before);
    await until('the removal', async () => !(await toolsOnB()).some((t) => t.name === 'incident_helper'));
  });
});
