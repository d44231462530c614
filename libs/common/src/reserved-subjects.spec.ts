import { describe, expect, it } from '@jest/globals';
import { reservedSubjectPart } from './reserved-subjects.js';

describe(reservedSubjectPart.name, () => {
  it.each<[string, string]>([
    ['token:admin', 'token:'],
    ['Token:admin', 'token:'],
    ['TOKEN:admin', 'token:'],
    [' token:admin', 'token:'],
    ['\ttoken:admin ', 'token:'],
    ['ｔｏｋｅｎ:admin', 'token:'],
    ['token：admin', 'token:'],
    ['local:alice', 'local:'],
    ['System:masters', 'system:'],
    ['anonymous', 'anonymous'],
    [' Anonymous ', 'anonymous'],
  ])('finds the reserved part of %j', (subject, part) => {
    expect(reservedSubjectPart(subject)).toBe(part);
  });

  it.each(['alice', 'ci', 'tokens', 'token-admin', 'my token:x', 'anonymous2', 'bob@example.com'])('leaves %j alone', (subject) => {
    expect(reservedSubjectPart(subject)).toBeUndefined();
  });

  it('lets a source use its own prefix', () => {
    expect(reservedSubjectPart('local:alice', ['local:'])).toBeUndefined();
    expect(reservedSubjectPart('Token:admin', ['local:'])).toBe('token:');
  });
});
