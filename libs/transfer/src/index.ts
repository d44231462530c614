// Agents as code (docs/contract.md §12): the fleet document (transfer.document.ts), the pure
// planning rules (transfer.rules.ts), the service that exports and imports through the agents'
// and blueprints' services, and the export_agents / import_agents operations.
export * from './transfer.document.js';
export * from './transfer.rules.js';
export * from './transfer.dto.js';
export { TransferModule } from './transfer.module.js';
export { TransferService } from './transfer.service.js';
export { IMPORT_AGENTS, TRANSFER_OPERATIONS } from './transfer.operations.js';
