import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { loadConfig } from '@app/common';
import { createApp } from '../../apps/agent-manager/src/app.factory.js';
import { AgentsRepository } from '@app/agents';
import { freshDatabaseUrl } from '../pg/fresh-database.js';

export const CLIENT_NAME = 'agent-manager-e2e';

/** A cluster whose API server refuses connections: helm fails as it does with no cluster at all. */
export function unreachableKubeconfig(dir: string): string {
  const file = join(dir, 'kubeconfig');
  writeFileSync(
    file,
    'apiVersion: v1\nkind: Config\nclusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: none, user: {token: none}}]\ncontexts: [{name: none, context: {cluster: none, user: none}}]\ncurrent-context: none\n',
  );
  return file;
}

/** The environment of a test service: a fresh SQLite store, no cluster, MCP settings at their defaults. */
export function testEnv(dir: string, env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const inherited = { ...process.env };
  for (const key of Object.keys(inherited)) if (key.startsWith('MCP_')) delete inherited[key];
  return { ...inherited, DATABASE_URL: `file:${join(dir, 'store.db')}`, KUBECONFIG: unreachableKubeconfig(dir), LOG_LEVEL: 'error', ...env };
}

export interface McpTestApp {
  app: INestApplication;
  base: string;
  close(): Promise<void>;
}

/** The whole service on port 0 of 127.0.0.1, as main.ts builds it. */
export async function startApp(env: Record<string, string> = {}): Promise<McpTestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'agent-manager-mcp-'));
  // SQLite, or a fresh database on TEST_DATABASE_URL's PostgreSQL (npm run test:pg)
  const database = env.DATABASE_URL ? undefined : await freshDatabaseUrl();
  let app: INestApplication;
  try {
    app = await createApp(loadConfig(testEnv(dir, database ? { DATABASE_URL: database.url, ...env } : env)), { logger: false });
    await app.listen(0, '127.0.0.1');
  } catch (error) {
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const { port } = app.getHttpServer().address() as { port: number };
  return {
    app,
    base: `http://127.0.0.1:${port}`,
    close: async () => {
      await app.close();
      await database?.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An SDK client on /mcp<query> over Streamable HTTP. */
export async function connect(base: string, query = ''): Promise<Client> {
  const client = new Client({ name: CLIENT_NAME, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp${query}`)));
  return client;
}

export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

export function text(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

/** An agent recorded as if an earlier create had succeeded (no cluster is there to create one). */
export async function seedAgent(app: INestApplication, namespace: string, name: string, toolset: string[]): Promise<void> {
  const repository = app.get(AgentsRepository);
  const spec = { modelConfig: 'default-model-config', toolset };
  const values = { ...spec, description: '', displayName: '', systemMessage: '', labels: {}, annotations: {} };
  const operation = await repository.startOperation({ id: randomUUID(), kind: 'create', namespace, name, request: spec, actor: 'seed', owner: 'seed' });
  await repository.recordCreate(namespace, name, { ref: 'charts/agent' }, { spec, values, helmRevision: 1, kind: 'create', actor: 'seed', operationId: operation.id });
}

/** 33 distinct selectors, one over the inline cap. */
export const OVER_CAP = Array.from({ length: 33 }, (_, i) => `tool:t${i}`);

export const TOOLNAMES_MESSAGE =
  'toolNames never narrowed anything against muster (kagent filters muster\'s meta-tools only); declare a toolset instead, e.g. toolset: ["preset:read-only"]';
