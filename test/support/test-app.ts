import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import type { TestClock } from '@app/common';
import type { Store, StoreProvider } from '@app/store';
import { type FreshDatabase, freshPostgresDatabase, testPostgresUrl } from '../pg/fresh-database.js';

export { freshDatabaseUrl, freshPostgresDatabase, testPostgresUrl, testStoreProvider } from '../pg/fresh-database.js';
export type { FreshDatabase } from '../pg/fresh-database.js';

export interface TestApp {
  app: INestApplication;
  url: string;
  store: Store;
  dir: string;
  /** The DATABASE_URL the service runs on: a fresh SQLite file or a fresh PostgreSQL database. */
  databaseUrl: string;
  /** The store provider in use (`sqlite`, or `postgresql` when TEST_DATABASE_URL is set). */
  provider: StoreProvider;
  /** The service's clock: `clock.advance(ms)` lets a lease, key or session expire without waiting. */
  clock: TestClock;
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

let loading: Promise<typeof import('@app/common') & typeof import('@app/store') & typeof import('../../apps/agent-manager/src/app.factory.js')> | undefined;

/**
 * The service's modules, imported once per suite and one after the other: jest's ESM loader fails
 * two dynamic imports that link the same module at once ("request for 'reflect-metadata' is not in
 * cache"), which apps started together would otherwise do.
 */
function serviceModules() {
  loading ??= (async () => {
    const common = await import('@app/common');
    const store = await import('@app/store');
    const factory = await import('../../apps/agent-manager/src/app.factory.js');
    return { ...common, ...store, ...factory };
  })();
  return loading;
}

/**
 * The whole service on port 0 with a fresh store — a temp SQLite file, or a fresh database
 * on TEST_DATABASE_URL's PostgreSQL, dropped in close() — the real helm and the chart in this
 * repo. An explicit `DATABASE_URL` in `env` is used as it is (and left in place by close()).
 * The service runs on a TestClock (the host's time until moved); replicas in one test share one by `clock`.
 *
 * The service's modules are imported here, when an app starts, not when a suite imports this file:
 * the suites that only use `call` or `freshDatabaseUrl` (their services run as processes) do not
 * load the whole module graph (about 1.4 CPU-seconds per suite, measured).
 */
export async function startTestApp(env: Record<string, string | undefined> = {}, given?: TestClock): Promise<TestApp> {
  const { loadConfig, TestClock, Store, createApp } = await serviceModules();
  const clock = given ?? new TestClock();
  const dir = mkdtempSync(join(tmpdir(), 'agent-manager-test-'));
  let database: FreshDatabase | undefined;
  let app: INestApplication | undefined;
  try {
    if (!env.DATABASE_URL) {
      database = testPostgresUrl() ? await freshPostgresDatabase(testPostgresUrl()!) : undefined;
    }
    const databaseUrl = env.DATABASE_URL ?? database?.url ?? `file:${join(dir, 'store.db')}`;
    const config = loadConfig({
      ...withoutMcpSettings(process.env),
      KUBECONFIG: unreachableKubeconfig(dir),
      LOG_LEVEL: 'error',
      ...env,
      DATABASE_URL: databaseUrl,
    });
    app = await createApp(config, { logger: false, clock });
    await app.listen(0, '127.0.0.1');
    const address = app.getHttpServer().address() as { port: number };
    const started = app;
    const store = started.get(Store);
    return {
      app: started,
      url: `http://127.0.0.1:${address.port}`,
      store,
      dir,
      databaseUrl,
      provider: store.provider,
      clock,
      close: async () => {
        try {
          await started.close();
        } finally {
          await database?.drop();
          rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    await app?.close().catch(() => undefined);
    await database?.drop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** The inherited environment less the MCP deployment settings, so each test states its own. */
export function withoutMcpSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([key]) => !key.startsWith('MCP_')));
}

/**
 * An agent's status after a change made outside the service (kagent's conditions, a hand edit):
 * status answers from the service's watches, fresh within their lag, so it is read again until
 * `seen` holds (30 s at most) and the last answer is returned for the test's own expectations.
 */
export async function statusOnceSeen(base: string, path: string, seen: (body: any) => boolean) {
  for (const deadline = Date.now() + 30_000; ; await new Promise((resolve) => setTimeout(resolve, 100))) {
    const res = await call(base, 'GET', `${path}/status`);
    if (res.status !== 200 || seen(res.body) || Date.now() > deadline) return res;
  }
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
