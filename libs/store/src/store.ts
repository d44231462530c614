import { Logger, type OnModuleDestroy } from '@nestjs/common';
import { PrismaBetterSQLite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient as PostgresClient } from './generated/postgresql/client.js';
import { PrismaClient as SqliteClient } from './generated/sqlite/client.js';
import { migrate, sqlitePath, type StoreProvider } from './migrator.js';

/**
 * The Prisma client of the configured store. Both providers are generated from the one
 * model, so their clients share one API; the SQLite client's type stands for both.
 */
export type StoreClient = SqliteClient;

export class Store implements OnModuleDestroy {
  private readonly logger = new Logger(Store.name);

  private constructor(
    readonly provider: StoreProvider,
    readonly client: StoreClient,
  ) {}

  /** Migrates the store and connects: the service does this itself at start. */
  static async open(url: string): Promise<Store> {
    const provider: StoreProvider = url.startsWith('file:') ? 'sqlite' : 'postgresql';
    const applied = await migrate(provider, url);
    const client =
      provider === 'sqlite'
        ? new SqliteClient({ adapter: new PrismaBetterSQLite3({ url: `file:${sqlitePath(url)}` }) })
        : (new PostgresClient({ adapter: new PrismaPg({ connectionString: url }) }) as unknown as StoreClient);
    await client.$connect();
    const store = new Store(provider, client);
    if (applied.length > 0) store.logger.log(`applied migrations: ${applied.join(', ')}`);
    return store;
  }

  /**
   * The store's clock, for times replicas compare (lease expiry): PostgreSQL's now() on
   * PostgreSQL, so hosts whose clocks differ agree; this process's clock for SQLite, which
   * serves one host.
   */
  async now(): Promise<Date> {
    if (this.provider === 'sqlite') return new Date();
    const [row] = await this.client.$queryRawUnsafe<{ now: Date }[]>('SELECT now() AS now');
    return new Date(row.now);
  }

  async onModuleDestroy(): Promise<void> {
    await this.client.$disconnect();
  }
}
