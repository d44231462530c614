import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { execFileSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { TestClock } from '@app/common';
import { startTestApp, unreachableKubeconfig, withoutMcpSettings } from '../support/test-app.js';
import { mcpClient } from '../support/mcp-client.js';

export const CLIENT_NAME = 'agent-manager-e2e';

/** The environment of a spawned test service (stdio): no cluster, MCP settings at their defaults. */
export function testEnv(dir: string, env: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...withoutMcpSettings(process.env), DATABASE_URL: `file:${join(dir, 'store.db')}`, KUBECONFIG: unreachableKubeconfig(dir), LOG_LEVEL: 'error', ...env };
}

export interface McpTestApp {
  app: INestApplication;
  base: string;
  /** The service's clock, moved forward to let sessions go idle without waiting. */
  clock: TestClock;
  close(): Promise<void>;
}

/** The whole service on port 0 of 127.0.0.1, as the REST suites start it. */
export async function startApp(env: Record<string, string> = {}): Promise<McpTestApp> {
  const t = await startTestApp(env);
  return { app: t.app, base: t.url, clock: t.clock, close: t.close };
}

/** An SDK client on /mcp<query> over Streamable HTTP. */
export async function connect(base: string, query = ''): Promise<Client> {
  const client = mcpClient(CLIENT_NAME);
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp${query}`)));
  return client;
}

/**
 * `agent-manager mcp ARGS` as an MCP client spawns it (dist/ built first), with the SDK's client
 * connected over stdio; `onStderr` hears the log, `onError` the client's protocol errors; `client`: one made by the test (its capabilities).
 */
export async function connectStdio(
  args: string[],
  env: NodeJS.ProcessEnv,
  hooks: { onStderr?: (text: string) => void; onError?: (error: Error) => void; client?: Client } = {},
): Promise<Client> {
  const root = process.cwd();
  execFileSync(process.execPath, [join(root, 'scripts', 'build-if-needed.mjs')], { cwd: root, stdio: 'ignore' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(root, 'bin', 'agent-manager.mjs'), 'mcp', ...args],
    cwd: root,
    env: env as Record<string, string>,
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => hooks.onStderr?.(chunk.toString()));
  const client = hooks.client ?? mcpClient(CLIENT_NAME);
  if (hooks.onError) client.onerror = hooks.onError;
  await client.connect(transport);
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
  // Imported here: a suite that seeds nothing does not load the agents module graph for this helper.
  const { AgentsRepository } = await import('@app/agents');
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

/** An SDK client that declares form elicitation and answers every question with `answer`, not yet connected. */
export function askingClient(answer: ElicitResult, asked: ElicitRequest['params'][]): Client {
  const client = mcpClient(CLIENT_NAME, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params);
    return answer;
  });
  return client;
}
