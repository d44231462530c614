import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from './app-config.js';
import { parseMusterPresets } from './muster-presets.js';

describe('MUSTER_PRESETS', () => {
  it.each<[string, unknown]>([
    ['/etc/muster/config.yaml', { kind: 'file', path: '/etc/muster/config.yaml' }],
    ['config.yaml', { kind: 'file', path: 'config.yaml' }],
    ['configmap:muster/muster', { kind: 'configmap', namespace: 'muster', name: 'muster', key: 'config.yaml' }],
    ['configmap:giantswarm/muster-config#presets.yaml', { kind: 'configmap', namespace: 'giantswarm', name: 'muster-config', key: 'presets.yaml' }],
  ])('reads %s', (value, location) => {
    expect(parseMusterPresets(value)).toEqual(location);
    expect(loadConfig({ MUSTER_PRESETS: value }).musterPresets).toEqual(location);
  });

  it.each([
    ['configmap:muster', /expected configmap:<namespace>\/<name>/u],
    ['configmap:Muster/x', /namespace "Muster", which is not a namespace name/u],
    ['configmap:muster/x_y', /ConfigMap "x_y", which is not a ConfigMap name/u],
    ['configmap:muster/x#a b', /key "a b", which is not a ConfigMap key/u],
  ])('stops at start naming MUSTER_PRESETS=%s', (value, problem) => {
    expect(() => loadConfig({ MUSTER_PRESETS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ MUSTER_PRESETS: value })).toThrow(problem);
  });

  it('is unset unless given', () => {
    expect(loadConfig({}).musterPresets).toBeUndefined();
  });
});
