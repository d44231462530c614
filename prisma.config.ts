import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PrismaBetterSQLite3 } from '@prisma/adapter-better-sqlite3';
import { defineConfig } from 'prisma/config';

// Prisma 6.19's CLI with the JS engine runs generate and migrate diff offline. The CLI
// opens the adapter even for a pure diff, so it gets a scratch file, never the service's store.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  experimental: { adapter: true },
  engine: 'js',
  adapter: async () => new PrismaBetterSQLite3({ url: `file:${join(tmpdir(), 'agent-manager-prisma-cli.db')}` }),
});
