import { describe, expect, it } from '@jest/globals';
import { isNamespacePattern, namespaceMatcher, namespacePatternToSqlLike } from './namespace-pattern.js';

describe('namespace patterns', () => {
  it.each([
    ['*', true],
    ['default', true],
    ['payments-*', true],
    ['*-prod', true],
    ['team-*-prod', true],
    ['Payments', false],
    ['payments_*', false],
    ['-payments', false],
    ['payments-', false],
    ['', false],
    ['a/b', false],
    ['payments-.*', false],
    ['a'.repeat(64), false],
  ])('isNamespacePattern(%j) → %s', (pattern, valid) => {
    expect(isNamespacePattern(pattern)).toBe(valid);
  });

  it.each([
    ['*', 'anything', true],
    ['payments-*', 'payments-eu', true],
    ['payments-*', 'payments-', true],
    ['payments-*', 'payments', false],
    ['payments-*', 'xpayments-eu', false],
    ['*-prod', 'checkout-prod', true],
    ['*-prod', 'checkout-prod2', false],
    ['team-*-prod', 'team-a-b-prod', true],
    ['default', 'default', true],
    ['default', 'default2', false],
  ])('%s matches %s → %s', (pattern, namespace, matches) => {
    expect(namespaceMatcher(pattern)(namespace)).toBe(matches);
  });

  it.each([
    ['*', '%'],
    ['payments-*', 'payments-%'],
    ['team-*-prod', 'team-%-prod'],
    ['default', 'default'],
  ])('%s is LIKE %s in SQL', (pattern, like) => {
    expect(namespacePatternToSqlLike(pattern)).toBe(like);
  });
});
