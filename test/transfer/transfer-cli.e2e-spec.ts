// npm test: also on PostgreSQL — the built CLI opening each provider's store to export and plan from it
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { runCli } from '../support/cli-process.js';
import { ensureBuilt } from '../support/service-process.js';
import { call, startTestApp, unreachableKubeconfig, type TestApp } from '../support/test-app.js';
import { edited, exportText, seedAgent } from './transfer-support.js';

jest.setTimeout(300_000);

/** `agent-manager export` and `import --dry-run`, the built CLI on a store a running service shares. */
describe('agent-manager export and import (the CLI)', () => {
  let t: TestApp;
  let dir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    await ensureBuilt();
    t = await startTestApp();
    dir = mkdtempSync(join(tmpdir(), 'transfer-cli-'));
    env = { DATABASE_URL: t.databaseUrl, KUBECONFIG: unreachableKubeconfig(dir) };
    const blueprint = { name: 'cli_helper', description: 'A helper.', fixed: { modelConfig: 'default-model-config', toolset: ['preset:read-only'] }, open: ['labels'], defaults: {} };
    expect((await call(t.url, 'POST', '/api/v1/blueprints', blueprint)).status).toBe(201);
    await seedAgent(t.app, 'team-a', 'first', { labels: { team: 'a' } }, { blueprint: 'cli_helper', version: 1 });
    await seedAgent(t.app, 'team-a', 'second', { systemMessage: 'two\nlines\n' });
    await seedAgent(t.app, 'team-b', 'third');
  });

  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints the same document as GET /api/v1/export, filters alike', async () => {
    const run = await runCli(['export'], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe((await exportText(t.url)).text);
    const filtered = await runCli(['export', '--namespace', 'team-a', '--label=team=a'], env);
    expect(filtered.stdout).toBe((await exportText(t.url, '?namespace=team-a&label=team=a')).text);
  });

  it('writes one file per agent, which import reads back as one document: nothing to do', async () => {
    const out = join(dir, 'fleet');
    const run = await runCli(['export', '--per-agent', out], env);
    expect(run.code).toBe(0);
    expect(['fleet.yaml', 'team-a/first.yaml', 'team-a/second.yaml', 'team-b/third.yaml'].every((file) => existsSync(join(out, file)))).toBe(true);
    expect(readFileSync(join(out, 'team-a', 'second.yaml'), 'utf8')).toMatch(/systemMessage: \|\n\s+two\n\s+lines\n/);
    const plan = await runCli(['import', out, '--dry-run'], env);
    expect(plan.stdout).toMatch(/^import \(dry run\): 4 unchanged$/m);
    expect(plan.code).toBe(0);
  });

  it('prints the plan of an edited file, and names the field of a bad one (exit 2)', async () => {
    const file = join(dir, 'edited.yaml');
    writeFileSync(file, edited((await exportText(t.url)).text, (doc) => (doc.agents[1].spec.toolset = ['preset:none'])));
    const plan = await runCli(['import', file, '--dry-run'], env);
    expect(plan.stdout).toContain('agent team-a/second: update (toolset) → planned');
    expect(plan.code).toBe(0);
    writeFileSync(file, edited((await exportText(t.url)).text, (doc) => (doc.agents[2].spec.toolset = ['nonsense'])));
    const bad = await runCli(['import', file, '--dry-run'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/agents\[2\]\.spec\.toolset\[0\]: /);
  });
});
