import { availableParallelism } from 'node:os';
import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from './app-config.js';

describe('loadConfig: the helm process pool', () => {
  it('defaults to twice the cores and a 10 s queue', () => {
    expect(loadConfig({})).toMatchObject({ HELM_CONCURRENCY: 2 * availableParallelism(), HELM_QUEUE_SECONDS: 10 });
  });

  it('reads HELM_CONCURRENCY and HELM_QUEUE_SECONDS', () => {
    expect(loadConfig({ HELM_CONCURRENCY: '3', HELM_QUEUE_SECONDS: '0' })).toMatchObject({ HELM_CONCURRENCY: 3, HELM_QUEUE_SECONDS: 0 });
  });

  it.each([
    ['HELM_CONCURRENCY', '0'],
    ['HELM_CONCURRENCY', 'many'],
    ['HELM_QUEUE_SECONDS', '-1'],
  ])('stops at start naming %s=%s', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}=`));
  });
});
