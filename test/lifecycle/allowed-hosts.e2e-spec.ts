import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt, freePort } from '../support/service-process.js';

jest.setTimeout(120_000);

/**
 * A start off loopback (HOST=0.0.0.0, as in a pod) says which hosts it answers, since any other
 * Host or Origin gets 403; the old name MCP_ALLOWED_HOSTS still works and the log says it is deprecated.
 */
let dir: string;
let child: ChildProcess;
let port: number;
let stdout = '';

/** GET with a Host header fetch cannot set. */
function get(path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const lines = () => stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: string; msg: string; allowedHosts?: string[] });

beforeAll(async () => {
  await ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'allowed-hosts-'));
  port = await freePort();
  child = spawn(process.execPath, ['dist/service/main.mjs'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, HOST: '0.0.0.0', PORT: String(port), AUTH_DISABLED: 'true', MCP_ALLOWED_HOSTS: 'agents.example.com', KUBECONFIG: join(dir, 'none'), DATABASE_URL: `file:${join(dir, 'am.db')}`, LOG_LEVEL: 'log' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  for (const deadline = Date.now() + 90_000; !lines().some((l) => l.msg.startsWith('listening on')); ) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the service did not start: ${stdout}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('ALLOWED_HOSTS on a start off loopback', () => {
  it('logs which hosts are answered, and that MCP_ALLOWED_HOSTS is the deprecated name of ALLOWED_HOSTS', () => {
    const listening = lines().find((l) => l.msg.startsWith('listening on'))!;
    expect(listening.msg).toContain('answered for only the hosts agents.example.com (ALLOWED_HOSTS), any other Host or Origin gets 403');
    expect(listening.allowedHosts).toEqual(['agents.example.com']);
    expect(lines()).toContainEqual(expect.objectContaining({ level: 'warn', msg: expect.stringMatching(/^MCP_ALLOWED_HOSTS is deprecated: it is read as ALLOWED_HOSTS/) }));
  });

  it('answers the allowed host and refuses another, naming ALLOWED_HOSTS', async () => {
    expect((await get('/api/v1/info', `agents.example.com:${port}`)).status).toBe(200);
    const refused = await get('/docs/', `127.0.0.1:${port}`);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).error.message).toContain('allows more hosts with ALLOWED_HOSTS');
  });
});
