// The last step of `npm run build`: bundles tsc's output (dist/apps, dist/libs) into dist/service/,
// which is what runs: `npm start` (main.mjs), bin/agent-manager.mjs (cli.mjs) and the image.
//
// Why: Node on this stack starts by reading ~2,500 files (rxjs alone is 850 CommonJS files,
// class-validator with validator and libphonenumber-js another 800), and that stat/read/compile of
// every file was two thirds of start-up. Bundled, the service reads a few dozen chunks instead.
// What only some requests need (Swagger, the MCP SDK, jose, OpenTelemetry, the Kubernetes client)
// stays behind dynamic imports, so each becomes a chunk loaded on first use.
//
// Left to node_modules, each for a reason:
// - better-sqlite3, pg and the Prisma runtime and adapters: native code, WebAssembly and files
//   they find next to themselves;
// - pino and pino-pretty: their transports run in worker threads that load them by path;
// - @kubernetes/client-node and OpenTelemetry: loaded on first use, large, no state shared with the rest;
// - reflect-metadata: it must run before any decorator; the banner imports it first in every chunk;
// - Nest's optional packages that are not installed (microservices, websockets, ...): Nest
//   requires them inside try/catch, and must keep finding them missing.
// Everything else is bundled once, so there is one copy of Nest, class-validator and zod.
//
// Two programs run beside the service rather than in it: the helm spawner's helper process and the
// manifest reader's worker thread. Their code finds them by path next to itself
// (new URL('./x.mjs', import.meta.url)), which in the bundle is dist/service/: they are copied there
// as written (tsc checks them, and leaves its own copy beside its output in dist/libs): plain
// JavaScript importing only Node's own modules.
import { build } from 'esbuild';
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist', 'service');

const EXTERNAL = [
  'better-sqlite3',
  'pg',
  '@prisma/*',
  'pino',
  'pino-pretty',
  '@kubernetes/client-node',
  '@opentelemetry/*',
  'reflect-metadata',
  '@nestjs/microservices',
  '@nestjs/microservices/*',
  '@nestjs/websockets',
  '@nestjs/websockets/*',
  'class-transformer/storage',
  '@fastify/static',
];
const BESIDE = ['libs/helm/src/helm-spawner-helper.mjs', 'libs/agents/src/cluster/manifest-reader-worker.mjs'];

rmSync(outdir, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: { main: 'dist/apps/agent-manager/src/main.js', cli: 'dist/apps/agent-manager/src/cli.js' },
  outdir,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Nest and the logs use class names (contexts, error names): keep them as written.
  keepNames: true,
  legalComments: 'none',
  // Stack traces name the TypeScript source when the service runs with --enable-source-maps
  // (NODE_OPTIONS); off by default, where it costs ~70 ms of start and ~20 MiB.
  sourcemap: 'linked',
  sourcesContent: false,
  logLevel: 'warning',
  external: EXTERNAL,
  // CommonJS packages inside an ES module bundle still call require (for node: built-ins and the
  // packages left outside): give them one, resolving from the bundle's place in the project.
  banner: {
    js: "import 'reflect-metadata'; import { createRequire as __bundleCreateRequire } from 'node:module'; const require = __bundleCreateRequire(import.meta.url);",
  },
});
for (const program of BESIDE) copyFileSync(join(root, program), join(outdir, basename(program)));
// Every file the bundle opens next to itself must be there: a program renamed or added in the
// sources but not in BESIDE fails the build, not the first helm run or status read.
const missing = new Set();
for (const chunk of readdirSync(outdir).filter((file) => file.endsWith('.mjs'))) {
  for (const [, file] of readFileSync(join(outdir, chunk), 'utf8').matchAll(/new URL\("\.\/([^"]+)", import\.meta\.url\)/g)) {
    if (!existsSync(join(outdir, file))) missing.add(`${file} (named in ${chunk})`);
  }
}
if (missing.size > 0) throw new Error(`bundle: dist/service lacks ${[...missing].join(', ')}: add the program to BESIDE in scripts/bundle.mjs`);
