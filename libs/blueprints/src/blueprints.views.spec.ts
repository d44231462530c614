import { describe, expect, it } from '@jest/globals';
import { fieldChanges } from '@app/agents';
import { bodyFields } from './blueprints.views.js';

const v1 = { description: 'Helps.', fixed: { modelConfig: 'default-model-config', toolset: ['preset:read-only'] }, open: ['displayName'], defaults: { namespace: 'agents' } };

describe('a blueprint version diff compares bodyFields', () => {
  it.each<[string, unknown, unknown, object[]]>([
    ['the same body: nothing', v1, { ...v1 }, []],
    ['a fixed argument moved: named by its path', v1, { ...v1, fixed: { ...v1.fixed, modelConfig: 'large' } }, [{ path: 'fixed.modelConfig', before: 'default-model-config', after: 'large' }]],
    ['a default added, one open argument more', v1, { ...v1, open: ['displayName', 'systemMessage'], defaults: { namespace: 'agents', systemMessage: 'Hi.' } }, [
      { path: 'defaults.systemMessage', after: 'Hi.' },
      { path: 'open', before: ['displayName'], after: ['displayName', 'systemMessage'] },
    ]],
    ['a fixed argument made open: removed from fixed, added to open', v1, { ...v1, fixed: { modelConfig: 'default-model-config' }, open: ['displayName', 'toolset'] }, [
      { path: 'fixed.toolset', before: ['preset:read-only'] },
      { path: 'open', before: ['displayName'], after: ['displayName', 'toolset'] },
    ]],
    ['the first version (nothing before): every field', null, { description: 'Helps.', fixed: {}, open: [], defaults: {} }, [{ path: 'description', after: 'Helps.' }]],
    ['an unreadable stored body reads as empty parts', 'not a body', v1, [
      { path: 'defaults.namespace', after: 'agents' },
      { path: 'description', after: 'Helps.' },
      { path: 'fixed.modelConfig', after: 'default-model-config' },
      { path: 'fixed.toolset', after: ['preset:read-only'] },
      { path: 'open', after: ['displayName'] },
    ]],
  ])('%s', (_case, before, after, expected) => {
    expect(fieldChanges(before === null ? null : bodyFields(before), bodyFields(after))).toEqual(expected);
  });
});
