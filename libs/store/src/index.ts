export { Store } from './store.js';
export type { StoreClient, StoreHealth } from './store.js';
export { StoreCorruptError } from './sqlite-integrity.js';
export { StoreModule } from './store.module.js';
export { loadMigrations, migrate } from './migrator.js';
export type { StoreProvider } from './migrator.js';
export type { Agent as AgentRow, AgentRevision as AgentRevisionRow, Operation as OperationRow, Blueprint as BlueprintRow, BlueprintVersion as BlueprintVersionRow } from './generated/sqlite/client.js';
export { Prisma } from './generated/sqlite/client.js';
