import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { headerProblem, isCorruption, quickCheck, SqliteIntegrity } from './sqlite-integrity.js';

describe(SqliteIntegrity.name, () => {
  let dir: string;
  let sound: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sqlite-integrity-'));
    sound = join(dir, 'sound.db');
    const db = new Database(sound);
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, text TEXT)');
    const insert = db.prepare('INSERT INTO t (text) VALUES (?)');
    for (let i = 0; i < 100; i++) insert.run('x'.repeat(400));
    db.close();
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['better-sqlite3 SQLITE_CORRUPT', Object.assign(new Error('database disk image is malformed'), { code: 'SQLITE_CORRUPT' }), true],
    ["Prisma's adapter, extended SQLITE_CORRUPT_INDEX (779)", { message: 'x', cause: { kind: 'sqlite', extendedCode: 779, message: 'y' } }, true],
    ['SQLITE_NOTADB (26)', { cause: { extendedCode: 26 } }, true],
    ['SQLITE_BUSY (5)', { cause: { extendedCode: 5, message: 'database is locked' } }, false],
    ['a unique constraint', new Error('Unique constraint failed on the fields: (`name`)'), false],
  ])('isCorruption: %s', (_case, error, expected) => {
    expect(isCorruption(error)).toBe(expected);
  });

  it('finds nothing wrong with a sound file, and an empty file is a new store only before it was opened', () => {
    expect(headerProblem(sound)).toBeUndefined();
    expect(quickCheck(sound)).toBeUndefined();
    const empty = join(dir, 'empty.db');
    writeFileSync(empty, '');
    expect(headerProblem(empty)).toBeUndefined();
    expect(headerProblem(empty, true)).toContain('truncated to 0 bytes');
  });

  it.each([
    ['truncated', (file: string) => truncateSync(file, 8192), /truncated: its header counts \d+ pages of 4096 bytes, the file has 8192 bytes/],
    ['not a database', (file: string) => writeFileSync(file, 'x'.repeat(8192)), /not a SQLite header/],
  ])('start on a %s file: refused, naming what is wrong and what to do', (name, damage, why) => {
    const file = join(dir, `${name}.db`);
    writeFileSync(file, new Database(sound, { readonly: true }).serialize());
    damage(file);
    expect(() => SqliteIntegrity.requireSound(file)).toThrow(why);
    expect(() => SqliteIntegrity.requireSound(file)).toThrow(/agent-manager store rebuild/);
  });

  it('keeps what it found: once damaged, check() says so while the file looks sound again', () => {
    const file = join(dir, 'latched.db');
    writeFileSync(file, new Database(sound, { readonly: true }).serialize());
    let now = 0;
    const integrity = new SqliteIntegrity(file, () => now);
    expect(integrity.check()).toBeUndefined();
    const content = new Database(sound, { readonly: true }).serialize();
    truncateSync(file, 8192);
    expect(integrity.check()).toContain('truncated');
    writeFileSync(file, content);
    now += 60_000;
    expect(integrity.check()).toContain('truncated');
  });
});
