import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { loadMigrations, migrate } from './migrator.js';
import { Store } from './store.js';

describe('store migrations (SQLite)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'store-'));
  const url = `file:${join(dir, 'nested', 'store.db')}`;

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('creates the file and applies every migration once', async () => {
    const names = loadMigrations('sqlite').map((m) => m.name);
    expect(names.length).toBeGreaterThan(0);
    expect(await migrate('sqlite', url)).toEqual(names);
    expect(await migrate('sqlite', url)).toEqual([]);
  });

  it('opens a client that reads and writes the migrated tables', async () => {
    const store = await Store.open(url);
    try {
      await store.client.operation.create({
        data: { id: 'op-1', kind: 'create', namespace: 'n', name: 'a', state: 'pending', request: { toolset: ['preset:none'] }, actor: 'test' },
      });
      const op = await store.client.operation.findUniqueOrThrow({ where: { id: 'op-1' } });
      expect(op.request).toEqual({ toolset: ['preset:none'] });
    } finally {
      await store.client.$disconnect();
    }
  });

  it('refuses to start when an applied migration was edited', async () => {
    const db = new Database(url.slice('file:'.length));
    db.prepare('UPDATE "_agent_manager_migrations" SET checksum = ? WHERE name = ?').run('edited', loadMigrations('sqlite')[0].name);
    db.close();
    await expect(migrate('sqlite', url)).rejects.toThrow(/was changed after it was applied/);
  });
});
