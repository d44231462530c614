#!/usr/bin/env node
// Stands in for Prisma's native schema engine, which Prisma 7's CLI downloads before generate
// from a host this project never reaches (scripts/prisma.mjs points PRISMA_SCHEMA_ENGINE_BINARY
// here; generate never runs it). The project's migrations are diffed by the WebAssembly build of
// the schema engine in scripts/prisma.mjs and applied by libs/store/src/migrator.ts.
process.stderr.write(
  "agent-manager: Prisma's native schema engine is not installed; use npm run prisma:migrations (scripts/prisma.mjs) instead of prisma migrate / db commands\n",
);
process.exit(1);
