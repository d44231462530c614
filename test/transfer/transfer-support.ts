import { randomUUID } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { parse, stringify } from 'yaml';
import { AgentsRepository } from '@app/agents';

export interface SeedSpec {
  modelConfig?: string;
  toolset?: string[];
  description?: string;
  systemMessage?: string;
  labels?: Record<string, string>;
}

/** An agent recorded in the store as a create would record it (no cluster needed to plan against it). */
export async function seedAgent(app: INestApplication, namespace: string, name: string, given: SeedSpec = {}, origin?: { blueprint: string; version: number }): Promise<void> {
  const repository = app.get(AgentsRepository);
  const spec = { modelConfig: 'default-model-config', toolset: ['preset:read-only'], ...given };
  const values = { description: '', displayName: '', systemMessage: '', labels: {}, annotations: {}, ...spec };
  const operation = await repository.startOperation({ id: randomUUID(), kind: 'create', namespace, name, request: spec, actor: 'seed', owner: 'seed' });
  await repository.recordCreate(namespace, name, { ref: 'charts/agent' }, { spec, values, helmRevision: 1, kind: 'create', actor: 'seed', operationId: operation.id, origin });
}

/** A fleet document (YAML) with `edit` applied to its parsed form. */
export function edited(yaml: string, edit: (doc: any) => void): string {
  const doc = parse(yaml);
  edit(doc);
  return stringify(doc);
}

/** The items of an import answer as `kind ns/name: action → result`. */
export function lines(body: { items: { kind: string; namespace?: string; name: string; action: string; result: string }[] }): string[] {
  return body.items.map((i) => `${i.kind} ${i.namespace ? `${i.namespace}/` : ''}${i.name}: ${i.action} → ${i.result}`);
}

/** POSTs a fleet document as YAML to /api/v1/import with `query`. */
export async function importYaml(base: string, yaml: string, query = '', headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/api/v1/import${query}`, { method: 'POST', headers: { 'content-type': 'application/yaml', ...headers }, body: yaml });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text };
}

/** GET /api/v1/export with `query`: the status, the body as text, its content type. */
export async function exportText(base: string, query = '', headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/api/v1/export${query}`, { headers });
  return { status: res.status, text: await res.text(), type: res.headers.get('content-type') };
}
