import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { sha256Hex } from '@app/auth';
import type { Store } from '@app/store';
import { mcpClient } from '../support/mcp-client.js';

export const AUDIENCE = 'https://agent-manager.example.com';
export const ADMIN_TOKEN = 'am_admin_5c0b7f2e1d9a4c3b8e6f0a1b2c3d4e5f';
export const VIEWER_TOKEN = 'am_viewer_0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d';

/** The policy of the issue's example: editors of payments-* by group, an admin pipeline token, a viewer of team-a. */
export const POLICY = `
roles:
  viewer: [get_info, list_agents, get_agent, list_server_toolsets]
  editor: [viewer, validate_agent, create_agent, update_agent]
  admin: ["*"]
bindings:
  - role: editor
    groups: [team-payments]
    namespaces: ["payments-*"]
  - role: admin
    subjects: ["token:ci-platform"]
    namespaces: ["*"]
  - role: viewer
    subjects: ["token:viewer"]
    namespaces: ["team-a"]
`;

/** API_TOKENS_FILE and AUTHZ_POLICY_FILE in `dir`, with the issuer's settings: the environment of an app with auth on. */
export function authEnv(dir: string, issuer?: string, policy = POLICY): Record<string, string> {
  const tokens = join(dir, 'tokens.yaml');
  writeFileSync(tokens, `- name: ci-platform\n  sha256: ${sha256Hex(ADMIN_TOKEN)}\n- name: viewer\n  sha256: ${sha256Hex(VIEWER_TOKEN)}\n`);
  const policyFile = join(dir, 'policy.yaml');
  writeFileSync(policyFile, policy);
  return {
    API_TOKENS_FILE: tokens,
    AUTHZ_POLICY_FILE: policyFile,
    MCP_ALLOWED_HOSTS: '127.0.0.1,localhost',
    ...(issuer && { OIDC_ISSUER_URL: issuer, OIDC_AUDIENCE: AUDIENCE }),
  };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** An MCP SDK client over Streamable HTTP sending `token`. */
export async function connectAs(base: string, token: string, query = ''): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = mcpClient('auth-e2e');
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp${query}`), { requestInit: { headers: bearer(token) } });
  await client.connect(transport);
  return { client, transport };
}

/** An agent row written straight into the store (no cluster here): what lists read. */
export async function seedAgent(store: Store, namespace: string, name: string): Promise<void> {
  const id = `${namespace}-${name}`;
  await store.client.agent.create({
    data: {
      id,
      namespace,
      name,
      activeKey: `${namespace}/${name}`,
      state: 'active',
      spec: { name, namespace, modelConfig: 'm', toolset: ['preset:none'] },
      values: { modelConfig: 'm', toolset: ['preset:none'], description: '', displayName: '', systemMessage: '', labels: {}, annotations: {} },
      chartRef: 'charts/agent',
      revision: 1,
      createdBy: 'seed',
      updatedBy: 'seed',
    },
  });
}
