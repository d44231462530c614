import { randomUUID } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';

/** Values no door may show to a caller who only runs the blueprint's tool. */
export const SECRETS = ['secret-model-config', 'SECRET-PROMPT-7731', 'workflow:hidden-triage', 'gold-tier'];

/** A blueprint whose fixed values are all recognisable secrets. */
export const HELPER = {
  name: 'incident_helper',
  description: 'Creates an incident helper for a team.',
  fixed: {
    modelConfig: 'secret-model-config',
    toolset: ['preset:read-only', 'workflow:hidden-triage'],
    systemMessage: 'SECRET-PROMPT-7731',
    labels: { tier: 'gold-tier' },
  },
  open: ['displayName', 'annotations'],
  defaults: { namespace: 'agents', annotations: { 'example.com/team': 'sre' } },
  note: 'first version',
};

/** An agent recorded as if a create through a blueprint's tool had succeeded (no cluster is there to create one). */
export async function seedHolder(app: INestApplication, namespace: string, name: string, origin: { blueprint: string; version: number }): Promise<void> {
  // Imported here: a suite that seeds nothing does not load the agents module graph for this helper.
  const { AgentsRepository } = await import('@app/agents');
  const repository = app.get(AgentsRepository);
  const spec = { modelConfig: 'secret-model-config', toolset: ['preset:read-only'], systemMessage: 'SECRET-PROMPT-7731' };
  const values = { ...spec, description: '', displayName: '', labels: {}, annotations: {} };
  const operation = await repository.startOperation({ id: randomUUID(), kind: 'create', namespace, name, request: spec, actor: 'seed', owner: 'seed' });
  await repository.recordCreate(namespace, name, { ref: 'charts/agent' }, { spec, values, helmRevision: 1, kind: 'create', actor: 'seed', operationId: operation.id, origin });
}

/** The holder marked deleted as a delete would leave it (no cluster is there to uninstall from). */
export async function forgetHolder(app: INestApplication, namespace: string, name: string): Promise<void> {
  // Imported here: a suite that seeds nothing does not load the agents module graph for this helper.
  const { AgentsRepository } = await import('@app/agents');
  const repository = app.get(AgentsRepository);
  const agent = await repository.findActive(namespace, name);
  const operation = await repository.startOperation({ id: randomUUID(), kind: 'delete', namespace, name, agentId: agent!.id, request: {}, actor: 'seed', owner: 'seed' });
  await repository.recordDelete(agent!, operation.id, 'seed');
}
