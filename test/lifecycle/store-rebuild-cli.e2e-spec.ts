// npm test: also on PostgreSQL — `store rebuild` opening each provider's store when the cluster cannot be reached
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../support/cli-process.js';
import { ensureBuilt } from '../support/service-process.js';
import { freshDatabaseUrl, unreachableKubeconfig, type FreshDatabase } from '../support/test-app.js';

jest.setTimeout(120_000);

/**
 * `agent-manager store rebuild` on a fresh store (SQLite, a PostgreSQL database in that pass) when the cluster cannot be reached
 * (issue 29, Why #4): it says that nothing was adopted and why, and exits non-zero. It used to
 * exit 0 having printed nothing: no socket kept the process alive while it awaited helm.
 */
describe('agent-manager store rebuild without a reachable cluster', () => {
  let dir: string;
  let db: FreshDatabase;

  beforeAll(async () => {
    await ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'rebuild-cli-'));
    db = await freshDatabaseUrl();
  });

  afterAll(async () => {
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('says nothing was adopted because the cluster is unreachable, and exits 1', async () => {
    const kubeconfig = unreachableKubeconfig(dir);
    const run = await runCli(['store', 'rebuild'], { KUBECONFIG: kubeconfig, DATABASE_URL: db.url });
    expect(run.stderr).toMatch(/^agent-manager store rebuild: nothing adopted: the cluster is unreachable: KUBECONFIG=.* points at https:\/\/127\.0\.0\.1:1\b/m);
    expect(run.stdout).toBe('');
    expect(run.code).toBe(1);
  });
});
