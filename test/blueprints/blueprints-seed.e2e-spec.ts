// npm test: also on PostgreSQL — seeding blueprints from a file into the store, once
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { stringify } from 'yaml';
import { call as rest, freshDatabaseUrl, startTestApp, type FreshDatabase } from '../support/test-app.js';

jest.setTimeout(120_000);

/** BLUEPRINTS_FILE across restarts on one store: absent → created; changed → upgraded; operator-edited → left alone. */
describe('blueprints seeded from BLUEPRINTS_FILE', () => {
  let db: FreshDatabase;
  let dir: string;

  const definition = (description: string) => ({
    name: 'explainer',
    description,
    fixed: { modelConfig: 'default-model-config', toolset: ['preset:read-only'], systemMessage: 'Explain the cluster; never change it.' },
    open: ['displayName'],
  });
  const boot = async (description: string) => {
    const file = join(dir, 'blueprints.yaml');
    writeFileSync(file, stringify({ blueprints: [definition(description)] }));
    return startTestApp({ DATABASE_URL: db.url, BLUEPRINTS_FILE: file });
  };
  const read = async (description: string) => {
    const t = await boot(description);
    try {
      return (await rest(t.url, 'GET', '/api/v1/blueprints/explainer')).body;
    } finally {
      await t.close();
    }
  };

  beforeAll(async () => {
    db = await freshDatabaseUrl();
    dir = mkdtempSync(join(tmpdir(), 'am-seed-'));
  });

  afterAll(async () => {
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates a blueprint the store does not have, file-owned', async () => {
    expect(await read('Explains the cluster.')).toMatchObject({ name: 'explainer', activeVersion: 1, owner: 'file', description: 'Explains the cluster.' });
  });

  it('leaves an unchanged definition as it is', async () => {
    expect(await read('Explains the cluster.')).toMatchObject({ activeVersion: 1, owner: 'file' });
  });

  it('upgrades it in place when the file changed while nobody edited it', async () => {
    expect(await read('Explains the cluster, read-only.')).toMatchObject({ activeVersion: 2, owner: 'file', description: 'Explains the cluster, read-only.' });
  });

  it('never overwrites it once an operator saved a version', async () => {
    const t = await boot('Explains the cluster, read-only.');
    try {
      const saved = await rest(t.url, 'POST', '/api/v1/blueprints/explainer/versions', { ...definition('Operator wording.'), name: undefined });
      expect(saved.status).toBe(201);
      expect(saved.body).toMatchObject({ activeVersion: 3, owner: 'operator' });
    } finally {
      await t.close();
    }
    expect(await read('A newer shipped wording.')).toMatchObject({ activeVersion: 3, owner: 'operator', description: 'Operator wording.' });
  });

  it('stops the start on a file with a bad blueprint, naming it', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, stringify({ blueprints: [{ ...definition('x'), fixed: { modelConfig: 'm', toolset: ['label:x'] } }] }));
    await expect(startTestApp({ DATABASE_URL: db.url, BLUEPRINTS_FILE: file })).rejects.toThrow(/BLUEPRINTS_FILE [\s\S]*blueprints\[0\] \(explainer\): fixed\.toolset\[0\]/);
  });
});
