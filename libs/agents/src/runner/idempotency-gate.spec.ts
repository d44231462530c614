import { describe, expect, it } from '@jest/globals';
import { canonicalJson } from './idempotency-gate.js';

describe(canonicalJson.name, () => {
  it.each([
    [{ b: 1, a: [2, { d: 'x', c: null }] }, '{"a":[2,{"c":null,"d":"x"}],"b":1}'],
    [{ a: undefined, b: true }, '{"b":true}'],
    ['ünïcode', '"ünïcode"'],
    [null, 'null'],
  ])('writes %j as %s', (value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });

  it('hashes two key orders of one request the same', () => {
    expect(canonicalJson({ systemMessage: 'x', labels: { b: '2', a: '1' } })).toBe(canonicalJson({ labels: { a: '1', b: '2' }, systemMessage: 'x' }));
  });
});
