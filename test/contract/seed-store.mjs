// Puts the README's example agent (agents/incident-helper) into a store, as the e2e suites' seedAgent
// does: through the service's own repository (the built dist/), the agent recorded as a landed create.
// What Swagger UI's examples must never touch needs to exist first; creating it for real needs a
// cluster helm can reach, which `npm run test:contract` does not have.
// Usage: node test/contract/seed-store.mjs   (DATABASE_URL names the store; the service is not running)
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = join(fileURLToPath(new URL('../..', import.meta.url)), 'dist');
const { loadConfig } = await import(join(dist, 'libs/common/src/index.js'));
const { createApp } = await import(join(dist, 'apps/agent-manager/src/app.factory.js'));
const { AgentsRepository } = await import(join(dist, 'libs/agents/src/index.js'));

const app = await createApp(loadConfig(), { logger: false });
try {
  await app.init();
  const repository = app.get(AgentsRepository);
  const [namespace, name] = ['agents', 'incident-helper'];
  const spec = { modelConfig: 'default-model-config', toolset: ['preset:read-only', 'workflow:incident-triage'] };
  const values = { ...spec, description: '', displayName: '', systemMessage: '', labels: {}, annotations: {} };
  const operation = await repository.startOperation({ id: randomUUID(), kind: 'create', namespace, name, request: spec, actor: 'readme', owner: 'seed' });
  await repository.recordCreate(namespace, name, { ref: 'charts/agent' }, { spec, values, helmRevision: 1, kind: 'create', actor: 'readme', operationId: operation.id });
  console.log(`seed-store: ${namespace}/${name} recorded`);
} finally {
  await app.close();
}
