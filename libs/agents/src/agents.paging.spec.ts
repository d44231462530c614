import { describe, expect, it } from '@jest/globals';
import { compareKeys, decodeCursor, encodeCursor, isAfter, matchesLabel } from './agents.paging.js';

describe('agent listing pages', () => {
  const rows = [
    { namespace: 'b', name: 'a', id: '1' },
    { namespace: 'a', name: 'z-b', id: '2' },
    { namespace: 'a', name: 'z', id: '3' },
    { namespace: 'a', name: 'z', id: '0' },
  ];

  it('orders by namespace, name and id', () => {
    expect([...rows].sort(compareKeys).map((r) => r.id)).toEqual(['0', '3', '2', '1']);
  });

  it('continues after a cursor whose agent no longer exists', () => {
    const cursor = decodeCursor(encodeCursor({ namespace: 'a', name: 'z-a', id: 'gone' }));
    expect(rows.filter((r) => isAfter(r, cursor)).map((r) => r.id).sort()).toEqual(['1', '2']);
  });

  it.each(['zzz', Buffer.from('{"after":"x"}').toString('base64url'), ''])('refuses a cursor it did not issue: %j', (cursor) => {
    expect(() => decodeCursor(cursor)).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });

  it.each([
    ['team=sre', true],
    ['team=ops', false],
    ['team', true],
    ['tier', false],
    [undefined, true],
  ])('matches the label selector %s', (selector, matches) => {
    expect(matchesLabel({ modelConfig: 'm', toolset: ['preset:none'], labels: { team: 'sre' } }, selector)).toBe(matches);
  });
});
