// Prisma tasks that work offline. Prisma 7's CLI generates the clients offline (the native schema
// engine it wants first is never run for generate: PRISMA_SCHEMA_ENGINE_BINARY points it at a
// stand-in, scripts/no-schema-engine.mjs, so it downloads nothing). Its migrate commands need that
// native engine, which is not on npm, so migrations are diffed by Prisma's schema engine compiled
// to WebAssembly (@prisma/schema-engine-wasm, the build the CLI's engines version names) through
// the project's own driver adapters.
//   generate                 generate the SQLite and PostgreSQL clients from the one model
//   migrations <name>        write the next migration for both providers (needs PostgreSQL:
//                            PRISMA_PG_URL, or a throw-away one from test/pg/up.sh)
//   migrations --check       fail when prisma/schema.prisma changed without a new migration
/* global WebAssembly */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const prismaCli = join(root, 'node_modules', 'prisma', 'build', 'index.js');
const schemaPath = join(root, 'prisma', 'schema.prisma');
const migrationsDir = join(root, 'prisma', 'migrations');
const snapshotPath = join(migrationsDir, 'schema.snapshot.prisma');
const pgDir = join(root, 'prisma', '.postgresql');

const noSchemaEngine = join(root, 'scripts', 'no-schema-engine.mjs');

function prisma(args, options = {}) {
  const env = { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: noSchemaEngine, CHECKPOINT_DISABLE: '1' };
  return execFileSync(process.execPath, [prismaCli, ...args], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], env, ...options });
}

/** The PostgreSQL variant of a SQLite schema text: same model, other provider. */
function toPostgres(schemaText) {
  return schemaText
    .replace('provider = "sqlite"', 'provider = "postgresql"')
    .replace('generated/sqlite', 'generated/postgresql')
    .replace('"../libs/', '"../../libs/');
}

/**
 * What the generated clients are made from: the model, this script (it edits them) and Prisma's
 * version. Kept next to the clients, so generating again (each `npm install`, and `npx
 * agent-manager`, which installs the checkout into npx's cache and so runs postinstall) leaves
 * them untouched when nothing changed, and `npm start` does not rebuild for nothing.
 */
function generatedFrom() {
  const version = (pkg) => JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8')).version;
  const hash = createHash('sha256');
  for (const part of [readFileSync(schemaPath, 'utf8'), readFileSync(fileURLToPath(import.meta.url), 'utf8'), version('prisma'), version('@prisma/client')]) hash.update(part).update('\0');
  return hash.digest('hex');
}

function generate() {
  const stamp = join(root, 'libs', 'store', 'src', 'generated', '.generated-from');
  const inputs = generatedFrom();
  const clients = ['sqlite', 'postgresql'].map((provider) => join(root, 'libs', 'store', 'src', 'generated', provider, 'client.ts'));
  if (existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === inputs && clients.every((file) => existsSync(file))) {
    console.log('prisma: the clients are up to date (libs/store/src/generated)');
    return;
  }
  console.log('prisma: generating the SQLite and PostgreSQL clients from prisma/schema.prisma ...');
  prisma(['generate', '--schema', schemaPath], { stdio: 'inherit' });
  mkdirSync(pgDir, { recursive: true });
  writeFileSync(join(pgDir, 'schema.prisma'), toPostgres(readFileSync(schemaPath, 'utf8')));
  prisma(['generate', '--schema', join(pgDir, 'schema.prisma')], { stdio: 'inherit' });
  for (const provider of ['sqlite', 'postgresql']) readCompilerAsText(provider);
  writeFileSync(stamp, inputs + '\n');
}

/** The schema engine's WebAssembly build, instantiated once: its glue module keeps views of one instance's memory. */
let schemaEngineWasm;
async function loadSchemaEngineWasm() {
  if (schemaEngineWasm) return schemaEngineWasm;
  const require = createRequire(import.meta.url);
  // The engine reports a panic's message here before it throws "unreachable".
  globalThis.PRISMA_WASM_PANIC_REGISTRY ??= { message: '', set_message(message) { this.message = message; } };
  const glue = await import('@prisma/schema-engine-wasm/schema_engine_bg');
  const wasmFile = join(dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg')), 'schema_engine_bg.wasm');
  const instance = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(wasmFile)), { './schema_engine_bg.js': glue });
  glue.__wbg_set_wasm(instance.exports);
  instance.exports.__wbindgen_start();
  schemaEngineWasm = glue.SchemaEngine;
  return schemaEngineWasm;
}

/**
 * Prisma's schema engine (WebAssembly), opened on a database through a driver adapter as
 * Prisma's own migrate does: SQLite on a scratch file, never the service's store.
 */
async function schemaEngine(provider, pgUrl) {
  const SchemaEngine = await loadSchemaEngineWasm();
  const { bindMigrationAwareSqlAdapterFactory } = await import('@prisma/driver-adapter-utils');
  const adapter =
    provider === 'sqlite'
      ? new (await import('@prisma/adapter-better-sqlite3')).PrismaBetterSqlite3({ url: `file:${join(tmpdir(), 'agent-manager-prisma-cli.db')}` })
      : new (await import('@prisma/adapter-pg')).PrismaPg({ connectionString: pgUrl });
  // The engine opens connections through the adapter; they are closed with close(), or the pool keeps the process alive.
  const opened = [];
  const connect = adapter.connect.bind(adapter);
  adapter.connect = async () => {
    const connection = await connect();
    opened.push(connection);
    return connection;
  };
  const log = process.env.PRISMA_ENGINE_DEBUG ? (line) => process.stderr.write(`${line}\n`) : () => undefined;
  const engine = await SchemaEngine.new({ datamodels: undefined }, log, bindMigrationAwareSqlAdapterFactory(adapter));
  engine.close = async () => {
    engine.free();
    await Promise.all(opened.map((connection) => connection.dispose()));
  };
  return engine;
}

/** The SQL that takes a database from one schema text (or an empty database) to another, as `prisma migrate diff --script` prints it. */
async function diffScript(engine, from, to) {
  const target = (text) => ({ tag: 'schemaDatamodel', files: [{ path: 'schema.prisma', content: text }] });
  const result = await engine.diff({
    from: from === null ? { tag: 'empty' } : target(from),
    to: target(to),
    script: true,
    exitCode: null,
    filters: { externalTables: [], externalEnums: [] },
  });
  return `${result.stdout ?? ''}\n`;
}

/**
 * The generated client imports Prisma's query compiler as a JavaScript module holding the wasm
 * as one 2.5 MB base64 string. A module is never unloaded, so that text (its source and the
 * string) stays in memory for the life of the process: about 15 MiB of the idle RSS, measured.
 * This rewrites the generated loader to read the same file as text, decode and compile it, and
 * let the text go. It fails generation when Prisma's output no longer looks as expected.
 */
function readCompilerAsText(provider) {
  const classFile = join(root, 'libs', 'store', 'src', 'generated', provider, 'internal', 'class.ts');
  const generated = readFileSync(classFile, 'utf8');
  // the build the schema's compilerBuild chose (query_compiler_small_bg.sqlite...)
  const runtimeFile = new RegExp(`import\\("(@prisma/client/runtime/query_compiler[a-z_]*_bg\\.${provider}\\.wasm-base64\\.mjs)"\\)`).exec(generated)?.[1];
  if (!runtimeFile) throw new Error(`${classFile} does not import a query compiler as expected: update readCompilerAsText in scripts/prisma.mjs`);
  const text = readFileSync(join(root, 'node_modules', runtimeFile), 'utf8');
  if (!/^const wasm = "[A-Za-z0-9+/=]+";\s*export \{ wasm \}\s*$/.test(text)) {
    throw new Error(`${runtimeFile} is no longer \`const wasm = "<base64>"; export { wasm }\`: update readCompilerAsText in scripts/prisma.mjs`);
  }
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

async function migrations(name) {
  const current = readFileSync(schemaPath, 'utf8');
  const previous = existsSync(snapshotPath) ? readFileSync(snapshotPath, 'utf8') : null;
  if (previous === current) {
    console.log('prisma: migrations are up to date with prisma/schema.prisma');
    return;
  }
  if (!/^[a-z0-9_]+$/.test(name ?? '')) throw new Error('usage: npm run prisma:migrations -- <snake_case_name>');
  const existing = existsSync(join(migrationsDir, 'sqlite')) ? readdirSync(join(migrationsDir, 'sqlite')) : [];
  const folder = `${String(existing.length + 1).padStart(4, '0')}_${name}`;
  const pg = process.env.PRISMA_PG_URL ? { url: process.env.PRISMA_PG_URL, stop: () => {} } : startThrowAwayPostgres();
  try {
    for (const provider of ['sqlite', 'postgresql']) {
      const variant = (text) => (provider === 'sqlite' ? text : toPostgres(text));
      const engine = await schemaEngine(provider, pg.url);
      let sql;
      try {
        sql = await diffScript(engine, previous === null ? null : variant(previous), variant(current));
      } catch (error) {
        const panic = globalThis.PRISMA_WASM_PANIC_REGISTRY.message;
        throw panic ? new Error(`Prisma's schema engine panicked: ${panic}`, { cause: error }) : error;
      } finally {
        await engine.close();
      }
      const out = join(migrationsDir, provider, folder);
      mkdirSync(out, { recursive: true });
      writeFileSync(join(out, 'migration.sql'), sql);
      console.log(`prisma: wrote prisma/migrations/${provider}/${folder}/migration.sql`);
    }
    writeFileSync(snapshotPath, current);
  } finally {
    pg.stop();
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
else if (command === 'migrations') await migrations(arg);
else {
  console.error('usage: node scripts/prisma.mjs generate | migrations <name> | migrations --check');
  process.exit(2);
}
