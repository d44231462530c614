import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './app-config.js';
import { PROJECT_ROOT } from './project-root.js';

describe('loadConfig', () => {
  it('applies the embedded defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ PORT: 8080, HOST: '0.0.0.0', DATABASE_URL: `file:${join(PROJECT_ROOT, 'data', 'agent-manager.db')}`, AGENT_CHART: 'charts/agent', LOG_LEVEL: 'log' });
    expect(config.storeProvider).toBe('sqlite');
  });

  it('finds the project\'s own chart and store from any working directory', () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'agent-manager-cwd-'));
    const cwd = process.cwd();
    try {
      process.chdir(elsewhere);
      const config = loadConfig({});
      expect(config.chartRef).toBe(join(PROJECT_ROOT, 'charts', 'agent'));
      expect(config.DATABASE_URL).toBe(`file:${join(PROJECT_ROOT, 'data', 'agent-manager.db')}`);
      expect(loadConfig({ AGENT_CHART: './mine' }).chartRef).toBe(join(realpathSync(elsewhere), 'mine'));
    } finally {
      process.chdir(cwd);
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('refuses a REPLICA_ID that takes the recovery sweeps\' prefix', () => {
    expect(() => loadConfig({ REPLICA_ID: 'recovery@a' })).toThrow(/REPLICA_ID=/);
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
