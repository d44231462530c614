import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt } from '../support/service-process.js';

jest.setTimeout(120_000);

/**
 * A setting that cannot work stops the start with one line naming it and exit code 2, on the
 * built service and the CLI (README: "A bad value stops the process at start … naming the
 * variable"), never a stack trace with exit code 1.
 */
let dir: string;
let busy: Server;
let busyPort: number;

beforeAll(async () => {
  await ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'start-failures-'));
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  busyPort = (busy.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise((resolve) => busy?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the built entry with `env`, until it exits (it must: a start that fails). */
function run(entry: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry, ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, HOST: '127.0.0.1', KUBECONFIG: '/nonexistent', LOG_LEVEL: 'error', DATABASE_URL: `file:${join(dir, `${Math.random()}.db`)}`, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`still running after 60 s: ${stderr}`));
    }, 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

const SERVE = 'dist/service/main.mjs';
const CLI = 'dist/service/cli.mjs';

describe('a start that cannot work', () => {
  it.each([
    ['PORT in use', SERVE, [] as string[], () => ({ PORT: String(busyPort) }), /^agent-manager: PORT="\d+": another process listens on 127\.0\.0\.1:\d+/m],
    ['METRICS_PORT in use', SERVE, [], () => ({ PORT: '0', METRICS_PORT: String(busyPort) }), /^agent-manager: METRICS_PORT="\d+": another process listens/m],
    ['BLUEPRINTS_FILE missing', SERVE, [], () => ({ PORT: '0', BLUEPRINTS_FILE: join(dir, 'none.yaml') }), /^agent-manager: .*BLUEPRINTS_FILE/m],
    ['a HOST that does not resolve', SERVE, [], () => ({ PORT: '0', HOST: 'agent-manager.invalid', AUTH_DISABLED: 'true' }), /^agent-manager: HOST="agent-manager\.invalid": the name does not resolve/m],
    [
      'a PostgreSQL that does not answer (no password in the message)',
      SERVE,
      [],
      () => ({ PORT: '0', DATABASE_URL: 'postgresql://admin:S3cretPw@127.0.0.1:1/agents' }),
      /^agent-manager: DATABASE_URL="postgresql:\/\/admin:\*\*\*@127\.0\.0\.1:1\/agents": the store refused or did not answer/m,
    ],
    ['store rebuild with a missing API_TOKENS_FILE', CLI, ['store', 'rebuild'], () => ({ API_TOKENS_FILE: join(dir, 'none.yaml') }), /^agent-manager: .*API_TOKENS_FILE/m],
  ])('%s: one line naming it, exit code 2', async (_case, entry, args, env, line) => {
    const { code, stderr } = await run(entry, args, env());
    expect(stderr).toMatch(line);
    expect(stderr).not.toMatch(/S3cretPw|\n\s+at /);
    expect(code).toBe(2);
  });
});
