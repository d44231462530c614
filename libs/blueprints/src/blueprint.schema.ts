import { CreateAgentDto } from '@app/agents';
import { applyOpenApiDecorators } from '@app/common';
import { acceptedArguments, type BlueprintBody } from './blueprint.rules.js';

type JsonSchema = Record<string, unknown>;

/** OpenAPI-only keywords, and examples (a documentation example could be read as the blueprint's value). */
const DROPPED = new Set(['required', 'isArray', 'example', 'nullable']);

/** One create argument's JSON Schema, from create_agent's own DTO (the REST and MCP contract), once its OpenAPI decorators are applied. */
function argumentSchema(name: string): JsonSchema {
  const meta = (Reflect.getMetadata('swagger/apiModelProperties', CreateAgentDto.prototype, name) ?? {}) as JsonSchema;
  const schema: JsonSchema = {};
  for (const [key, value] of Object.entries(meta)) {
    if (DROPPED.has(key)) continue;
    if (key === 'type' && typeof value === 'function') schema.type = value === Boolean ? 'boolean' : value === Number ? 'number' : 'string';
    else schema[key] = value;
  }
  schema.type ??= 'string';
  return schema;
}

/**
 * The input schema of a blueprint's tool: name, namespace, the open arguments (with their defaults
 * and create_agent's descriptions), dryRun and requestId. No fixed argument is named or shown.
 */
export async function toolInputSchema(body: BlueprintBody): Promise<JsonSchema> {
  await applyOpenApiDecorators();
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = ['name'];
  for (const name of acceptedArguments(body)) {
    const schema = argumentSchema(name);
    const fallback = (body.defaults as Record<string, unknown>)[name];
    if (fallback !== undefined) schema.default = fallback;
    properties[name] = schema;
  }
  if ((body.defaults as Record<string, unknown>).namespace === undefined) required.push('namespace');
  for (const name of body.open) {
    if ((name === 'modelConfig' || name === 'toolset') && (body.defaults as Record<string, unknown>)[name] === undefined) required.push(name);
  }
  return { type: 'object', properties, required, additionalProperties: false };
}
