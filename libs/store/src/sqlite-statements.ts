import type { ColumnDefinition, Database, Statement } from 'better-sqlite3';

/** How many distinct statements one connection keeps prepared; the least recently used goes first. */
export const KEPT_STATEMENTS = 256;

/** A prepared statement and, once asked, its columns (the same for every use: the schema only changes before the client connects). */
interface Kept {
  statement: Statement<unknown[]>;
  columns?: ColumnDefinition[];
}

/**
 * Prisma's better-sqlite3 adapter prepares each query's SQL anew and asks the new statement for
 * its columns: SQLite parses and plans the SQL every time, and describes every column of a join.
 * This keeps the connection's statements prepared by their SQL text, with their columns. The
 * adapter still calls `prepare(sql).bind(params)` per query; what it gets binds that use's
 * parameters to the kept statement instead (better-sqlite3 binds a statement's own only once).
 */
export function keepStatementsPrepared(db: Database, kept = KEPT_STATEMENTS): void {
  const prepare = db.prepare.bind(db);
  const statements = new Map<string, Kept>();
  const preparing = db as { prepare: (sql: string) => unknown };
  preparing.prepare = (sql: string) => {
    let entry = statements.get(sql);
    if (entry) statements.delete(sql);
    else entry = { statement: prepare(sql) };
    statements.set(sql, entry);
    if (statements.size > kept) statements.delete(statements.keys().next().value as string);
    return new KeptStatement(entry);
  };
}

/** One use of a kept statement: what the adapter calls on a prepared statement, with this use's parameters. */
export class KeptStatement {
  constructor(
    private readonly kept: Kept,
    private readonly params: unknown[] = [],
  ) {
    // raw() stays set on the statement: each use starts from rows as objects, as a new statement would.
    if (kept.statement.reader) kept.statement.raw(false);
  }

  get reader(): boolean {
    return this.kept.statement.reader;
  }

  bind(...params: unknown[]): KeptStatement {
    return new KeptStatement(this.kept, params);
  }

  raw(toggle = true): this {
    this.kept.statement.raw(toggle);
    return this;
  }

  columns(): ColumnDefinition[] {
    return (this.kept.columns ??= this.kept.statement.columns());
  }

  run() {
    return this.kept.statement.run(...this.params);
  }

  all() {
    return this.kept.statement.all(...this.params);
  }
}
