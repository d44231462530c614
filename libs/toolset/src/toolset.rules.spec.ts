import { describe, expect, it } from '@jest/globals';
import { SELECTOR_PATTERN, shippedPresetNearMiss } from './toolset.rules.js';

describe('SELECTOR_PATTERN', () => {
  it.each<[string, boolean]>([
    ['preset:read-only', true],
    ['server:日本', true],
    ['tool:𝔘nicode', true],
    ['tool:a\u00a0b', false],
    ['tool:a\u2003b', false],
    ['tool:a\u3000', false],
    ['tool:a\ufeff', false],
    ['tool:a\n', false],
    ['tool:a,b', false],
    ['Tool:a', false],
    ['label:a=b', false],
    ['toolset:a', false],
    ['tool:', false],
  ])('%j matches: %s', (selector, matches) => {
    expect(SELECTOR_PATTERN.test(selector)).toBe(matches);
  });
});

describe(shippedPresetNearMiss.name, () => {
  it.each<[string, string | undefined]>([
    ['read_only', 'read-only'],
    ['READ-ONLY', 'read-only'],
    ['Agent_Platform', 'agent-platform'],
    ['read-only', undefined],
    ['team-observability', undefined],
  ])('%s → %s', (name, shipped) => {
    expect(shippedPresetNearMiss(name)).toBe(shipped);
  });
});
