export * from './blueprint.rules.js';
export { toolInputSchema } from './blueprint.schema.js';
export { BlueprintsModule } from './blueprints.module.js';
export { BlueprintsService } from './blueprints.service.js';
export { BLUEPRINT_OPERATIONS, BLUEPRINT_TOOLSETS } from './blueprints.operations.js';
export { BlueprintCatalog, BLUEPRINT_POLL_MS, BLUEPRINTS_TOOLSET } from './blueprint-catalog.service.js';
export { BlueprintsTools } from './blueprints.tools.js';
export { parseBlueprintsFile } from './blueprint-seeder.service.js';
