import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from './app-config.js';

describe('loadConfig', () => {
  it('applies the embedded defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ PORT: 8080, HOST: '0.0.0.0', DATABASE_URL: 'file:./data/agent-manager.db', AGENT_CHART: 'charts/agent', LOG_LEVEL: 'log' });
    expect(config.storeProvider).toBe('sqlite');
  });

  it('reads PostgreSQL from DATABASE_URL', () => {
    expect(loadConfig({ DATABASE_URL: 'postgresql://u@db:5432/am' }).storeProvider).toBe('postgresql');
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['LOG_LEVEL', 'loud'],
    ['HELM_TIMEOUT_SECONDS', '0'],
  ])('stops at start naming %s=%s', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}=`));
  });
});
