import type { IsolationLevel, SqlDriverAdapter, Transaction } from '@prisma/driver-adapter-utils';

/**
 * Prisma's better-sqlite3 adapter runs every query on its one connection. It orders transactions
 * among themselves, but a query outside a transaction still runs on that connection while
 * another request's transaction is open (between its statements, while that request's code
 * awaits): the query joins the open transaction, reads what is not committed, and a write it
 * makes is undone if that transaction rolls back — a write already answered as done, lost.
 *
 * This makes a query outside a transaction wait until no transaction is open, and a transaction
 * begin only once the one before it ended. The query itself still runs at once when none is open
 * (better-sqlite3 runs it synchronously). PostgreSQL gives each transaction a connection of its
 * own and needs none of this.
 */
export function queueAroundTransactions(connection: SqlDriverAdapter): void {
  /** Settles when the open transaction ends; undefined while none is open. */
  let open: Promise<void> | undefined;
  // The loop's last check and the call that follows it run without an await between them, so no
  // transaction can begin in between.
  const outside = <A extends unknown[], R>(run: (...args: A) => Promise<R>) => async (...args: A): Promise<R> => {
    while (open) await open;
    return run(...args);
  };
  connection.queryRaw = outside(connection.queryRaw.bind(connection));
  connection.executeRaw = outside(connection.executeRaw.bind(connection));
  connection.executeScript = outside(connection.executeScript.bind(connection));

  const startTransaction = connection.startTransaction.bind(connection);
  connection.startTransaction = outside(async (isolationLevel?: IsolationLevel) => {
    let end!: () => void;
    open = new Promise<void>((resolve) => (end = resolve));
    const close = () => {
      open = undefined;
      end();
    };
    let transaction: Transaction;
    try {
      transaction = await startTransaction(isolationLevel);
    } catch (error) {
      close();
      throw error;
    }
    // Prisma runs COMMIT or ROLLBACK as a statement first, then calls these: the transaction has ended.
    const ending = (finish: () => Promise<void>) => async () => {
      try {
        await finish();
      } finally {
        close();
      }
    };
    transaction.commit = ending(transaction.commit.bind(transaction));
    transaction.rollback = ending(transaction.rollback.bind(transaction));
    return transaction;
  });
}
