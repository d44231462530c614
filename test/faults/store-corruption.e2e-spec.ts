import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, truncateSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCli } from '../support/cli-process.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { unreachableKubeconfig } from '../support/test-app.js';

jest.setTimeout(180_000);

const PAGE = 4096;

/** Overwrites every page of the file after the first (its header stays: only reading the pages finds it). */
function overwritePages(file: string): void {
  const pages = Math.floor(statSync(file).size / PAGE);
  const fd = openSync(file, 'r+');
  try {
    for (let page = 1; page < pages; page++) writeSync(fd, Buffer.alloc(PAGE, 0xa5), 0, PAGE, page * PAGE);
  } finally {
    closeSync(fd);
  }
}

const blueprint = (name: string) => ({ name, description: 'corruption probe', fixed: { modelConfig: 'm', toolset: ['preset:none'] }, open: [] });

async function send(url: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json().catch(() => null)) as Record<string, unknown> | null };
}

/**
 * The SQLite store damaged in place (issue 29, Why #5): a running service notices within seconds
 * (readiness 503, writes 503 with Retry-After, nothing acknowledged that cannot be read back), and
 * a start on a corrupt or truncated file stops with one line and exit code 2. Before, /readyz said
 * 200 and writes 201 on a corrupt file, and the next start died with a stack trace and exit code 1.
 */
describe('a damaged SQLite store', () => {
  let dir: string;
  let service: ServiceProcess | undefined;
  let kubeconfig: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'store-corruption-'));
    kubeconfig = unreachableKubeconfig(dir);
  });

  afterAll(async () => {
    await service?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('running: readiness and writes answer 503 within seconds of pages overwritten, and what was acknowledged reads back', async () => {
    const file = join(dir, 'running.db');
    service = await startServiceProcess({ KUBECONFIG: kubeconfig, DATABASE_URL: `file:${file}`, LOG_LEVEL: 'warn' });
    for (let i = 0; i < 20; i++) expect((await send(service.url, 'POST', '/api/v1/blueprints', blueprint(`before_${i}`))).status).toBe(201);

    overwritePages(file);
    const acknowledged: string[] = [];
    let ready = await send(service.url, 'GET', '/readyz');
    for (let i = 0, deadline = Date.now() + 30_000; ready.status === 200 && Date.now() < deadline; i++) {
      const name = `after_${i}`;
      if ((await send(service.url, 'POST', '/api/v1/blueprints', blueprint(name))).status === 201) acknowledged.push(name);
      await sleep(200);
      ready = await send(service.url, 'GET', '/readyz');
    }
    expect(ready.status).toBe(503);
    expect(String(ready.body?.reason)).toContain('is damaged');

    const write = await send(service.url, 'POST', '/api/v1/blueprints', blueprint('refused'));
    expect(write.status).toBe(503);
    expect(write.retryAfter).toMatch(/^\d+$/);
    for (const name of acknowledged) expect([name, (await send(service.url, 'GET', `/api/v1/blueprints/${name}`)).status]).toEqual([name, 200]);
    await service.kill();
    service = undefined;
  });

  it('running: readiness and writes answer 503 once the file was truncated', async () => {
    const file = join(dir, 'truncated-running.db');
    service = await startServiceProcess({ KUBECONFIG: kubeconfig, DATABASE_URL: `file:${file}`, LOG_LEVEL: 'warn' });
    expect((await send(service.url, 'POST', '/api/v1/blueprints', blueprint('kept'))).status).toBe(201);
    truncateSync(file, 0);
    const ready = await send(service.url, 'GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(String(ready.body?.reason)).toContain('truncated');
    const write = await send(service.url, 'POST', '/api/v1/blueprints', blueprint('refused'));
    expect(write.status).toBe(503);
    expect(write.retryAfter).toMatch(/^\d+$/);
    await service.kill();
    service = undefined;
  });

  it.each([
    ['pages overwritten', (file: string) => overwritePages(file)],
    ['truncated to half', (file: string) => truncateSync(file, Math.floor(statSync(file).size / PAGE / 2) * PAGE)],
    ['its header overwritten', (file: string) => overwriteHeader(file)],
  ])('start on a file with %s: one line naming it, exit code 2', async (_case, damage) => {
    const file = join(dir, `${_case.replace(/\W/g, '-')}.db`);
    const env = { KUBECONFIG: kubeconfig, DATABASE_URL: `file:${file}` };
    // A store with rows in it (store rebuild creates and migrates the file, then finds no cluster).
    await runCli(['store', 'rebuild'], env);
    await seedRows(file);
    damage(file);
    const run = await runCli(['serve'], { ...env, PORT: '0' }, 60_000);
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^agent-manager: DATABASE_URL="file:.*": .*(damaged|cannot be used)/)]);
    expect(run.code).toBe(2);
  });
});

function overwriteHeader(file: string): void {
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, Buffer.alloc(PAGE, 0x5a), 0, PAGE, 0);
  } finally {
    closeSync(fd);
  }
}

/** Enough rows that the file has pages beyond its schema. */
async function seedRows(file: string): Promise<void> {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(file);
  try {
    db.exec('CREATE TABLE IF NOT EXISTS "_filler" ("id" INTEGER PRIMARY KEY, "text" TEXT)');
    const insert = db.prepare('INSERT INTO "_filler" ("text") VALUES (?)');
    for (let i = 0; i < 200; i++) insert.run('x'.repeat(500));
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}
