/**
 * OpenAPI 3.0 schema objects (what @nestjs/swagger derives from the DTO classes) turned into
 * self-contained JSON Schema for MCP inputSchema/outputSchema: $refs inlined, `nullable`
 * spelled as a null type, `example` as `examples`. Pure.
 */

export type JsonSchema = { [key: string]: unknown };

const REF_PREFIX = '#/components/schemas/';
/** OpenAPI-only keywords with no JSON Schema meaning. */
const DROPPED = new Set(['nullable', 'example', 'discriminator', 'xml', 'externalDocs']);

export function toJsonSchema(schema: JsonSchema, components: Record<string, JsonSchema>, path: string[] = []): JsonSchema {
  const { $ref, allOf, nullable, example, ...rest } = schema as JsonSchema & { $ref?: string; allOf?: JsonSchema[]; nullable?: boolean };
  let out: JsonSchema = {};
  if (typeof $ref === 'string') {
    out = { ...resolve($ref, components, path) };
  }
  if (Array.isArray(allOf)) {
    // @nestjs/swagger wraps a described or nullable $ref as {allOf: [{$ref}], ...}: merge it.
    const parts = allOf.map((part) => toJsonSchema(part, components, path));
    out = parts.length === 1 ? { ...out, ...parts[0] } : { ...out, allOf: parts };
  }
  for (const [key, value] of Object.entries(rest)) {
    if (DROPPED.has(key) || key.startsWith('x-')) continue;
    if (key === 'type' && out.type !== undefined) continue;
    out[key] = convertKeyword(key, value, components, path);
  }
  if (example !== undefined) out.examples = [example];
  return nullable === true ? withNull(out) : out;
}

/** Several object schemas side by side: one object taking all their properties, nothing else. */
export function mergeObjectSchemas(parts: JsonSchema[], description?: string): JsonSchema {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const part of parts) {
    Object.assign(properties, part.properties ?? {});
    for (const name of (part.required as string[] | undefined) ?? []) if (!required.includes(name)) required.push(name);
  }
  return {
    type: 'object',
    ...(description ? { description } : {}),
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

function convertKeyword(key: string, value: unknown, components: Record<string, JsonSchema>, path: string[]): unknown {
  if (key === 'properties' && isObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, toJsonSchema(sub as JsonSchema, components, path)]));
  }
  if ((key === 'items' || key === 'not' || key === 'additionalProperties') && isObject(value)) {
    return toJsonSchema(value, components, path);
  }
  if ((key === 'anyOf' || key === 'oneOf') && Array.isArray(value)) {
    return value.map((sub) => toJsonSchema(sub as JsonSchema, components, path));
  }
  return value;
}

function resolve(ref: string, components: Record<string, JsonSchema>, path: string[]): JsonSchema {
  if (!ref.startsWith(REF_PREFIX)) throw new Error(`cannot inline ${ref}: only ${REF_PREFIX}* references are supported`);
  const name = ref.slice(REF_PREFIX.length);
  if (path.includes(name)) throw new Error(`cannot inline ${ref}: the schema refers to itself (${[...path, name].join(' → ')})`);
  const target = components[name];
  if (!target) throw new Error(`cannot inline ${ref}: no such schema among ${Object.keys(components).join(', ')}`);
  return toJsonSchema(target, components, [...path, name]);
}

function withNull(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string') {
    const out: JsonSchema = { ...schema, type: [schema.type, 'null'] };
    if (Array.isArray(schema.enum)) out.enum = [...schema.enum, null];
    return out;
  }
  return { anyOf: [schema, { type: 'null' }] };
}

function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An object schema's top-level properties with their type and description only (nested schemas dropped), and its required list. */
export function shallowSchema(schema: JsonSchema): JsonSchema {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const shallow = Object.fromEntries(
    Object.entries(properties).map(([key, value]) => [key, Object.fromEntries(Object.entries(value).filter(([k]) => k === 'type' || k === 'description'))]),
  );
  return { type: 'object', properties: shallow, ...(schema.required ? { required: schema.required } : {}), ...(schema.description ? { description: schema.description } : {}) };
}
