import { describe, expect, it } from '@jest/globals';
import { fieldChanges, manifestDiff } from './spec-diff.js';

describe('fieldChanges', () => {
  it.each([
    ['nothing differs', { modelConfig: 'm', toolset: ['preset:read-only'] }, { modelConfig: 'm', toolset: ['preset:read-only'] }, []],
    ['a scalar moves', { modelConfig: 'a' }, { modelConfig: 'b' }, [{ path: 'modelConfig', before: 'a', after: 'b' }]],
    ['the toolset compares whole', { toolset: ['a', 'b'] }, { toolset: ['b', 'a'] }, [{ path: 'toolset', before: ['a', 'b'], after: ['b', 'a'] }]],
    ['a label added, one changed, one removed', { labels: { a: '1', b: '2' } }, { labels: { b: '3', c: '4' } }, [
      { path: 'labels.a', before: '1' },
      { path: 'labels.b', before: '2', after: '3' },
      { path: 'labels.c', after: '4' },
    ]],
    ['empty and absent are the same', { description: '', labels: {} }, {}, []],
    ['a create: every present field', null, { modelConfig: 'm', description: 'd' }, [
      { path: 'description', after: 'd' },
      { path: 'modelConfig', after: 'm' },
    ]],
    ['a delete: every present field', { modelConfig: 'm' }, null, [{ path: 'modelConfig', before: 'm' }]],
  ])('%s', (_case, before, after, expected) => {
    expect(fieldChanges(before, after)).toEqual(expected);
  });
});

describe('manifestDiff', () => {
  it('is empty for the same manifests and names both sides otherwise', () => {
    expect(manifestDiff('n/a', 'x: 1\n', 'x: 1\n', { from: 'revision 1', to: 'revision 2' })).toBe('');
    const diff = manifestDiff('n/a', 'x: 1\n', 'x: 2\n', { from: 'revision 1', to: 'revision 2' });
    expect(diff).toContain('--- n/a (revision 1)');
    expect(diff).toContain('+++ n/a (revision 2)');
    expect(diff).toMatch(/^-x: 1$/m);
    expect(diff).toMatch(/^\+x: 2$/m);
  });
});
