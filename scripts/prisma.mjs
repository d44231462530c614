// Prisma tasks that work offline with Prisma 6.19's JS engine.
//   generate                 generate the SQLite and PostgreSQL clients from the one model
//   migrations <name>        write the next migration for both providers (needs PostgreSQL:
//                            PRISMA_PG_URL, or a throw-away one from test/pg/up.sh)
//   migrations --check       fail when prisma/schema.prisma changed without a new migration
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const prismaCli = join(root, 'node_modules', 'prisma', 'build', 'index.js');
const schemaPath = join(root, 'prisma', 'schema.prisma');
const migrationsDir = join(root, 'prisma', 'migrations');
const snapshotPath = join(migrationsDir, 'schema.snapshot.prisma');
const pgDir = join(root, 'prisma', '.postgresql');

function prisma(args, options = {}) {
  return execFileSync(process.execPath, [prismaCli, ...args], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], ...options });
}

/** The PostgreSQL variant of a SQLite schema text: same model, other provider. */
function toPostgres(schemaText, url) {
  return schemaText
    .replace('provider = "sqlite"', 'provider = "postgresql"')
    .replace(/url\s*=\s*"file:[^"]*"/, `url      = "${url}"`)
    .replace('generated/sqlite', 'generated/postgresql')
    .replace('"../libs/', '"../../libs/');
}

function writePgConfig(url) {
  mkdirSync(pgDir, { recursive: true });
  writeFileSync(
    join(pgDir, 'prisma.config.ts'),
    `import { PrismaPg } from '@prisma/adapter-pg';\nimport { defineConfig } from 'prisma/config';\n` +
      `export default defineConfig({ schema: 'schema.prisma', experimental: { adapter: true }, engine: 'js',\n` +
      `  adapter: async () => new PrismaPg({ connectionString: ${JSON.stringify(url)} }) });\n`,
  );
  return join(pgDir, 'prisma.config.ts');
}

function generate() {
  prisma(['generate', '--schema', schemaPath], { stdio: 'inherit' });
  const url = 'postgresql://localhost:5432/agent_manager';
  mkdirSync(pgDir, { recursive: true });
  writeFileSync(join(pgDir, 'schema.prisma'), toPostgres(readFileSync(schemaPath, 'utf8'), url));
  const config = writePgConfig(url);
  prisma(['generate', '--config', config, '--schema', join(pgDir, 'schema.prisma')], { stdio: 'inherit' });
  for (const provider of ['sqlite', 'postgresql']) readCompilerAsText(provider);
}

/**
 * The generated client imports Prisma's query compiler as a JavaScript module holding the wasm
 * as one 2.5 MB base64 string. A module is never unloaded, so that text (its source and the
 * string) stays in memory for the life of the process: about 15 MiB of the idle RSS, measured.
 * This rewrites the generated loader to read the same file as text, decode and compile it, and
 * let the text go. It fails generation when Prisma's output no longer looks as expected.
 */
function readCompilerAsText(provider) {
  const runtimeFile = `@prisma/client/runtime/query_compiler_bg.${provider}.wasm-base64.mjs`;
  const text = readFileSync(join(root, 'node_modules', runtimeFile), 'utf8');
  if (!/^const wasm = "[A-Za-z0-9+/=]+";\s*export \{ wasm \}\s*$/.test(text)) {
    throw new Error(`${runtimeFile} is no longer \`const wasm = "<base64>"; export { wasm }\`: update readCompilerAsText in scripts/prisma.mjs`);
  }
  const classFile = join(root, 'libs', 'store', 'src', 'generated', provider, 'internal', 'class.ts');
  const generated = readFileSync(classFile, 'utf8');
  const importing = `    const { wasm } = await import("${runtimeFile}")\n    return await decodeBase64AsWasm(wasm)\n`;
  if (!generated.includes(importing)) throw new Error(`${classFile} does not load the query compiler as expected: update readCompilerAsText in scripts/prisma.mjs`);
  const reading =
    `    // scripts/prisma.mjs: read as text, not imported, so the 2.5 MB of base64 is not kept for the process's life\n` +
    `    const [{ readFile }, { createRequire }] = await Promise.all([import('node:fs/promises'), import('node:module')])\n` +
    `    const text = await readFile(createRequire(import.meta.url).resolve("${runtimeFile}"), 'utf8')\n` +
    `    return await decodeBase64AsWasm(text.slice(text.indexOf('"') + 1, text.lastIndexOf('"')))\n`;
  writeFileSync(classFile, generated.replace(importing, reading));
}

/** A throw-away PostgreSQL from the test tooling (test/pg/up.sh), stopped with down.sh. */
function startThrowAwayPostgres() {
  const dir = mkdtempSync(join(tmpdir(), 'am-pg-'));
  const out = execFileSync('bash', [join(root, 'test', 'pg', 'up.sh'), dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const url = /TEST_DATABASE_URL=(\S+)/.exec(out)?.[1];
  if (!url) throw new Error(`test/pg/up.sh printed no URL: ${out}`);
  return { url, stop: () => spawnSync('bash', [join(root, 'test', 'pg', 'down.sh'), dir], { stdio: 'ignore' }) };
}

function migrations(name) {
  const current = readFileSync(schemaPath, 'utf8');
  const previous = existsSync(snapshotPath) ? readFileSync(snapshotPath, 'utf8') : null;
  if (previous === current) {
    console.log('prisma: migrations are up to date with prisma/schema.prisma');
    return;
  }
  if (!/^[a-z0-9_]+$/.test(name ?? '')) throw new Error('usage: npm run prisma:migrations -- <snake_case_name>');
  const existing = existsSync(join(migrationsDir, 'sqlite')) ? readdirSync(join(migrationsDir, 'sqlite')) : [];
  const folder = `${String(existing.length + 1).padStart(4, '0')}_${name}`;
  const work = mkdtempSync(join(tmpdir(), 'am-migrate-'));
  const pg = process.env.PRISMA_PG_URL ? { url: process.env.PRISMA_PG_URL, stop: () => {} } : startThrowAwayPostgres();
  try {
    for (const provider of ['sqlite', 'postgresql']) {
      const variant = (text) => (provider === 'sqlite' ? text : toPostgres(text, pg.url));
      const to = join(work, `${provider}-to.prisma`);
      writeFileSync(to, variant(current));
      const from = previous ? ['--from-schema-datamodel', join(work, `${provider}-from.prisma`)] : ['--from-empty'];
      if (previous) writeFileSync(join(work, `${provider}-from.prisma`), variant(previous));
      const config = provider === 'sqlite' ? [] : ['--config', writePgConfig(pg.url)];
      const sql = prisma(['migrate', 'diff', ...config, ...from, '--to-schema-datamodel', to, '--script']);
      const out = join(migrationsDir, provider, folder);
      mkdirSync(out, { recursive: true });
      writeFileSync(join(out, 'migration.sql'), sql);
      console.log(`prisma: wrote prisma/migrations/${provider}/${folder}/migration.sql`);
    }
    writeFileSync(snapshotPath, current);
  } finally {
    pg.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

function check() {
  const current = readFileSync(schemaPath, 'utf8');
  const previous = existsSync(snapshotPath) ? readFileSync(snapshotPath, 'utf8') : null;
  const sqlite = existsSync(join(migrationsDir, 'sqlite')) ? readdirSync(join(migrationsDir, 'sqlite')) : [];
  const pg = existsSync(join(migrationsDir, 'postgresql')) ? readdirSync(join(migrationsDir, 'postgresql')) : [];
  if (previous !== current || JSON.stringify(sqlite) !== JSON.stringify(pg)) {
    console.error('prisma: prisma/schema.prisma has changes without a migration: run npm run prisma:migrations -- <name> and commit prisma/migrations');
    process.exit(1);
  }
  console.log(`prisma: migrations match the schema (${sqlite.length} per provider)`);
}

const [command, arg] = process.argv.slice(2);
if (command === 'generate') generate();
else if (command === 'migrations' && arg === '--check') check();
else if (command === 'migrations') migrations(arg);
else {
  console.error('usage: node scripts/prisma.mjs generate | migrations <name> | migrations --check');
  process.exit(2);
}
