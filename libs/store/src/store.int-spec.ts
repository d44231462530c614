import { copyFileSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { Store } from './store.js';

Logger.overrideLogger(false);

describe(`${Store.name}.check`, () => {
  let dir: string;
  let store: Store | undefined;

  afterEach(async () => {
    await store?.client.$disconnect();
    store = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(): Promise<string> {
    dir = mkdtempSync(join(tmpdir(), 'store-check-'));
    const file = join(dir, 'agent-manager.db');
    store = await Store.open(`file:${file}`);
    return file;
  }

  it('is healthy while the file it opened is in place and writable', async () => {
    await open();
    await expect(store!.check()).resolves.toEqual({ ok: true });
  });

  it('fails when the SQLite file was removed while the store ran, naming store rebuild', async () => {
    const file = await open();
    rmSync(file);
    const health = await store!.check();
    expect(health).toEqual({ ok: false, reason: expect.stringContaining('was removed') });
    expect(!health.ok && health.reason).toContain('agent-manager store rebuild');
  });

  it('fails when another file was put at its path', async () => {
    const file = await open();
    copyFileSync(file, `${file}.copy`);
    renameSync(`${file}.copy`, file);
    await expect(store!.check()).resolves.toEqual({ ok: false, reason: expect.stringContaining('was replaced') });
  });
});
