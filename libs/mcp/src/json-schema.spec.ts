import { describe, expect, it } from '@jest/globals';
import { mergeObjectSchemas, toJsonSchema, type JsonSchema } from './json-schema.js';

const components: Record<string, JsonSchema> = {
  Ref: { type: 'object', properties: { id: { type: 'string', example: 'a1' } }, required: ['id'] },
  Holder: {
    type: 'object',
    properties: {
      plain: { $ref: '#/components/schemas/Ref' },
      described: { allOf: [{ $ref: '#/components/schemas/Ref' }], description: 'the ref' },
      maybe: { allOf: [{ $ref: '#/components/schemas/Ref' }], nullable: true, type: 'object' },
      list: { type: 'array', items: { $ref: '#/components/schemas/Ref' } },
      count: { type: 'number', nullable: true },
      kind: { type: 'string', enum: ['a', 'b'], nullable: true },
      map: { type: 'object', additionalProperties: { type: 'string' } },
    },
    required: ['plain'],
  },
  Loop: { type: 'object', properties: { next: { $ref: '#/components/schemas/Loop' } } },
};
const ref = { type: 'object', properties: { id: { type: 'string', examples: ['a1'] } }, required: ['id'] };

describe(toJsonSchema.name, () => {
  it.each<[string, JsonSchema, JsonSchema]>([
    ['a $ref, inlined', { $ref: '#/components/schemas/Ref' }, ref],
    ['a described $ref in allOf, merged', { allOf: [{ $ref: '#/components/schemas/Ref' }], description: 'd' }, { ...ref, description: 'd' }],
    ['a nullable $ref, as a null type', { allOf: [{ $ref: '#/components/schemas/Ref' }], nullable: true, type: 'object' }, { ...ref, type: ['object', 'null'] }],
    ['a nullable scalar', { type: 'number', nullable: true }, { type: ['number', 'null'] }],
    ['a nullable enum, with null among its values', { type: 'string', enum: ['a'], nullable: true }, { type: ['string', 'null'], enum: ['a', null] }],
    ['an array of $refs', { type: 'array', items: { $ref: '#/components/schemas/Ref' } }, { type: 'array', items: ref }],
    ['a string map', { type: 'object', additionalProperties: { type: 'string' } }, { type: 'object', additionalProperties: { type: 'string' } }],
    ['an example, as examples', { type: 'string', example: 'x' }, { type: 'string', examples: ['x'] }],
    ['vendor extensions, dropped', { type: 'string', 'x-enumNames': ['A'] }, { type: 'string' }],
  ])('turns %s into JSON Schema', (_, schema, expected) => {
    expect(toJsonSchema(schema, components)).toEqual(expected);
  });

  it('leaves no $ref and no nullable anywhere', () => {
    const text = JSON.stringify(toJsonSchema({ $ref: '#/components/schemas/Holder' }, components));
    expect(text).not.toContain('$ref');
    expect(text).not.toContain('nullable');
  });

  it.each<[string, string, RegExp]>([
    ['a schema that refers to itself', '#/components/schemas/Loop', /refers to itself \(Loop → Loop\)/],
    ['a missing schema', '#/components/schemas/Nope', /no such schema/],
    ['a reference outside the components', 'other.json#/X', /only #\/components\/schemas\/\* references/],
  ])('refuses %s', (_, $ref, message) => {
    expect(() => toJsonSchema({ $ref }, components)).toThrow(message);
  });
});

describe(mergeObjectSchemas.name, () => {
  it('puts the objects side by side and closes the result', () => {
    const a = { type: 'object', properties: { namespace: { type: 'string' }, name: { type: 'string' } }, required: ['namespace', 'name'] };
    const b = { type: 'object', properties: { dryRun: { type: 'boolean' }, name: { type: 'string' } } };
    expect(mergeObjectSchemas([a, b])).toEqual({
      type: 'object',
      properties: { namespace: { type: 'string' }, name: { type: 'string' }, dryRun: { type: 'boolean' } },
      required: ['namespace', 'name'],
      additionalProperties: false,
    });
  });

  it('gives an empty closed object for no input', () => {
    expect(mergeObjectSchemas([])).toEqual({ type: 'object', properties: {}, additionalProperties: false });
  });
});
