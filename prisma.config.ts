import { defineConfig } from 'prisma/config';

// Prisma 7's CLI only generates the clients here (scripts/prisma.mjs): no datasource, since the
// project migrates with its own migrator (libs/store/src/migrator.ts) and diffs migrations
// with the schema engine's WebAssembly build.
export default defineConfig({
  schema: 'prisma/schema.prisma',
});
