// npm test: also on PostgreSQL — the store closed (its connections ended) while shutdown cuts a request
import { afterEach, describe, expect, it } from '@jest/globals';
import { once } from 'node:events';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { freshDatabaseUrl, unreachableKubeconfig, type FreshDatabase } from '../support/test-app.js';

/**
 * SIGTERM with a request still open: the pod's grace period is SHUTDOWN_TIMEOUT_SECONDS plus the
 * preStop pause plus 15 s (deploy/charts), and the Node server's own request timeout is 30 s. A
 * process that waited for that request would be killed (SIGKILL) before it closed its store.
 */
let service: ServiceProcess | undefined;
let client: Socket | undefined;
let dir: string | undefined;
let db: FreshDatabase | undefined;

afterEach(async () => {
  client?.destroy();
  await service?.kill().catch(() => undefined);
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  service = client = dir = db = undefined;
});

describe('shutdown', () => {
  it('does not wait for a request whose client stopped sending: it cuts it, closes the store and exits 0', async () => {
    dir = mkdtempSync(join(tmpdir(), 'shutdown-e2e-'));
    // The pass's store (a PostgreSQL database in that pass): its connections must end for the process to exit.
    db = await freshDatabaseUrl();
    service = await startServiceProcess({ DATABASE_URL: db.url, KUBECONFIG: unreachableKubeconfig(dir), SHUTDOWN_TIMEOUT_SECONDS: '1' });
    const { port } = new URL(service.url);
    // A create whose body never finishes arriving: the request stays open on the server.
    client = connect(Number(port), '127.0.0.1');
    await once(client, 'connect');
    client.write(`POST /api/v1/agents HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":`);
    const clientClosed = once(client, 'close');
    client.resume();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const exited = once(service.child, 'exit') as Promise<[number | null]>;
    service.child.kill('SIGTERM');
    // 25 s: well before the 30 s request timeout would have ended that request for the server.
    const outcome = await Promise.race([exited.then(([code]) => ({ code })), new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 25_000))]);
    expect(outcome).toEqual({ code: 0 });
    await clientClosed;
    const log = readFileSync(service.log, 'utf8');
    expect(log).toMatch(/still open .* into closing/);
    expect(log).toMatch(/stopped/);
  }, 60_000);
});
