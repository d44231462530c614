// The image's build stage, after `npm run build`: leaves in node_modules only what the bundled
// service (dist/service) loads at run time, so the run stage copies tens of megabytes rather than
// the ~800 MB `npm prune --omit=dev` keeps (peer dependencies such as the Prisma CLI, TypeScript
// and aws-cdk-lib, helm's installer packages, C sources of the native driver).
//
// What is kept: every package the bundle imports or requires by a literal name (scripts/bundle.mjs
// leaves those outside it), the few it names only as a string (below), and what those depend on
// (dependencies and optionalDependencies, resolved as Node does). Then, inside what is kept, the
// files nothing loads: source maps, type declarations, Markdown, the native driver's sources and
// the Prisma query compilers of databases the service does not use. helm 4 stays
// (node_modules/.cache/agent-manager/helm4/helm, HELM_BIN); kubectl and helm 3 go.
// At the end every kept entry point is imported once, so a package pruned by mistake fails here,
// in the build, rather than on the first request that needs it.
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const modules = join(root, 'node_modules');
const bundleDir = join(root, 'dist', 'service');

// Named by the bundle only inside strings: @nestjs/swagger serves Swagger UI's files from
// swagger-ui-dist's folder; pino can start pino-pretty in a worker by name.
const NAMED_AS_STRINGS = ['pino-pretty', 'swagger-ui-dist'];
// Files nothing loads: source maps, TypeScript sources and declarations, Markdown; Prisma's query
// compilers for databases the generated clients do not use, their faster and larger twins, and the
// CommonJS copies of the ones used (the generated clients import the .mjs); Swagger UI's ES module
// builds for bundlers (the page loads swagger-ui-bundle.js).
const UNUSED_FILE = new RegExp(
  [
    String.raw`\.(map|ts|mts|cts|md|markdown|tsbuildinfo)$`,
    String.raw`[/\\]query_compiler_fast_bg\.[^/\\]*$`,
    String.raw`[/\\][^/\\]*\.(mysql|sqlserver|cockroachdb)\.[^/\\]*$`,
    String.raw`[/\\]wasm-compiler-edge\.[^/\\]*$`,
    String.raw`[/\\]query_compiler_small_bg\.[^/\\]*\.js$`,
    String.raw`[/\\]swagger-ui-es-bundle[^/\\]*$`,
  ].join('|'),
  'i',
);
// Packages for the Bare runtime: tar-fs and streamx name them under the "bare" condition of their
// "imports", which Node never takes.
const BARE_RUNTIME = /^bare-/;

const BUILTINS = new Set((await import('node:module')).builtinModules);
const packageName = (specifier) =>
  specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];

/** Bare specifiers the bundle imports, requires or resolves with a literal name. */
function bundleSpecifiers() {
  const found = new Set();
  // import … from "x", import("x"), require("x"), (require|createRequire(…)).resolve("x") and
  // createRequire(…)("x"). esbuild writes its own with double quotes; single-quoted ones are in
  // comments (examples).
  const sideEffect = /^import\s*['"]([^'"./][^'"]*)['"]/gm;
  const literal =
    /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire(?:\.resolve)?\s*\(\s*|\b\w*[cC]reateRequire\w*\s*\([^()]*\)(?:\.resolve)?\s*\(\s*)"([^"./][^"]*)"/g;
  for (const file of readdirSync(bundleDir)) {
    if (!file.endsWith('.mjs')) continue;
    const text = readFileSync(join(bundleDir, file), 'utf8');
    // The banner's side-effect import (reflect-metadata), written with single quotes.
    for (const [, specifier] of [...text.matchAll(literal), ...text.matchAll(sideEffect)]) {
      if (specifier.startsWith('node:') || BUILTINS.has(specifier) || specifier.includes('${')) continue;
      found.add(specifier);
    }
  }
  for (const name of NAMED_AS_STRINGS) found.add(name);
  return [...found].sort();
}

/** The folder Node finds `name` in when it is required from `fromDir`, or undefined. */
function resolvePackage(name, fromDir) {
  let dir = fromDir;
  for (;;) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === root) return undefined;
    dir = dirname(dir);
  }
}

const specifiers = bundleSpecifiers();
const keep = new Set();
const entries = [];
const queue = [];
for (const specifier of specifiers) {
  const dir = resolvePackage(packageName(specifier), root);
  // Nest's optional packages (microservices, websockets, …) must stay missing: it requires them
  // in try/catch and runs without them.
  if (!dir) continue;
  entries.push(specifier);
  queue.push(dir);
}
while (queue.length) {
  const dir = queue.pop();
  if (keep.has(dir)) continue;
  keep.add(dir);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  for (const name of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
    if (BARE_RUNTIME.test(name)) continue;
    const found = resolvePackage(name, dir);
    if (found) queue.push(found);
  }
}

const isKeptOrHoldsKept = (dir) => [...keep].some((kept) => kept === dir || kept.startsWith(dir + sep));
const isInsideKept = (path) => [...keep].some((kept) => path.startsWith(kept + sep));
let removedPackages = 0;
let removedFiles = 0;

/** Removes the packages of a node_modules folder that nothing keeps, then descends into the rest. */
function prunePackages(modulesDir) {
  for (const entry of readdirSync(modulesDir)) {
    const path = join(modulesDir, entry);
    if (entry === '.cache' || !statSync(path).isDirectory()) continue;
    if (entry.startsWith('@')) {
      prunePackages(path);
      if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
      continue;
    }
    if (entry === '.bin' || !isKeptOrHoldsKept(path)) {
      rmSync(path, { recursive: true, force: true });
      removedPackages += entry === '.bin' ? 0 : 1;
      continue;
    }
    if (existsSync(join(path, 'node_modules'))) prunePackages(join(path, 'node_modules'));
  }
}

/** Removes files nothing loads inside the kept packages. */
function pruneFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') pruneFiles(path);
    } else if (UNUSED_FILE.test(path) && isInsideKept(path)) {
      rmSync(path);
      removedFiles += 1;
    }
  }
}

/** build/esm and build/esnext of a package without "exports" (OpenTelemetry's): Node loads "main". */
function pruneModuleBuilds(dir) {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  if (manifest.exports) return;
  const main = join(dir, manifest.main ?? 'index.js');
  for (const folder of ['esm', 'esnext']) {
    const build = join(dir, 'build', folder);
    if (existsSync(build) && !main.startsWith(build + sep)) rmSync(build, { recursive: true });
  }
}

prunePackages(modules);
for (const dir of keep) {
  pruneFiles(dir);
  pruneModuleBuilds(dir);
}
// better-sqlite3 loads only its compiled driver; its SQLite sources and object files are ~25 MB.
const sqlite = join(modules, 'better-sqlite3');
for (const folder of ['deps', 'src']) rmSync(join(sqlite, folder), { recursive: true, force: true });
for (const entry of existsSync(join(sqlite, 'build')) ? readdirSync(join(sqlite, 'build')) : []) {
  if (entry !== 'Release') rmSync(join(sqlite, 'build', entry), { recursive: true, force: true });
}
for (const entry of readdirSync(join(sqlite, 'build', 'Release'))) {
  if (!entry.endsWith('.node')) rmSync(join(sqlite, 'build', 'Release', entry), { recursive: true, force: true });
}
// The bundle's source maps (3 MB): node reads them only with --enable-source-maps, which the image
// does not set; `npm run build` keeps them in the checkout for local debugging.
let removedMaps = 0;
for (const entry of readdirSync(bundleDir)) {
  if (!entry.endsWith('.map')) continue;
  rmSync(join(bundleDir, entry));
  removedMaps += 1;
}
// npm's record of the full tree, stale once packages are pruned.
rmSync(join(modules, '.package-lock.json'), { force: true });
// helm 4 runs agents' charts; helm 3 (a dev dependency's) and kubectl are not used at run time.
rmSync(join(modules, '.cache', 'agent-manager', 'helm3'), { recursive: true, force: true });
rmSync(join(modules, '.cache', 'agent-manager', 'helm4', 'kubectl'), { force: true });

console.log(
  `image-prune: kept ${keep.size} packages for ${entries.length} entry points, removed ${removedPackages} packages and ${removedFiles} files, and ${removedMaps} source maps of the bundle`,
);
const failures = [];
for (const specifier of entries) {
  try {
    await import(specifier);
  } catch (error) {
    // require-only entries (CommonJS internals such as ajv/dist/runtime/equal) are required instead.
    try {
      (await import('node:module')).createRequire(join(root, 'package.json'))(specifier);
    } catch {
      failures.push(`${specifier}: ${error.message}`);
    }
  }
}
if (failures.length) {
  console.error(`image-prune: entry points that no longer load:\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log(`image-prune: every entry point loads (${relative(root, modules)})`);
