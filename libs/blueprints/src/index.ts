export * from './blueprint.rules.js';
export { toolInputSchema } from './blueprint.schema.js';
