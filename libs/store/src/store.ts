import { statSync } from 'node:fs';
import { Logger, type OnModuleDestroy } from '@nestjs/common';
import { SystemClock, type Clock } from '@app/common';
import { Tracing, type Metrics } from '@app/telemetry';
import type { PrismaClient as SqliteClient } from './generated/sqlite/client.js';
import { migrate, sqlitePath, type StoreProvider } from './migrator.js';
import { SqliteIntegrity } from './sqlite-integrity.js';
import { keepStatementsPrepared } from './sqlite-statements.js';
import { queueAroundTransactions } from './sqlite-transactions.js';

/**
 * The Prisma client of the configured store. Both providers are generated from the one
 * model, so their clients share one API; the SQLite client's type stands for both.
 */
export type StoreClient = SqliteClient;

const PROBE_TABLE = 'CREATE TABLE IF NOT EXISTS "_agent_manager_health" ("id" INTEGER PRIMARY KEY, "at" TEXT NOT NULL)';

/** What `Store.check()` found: healthy, or why the store cannot be trusted with a write. */
export type StoreHealth = { ok: true } | { ok: false; reason: string };

/** The file the SQLite store opened, by device and inode: a file removed or put in its place is another file. */
interface OpenedFile {
  path: string;
  dev: number;
  ino: number;
}

export class Store implements OnModuleDestroy {
  private readonly logger = new Logger(Store.name);
  private probeReady = false;

  private constructor(
    readonly provider: StoreProvider,
    readonly client: StoreClient,
    private readonly file?: OpenedFile,
    private readonly integrity?: SqliteIntegrity,
    /** What the store's times are read from on SQLite, and moved by on PostgreSQL (now()). */
    readonly clock: Clock = new SystemClock(),
  ) {}

  /**
   * Migrates the store and connects: the service does this itself at start. `metrics` times its
   * queries and transactions; `clock` is what now() reads (a test's clock moved forward moves it).
   */
  static async open(url: string, metrics?: Metrics, clock?: Clock): Promise<Store> {
    const provider: StoreProvider = url.startsWith('file:') ? 'sqlite' : 'postgresql';
    const path = provider === 'sqlite' ? sqlitePath(url) : undefined;
    const onDisk = path !== undefined && path !== ':memory:';
    // A damaged file stops the start before anything (the migrations first) writes to it.
    if (onDisk) SqliteIntegrity.requireSound(path);
    const applied = await migrate(provider, url);
    const integrity = onDisk ? new SqliteIntegrity(path) : undefined;
    const client =
      provider === 'sqlite'
        ? await sqliteClient(url, integrity)
        : await postgresClient(url);
    await client.$connect();
    const observed = metrics ? observedClient(client, metrics, provider) : client;
    const store = new Store(provider, observed, path === undefined ? undefined : openedFile(path), integrity, clock);
    if (applied.length > 0) store.logger.log(`applied migrations: ${applied.join(', ')}`);
    return store;
  }

  /**
   * The store's clock, for times replicas compare (lease expiry): PostgreSQL's now() on
   * PostgreSQL, so hosts whose clocks differ agree; this process's clock for SQLite, which
   * serves one host. Either moves as far as a test moved the clock.
   */
  async now(): Promise<Date> {
    if (this.provider === 'sqlite') return this.clock.now();
    const [row] = await this.client.$queryRawUnsafe<{ now: Date }[]>('SELECT now() AS now');
    return new Date(new Date(row.now).getTime() + this.clock.aheadMs);
  }

  /**
   * Whether the store can take a write now: the SQLite file this process opened is still the
   * one at its path (not removed, not replaced) and not damaged (sqlite-integrity.ts), and a row
   * can be written. A write into a removed or damaged file would answer 201 and be lost at the next start.
   */
  async check(): Promise<StoreHealth> {
    const moved = this.file && fileProblem(this.file);
    if (moved) return { ok: false, reason: moved };
    const damage = this.integrity?.check();
    if (damage) return { ok: false, reason: damage };
    // Two first checks at once (two writes, or two replicas) race on PostgreSQL: the loser's
    // CREATE TABLE IF NOT EXISTS fails with "type … already exists", which says nothing about the
    // store. The insert decides; when it fails too, the CREATE's failure is the reason.
    const created = this.probeReady ? undefined : await this.client.$executeRawUnsafe(PROBE_TABLE).then(() => undefined, (error: unknown) => error);
    try {
      // The time is a parameter: the statement's text stays the same, so SQLite keeps it prepared.
      await this.client.$executeRaw`INSERT INTO "_agent_manager_health" ("id", "at") VALUES (1, ${new Date().toISOString()}) ON CONFLICT ("id") DO UPDATE SET "at" = excluded."at"`;
      this.probeReady = true;
      return { ok: true };
    } catch (error) {
      return { ok: false, reason: `the store cannot be written: ${((created ?? error) as Error).message}` };
    }
  }

  async onModuleDestroy(): Promise<void> {
    await this.client.$disconnect();
  }
}

function openedFile(path: string): OpenedFile | undefined {
  if (path === ':memory:') return undefined;
  const info = statSync(path);
  return { path, dev: info.dev, ino: info.ino };
}

function fileProblem(file: OpenedFile): string | undefined {
  let info;
  try {
    info = statSync(file.path);
  } catch {
    return `the SQLite file ${file.path} was removed while the service ran: restart the service, then rebuild the store from the cluster (agent-manager store rebuild)`;
  }
  if (info.dev !== file.dev || info.ino !== file.ino) {
    return `the SQLite file ${file.path} was replaced by another file while the service ran: restart the service to open it`;
  }
  return undefined;
}

/** The SQLite client and its driver, loaded only when the store is SQLite (start time and memory). */
async function sqliteClient(url: string, integrity?: SqliteIntegrity): Promise<StoreClient> {
  const [{ PrismaClient }, { PrismaBetterSqlite3 }, { default: Database }] = await Promise.all([
    import('./generated/sqlite/client.js'),
    import('@prisma/adapter-better-sqlite3'),
    import('better-sqlite3'),
  ]);
  const adapter = new PrismaBetterSqlite3({ url: `file:${sqlitePath(url)}` });
  const connect = adapter.connect.bind(adapter);
  adapter.connect = async () => {
    const connection = await connect();
    // The adapter keeps its better-sqlite3 connection as `client`; anything else means Prisma changed it.
    const db: unknown = (connection as { client?: unknown }).client;
    if (!(db instanceof Database)) throw new Error("Prisma's better-sqlite3 adapter no longer keeps its connection as `client`: update sqliteClient in libs/store/src/store.ts");
    keepStatementsPrepared(db);
    queueAroundTransactions(connection);
    integrity?.guard(connection);
    return connection;
  };
  return new PrismaClient({ adapter });
}

/** The PostgreSQL client (generated from the same model, so it has the SQLite client's API) and its driver, loaded only for PostgreSQL. */
async function postgresClient(url: string): Promise<StoreClient> {
  const [{ PrismaClient }, { PrismaPg }] = await Promise.all([import('./generated/postgresql/client.js'), import('@prisma/adapter-pg')]);
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: url }) }) as StoreClient;
}

/**
 * The client with every query a span (`store query`) and timed (store_query_duration_seconds), and
 * every transaction a span of its own (`store transaction`, its queries' parent) and timed
 * (store_transaction_duration_seconds).
 */
function observedClient(client: StoreClient, metrics: Metrics, provider: StoreProvider): StoreClient {
  const timed = client.$extends({
    query: {
      async $allOperations({ model, operation, args, query }) {
        const started = process.hrtime.bigint();
        let ok = false;
        try {
          const attributes = { 'db.system.name': provider, 'db.collection.name': model, 'db.operation.name': operation };
          const result = await Tracing.span('store query', { kind: 'client', attributes }, () => query(args));
          ok = true;
          return result;
        } finally {
          metrics.storeQuery(model ?? 'raw', operation, ok, Number(process.hrtime.bigint() - started) / 1e9);
        }
      },
    },
  }) as StoreClient;
  const transaction = (async (...args: Parameters<StoreClient['$transaction']>) => {
    const started = process.hrtime.bigint();
    let ok = false;
    try {
      const result = await Tracing.span('store transaction', { kind: 'client', attributes: { 'db.system.name': provider } }, () => timed.$transaction(...(args as [never])));
      ok = true;
      return result;
    } finally {
      metrics.storeTransaction(ok, Number(process.hrtime.bigint() - started) / 1e9);
    }
  }) as StoreClient['$transaction'];
  return new Proxy(timed, { get: (target, key, receiver) => (key === '$transaction' ? transaction : Reflect.get(target, key, receiver)) });
}
