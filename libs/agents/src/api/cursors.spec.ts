import { describe, expect, it } from '@jest/globals';
import { decodeCursor, encodeCursor } from './cursors.js';

describe('agent listing pages', () => {
  it('gives back the listing key it encoded', () => {
    const key = { namespace: 'a', name: 'z-a', id: 'gone' };
    expect(decodeCursor(encodeCursor(key))).toEqual(key);
  });

  it.each(['zzz', Buffer.from('{"after":"x"}').toString('base64url'), ''])('refuses a cursor it did not issue: %j', (cursor) => {
    expect(() => decodeCursor(cursor)).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });
});
