import { describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { keepStatementsPrepared } from './sqlite-statements.js';

/** A connection as the adapter opens it, with the statements it prepares counted. */
function connection(kept?: number) {
  const db = new Database(':memory:');
  db.defaultSafeIntegers(true);
  db.exec('CREATE TABLE agent (id INTEGER PRIMARY KEY, name TEXT NOT NULL, labels TEXT)');
  let prepared = 0;
  const prepare = db.prepare.bind(db);
  (db as { prepare: (sql: string) => unknown }).prepare = (sql: string) => {
    prepared++;
    return prepare(sql);
  };
  keepStatementsPrepared(db, kept);
  return { db, prepared: () => prepared };
}

// What Prisma's better-sqlite3 adapter does with a statement (performIO and executeIO).
const query = (db: Database.Database, sql: string, args: unknown[]) => {
  const statement = db.prepare(sql).bind(args);
  if (!statement.reader) return { changes: statement.run().changes };
  return { columns: statement.columns().map((c) => c.name), rows: statement.raw().all() };
};

describe('keepStatementsPrepared: the SQLite connection keeps its statements prepared', () => {
  it('prepares a statement once and answers every use with that use’s parameters', () => {
    const { db, prepared } = connection();
    const insert = 'INSERT INTO agent (id, name, labels) VALUES (?, ?, ?)';
    expect(query(db, insert, [1, 'triage', null])).toEqual({ changes: 1 });
    expect(query(db, insert, [2, 'review', '{"team":"sre"}'])).toEqual({ changes: 1 });
    const select = 'SELECT id, name FROM agent WHERE name = ?';
    expect(query(db, select, ['triage'])).toEqual({ columns: ['id', 'name'], rows: [[1n, 'triage']] });
    expect(query(db, select, ['review'])).toEqual({ columns: ['id', 'name'], rows: [[2n, 'review']] });
    expect(query(db, select, ['nobody'])).toEqual({ columns: ['id', 'name'], rows: [] });
    expect(prepared()).toBe(2);
  });

  it('does not carry raw mode from one use to the next', () => {
    const { db } = connection();
    db.exec("INSERT INTO agent (id, name) VALUES (1, 'triage')");
    const sql = 'SELECT name FROM agent WHERE id = ?';
    expect(db.prepare(sql).bind([1]).raw().all()).toEqual([['triage']]);
    expect(db.prepare(sql).bind([1]).all()).toEqual([{ name: 'triage' }]);
  });

  it('sees rows written after the statement was first prepared, and inside a transaction', () => {
    const { db } = connection();
    const count = 'SELECT count(*) AS n FROM agent';
    expect(query(db, count, []).rows).toEqual([[0n]]);
    query(db, 'BEGIN', []);
    query(db, 'INSERT INTO agent (id, name) VALUES (?, ?)', [7, 'a']);
    expect(query(db, count, []).rows).toEqual([[1n]]);
    query(db, 'ROLLBACK', []);
    expect(query(db, count, []).rows).toEqual([[0n]]);
  });

  it('keeps at most `kept` statements, letting the least recently used go', () => {
    const { db, prepared } = connection(2);
    const sql = (n: number) => `SELECT ${n} AS n`;
    for (const n of [1, 2, 1, 3]) query(db, sql(n), []); // 3 pushes out 2, the least recently used
    expect(prepared()).toBe(3);
    query(db, sql(1), []);
    expect(prepared()).toBe(3);
    query(db, sql(2), []);
    expect(prepared()).toBe(4);
  });
});
