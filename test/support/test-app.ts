import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { loadConfig } from '@app/common';
import { Store } from '@app/store';
import { createApp } from '../../apps/agent-manager/src/app.factory.js';

export interface TestApp {
  app: INestApplication;
  url: string;
  store: Store;
  dir: string;
  close(): Promise<void>;
}

/** A kubeconfig whose API server refuses connections: helm fails the way it does with no cluster. */
export function unreachableKubeconfig(dir: string): string {
  const file = join(dir, 'kubeconfig-unreachable');
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]',
      'users: [{name: none, user: {token: none}}]',
      'contexts: [{name: none, context: {cluster: none, user: none}}]',
      'current-context: none',
      '',
    ].join('\n'),
  );
  return file;
}

/**
 * The whole service on port 0 with a fresh SQLite store (or TEST_DATABASE_URL's
 * PostgreSQL), the real helm and the chart in this repo.
 */
export async function startTestApp(env: Record<string, string | undefined> = {}): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'agent-manager-test-'));
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: process.env.TEST_DATABASE_URL ?? `file:${join(dir, 'store.db')}`,
    KUBECONFIG: unreachableKubeconfig(dir),
    LOG_LEVEL: 'error',
    ...env,
  });
  const app = await createApp(config, { logger: false });
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  return {
    app,
    url: `http://127.0.0.1:${address.port}`,
    store: app.get(Store),
    dir,
    close: async () => {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(base + path, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, body: json, text, headers: res.headers };
}
