import { describe, expect, it } from '@jest/globals';
import { parseRevision, revisionBefore } from './revision-refs.js';

describe('parseRevision', () => {
  it.each([
    ['3', 2, { life: 2, revision: 3 }],
    ['1:3', 2, { life: 1, revision: 3 }],
    ['12:1', 1, { life: 12, revision: 1 }],
  ])('%s with life %d', (text, life, expected) => {
    expect(parseRevision(text, life)).toEqual(expected);
  });
});

describe('revisionBefore', () => {
  // Life 1: revisions 1-3, deleted; life 2: revision 1 only; life 3 (current): 1-2.
  const lives = [[1, 2, 3], [1], [1, 2]];
  it.each<[string, Parameters<typeof revisionBefore>[1], ReturnType<typeof revisionBefore>]>([
    ['a revision: the one before it in its life', { life: 1, revision: 3 }, { life: 1, revision: 2 }],
    ["a life's first: the last of the life before", { life: 3, revision: 1 }, { life: 2, revision: 1 }],
    ['across two lives back', { life: 2, revision: 1 }, { life: 1, revision: 3 }],
    ['the very first: nothing', { life: 1, revision: 1 }, null],
    ['live: the current revision', { live: 3 }, { life: 3, revision: 2 }],
    ['live with no agent now: the last revision of the last life', { live: null }, { life: 3, revision: 2 }],
  ])('%s', (_case, to, expected) => {
    expect(revisionBefore(lives, to)).toEqual(expected);
  });
});
