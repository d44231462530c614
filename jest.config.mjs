// Jest runs in native ESM mode (NestJS 12 and execa are ESM-only): `npm test` passes
// --experimental-vm-modules. SWC (@swc/jest, a native binary from npm) strips the types of each
// file on its own, with the decorator metadata NestJS's injection reads (tsconfig.json's
// experimentalDecorators/emitDecoratorMetadata, useDefineForClassFields false); type-checking is
// tsc's job. It transpiles every file about 20 times faster than ts-jest did, which mattered on
// CI's cold cache.
//
// The projects are the passes of test/passes.mjs: `npx jest` runs the SQLite pass (every suite,
// helm 4); AGENT_MANAGER_TEST_PASSES=sqlite,helm3,postgresql (what `npm test` sets) adds the
// suites marked for helm 3 and for PostgreSQL as projects of their own, so one jest run schedules
// every pass over its workers, longest suites first.
import { markedSuites, projectName, selectedPasses } from './test/passes.mjs';

/** tsconfig.json's compiler settings, as SWC spells them. */
const SWC = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
    target: 'es2022',
    keepClassNames: true,
  },
  sourceMaps: 'inline',
};

const shared = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^@app/(.*)$': '<rootDir>/libs/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    '^.+\\.ts$': ['@swc/jest', SWC],
  },
  testEnvironment: 'node',
  // Before each suite: the AsyncLocalStorage instances earlier suites in the worker left enabled are turned off.
  setupFiles: ['<rootDir>/test/support/async-stores-reset.ts'],
  // A ceiling for a hung test, not a timing target: a busy 2-core machine runs the store-backed
  // suites several times slower than an idle one (jest's 5 s default failed there).
  testTimeout: 30_000,
};

// The test control plane for cluster suites, a throw-away PostgreSQL for the PostgreSQL pass: each
// started once per run by the first project that needs it (test/support/jest-global-setup.mjs),
// both stopped by the one teardown.
const teardown = '<rootDir>/test/support/jest-global-teardown.mjs';
const GLOBAL_SETUP = {
  cluster: { globalSetup: '<rootDir>/test/support/global-setup-cluster.mjs', globalTeardown: teardown },
  postgresql: { globalSetup: '<rootDir>/test/support/global-setup-postgresql.mjs', globalTeardown: teardown },
  'cluster-postgresql': { globalSetup: '<rootDir>/test/support/global-setup-cluster-postgresql.mjs', globalTeardown: teardown },
};

const KINDS = [
  { kind: 'unit', match: (path) => /\.spec\.ts$/.test(path) && !/\.(int|e2e|cluster)-spec\.ts$/.test(path) },
  { kind: 'integration', match: (path) => path.endsWith('.int-spec.ts') },
  { kind: 'e2e', match: (path) => path.endsWith('.e2e-spec.ts') },
  { kind: 'cluster', match: (path) => path.endsWith('.cluster-spec.ts') },
];

/** One project per kind of suite that carries the pass's marker, with the pass's environment. */
function passProjects(pass, setupFile) {
  const needs = (kind) => [kind === 'cluster' && 'cluster', pass === 'postgresql' && 'postgresql'].filter(Boolean).join('-');
  const suites = markedSuites(pass);
  return KINDS.map(({ kind, match }) => ({ kind, files: suites.filter(match) }))
    .filter(({ files }) => files.length > 0)
    .map(({ kind, files }) => ({
      ...shared,
      displayName: projectName(pass, kind),
      testMatch: files.map((file) => `<rootDir>/${file}`),
      setupFiles: [...shared.setupFiles, setupFile],
      ...GLOBAL_SETUP[needs(kind)],
    }));
}

const passes = selectedPasses();
const projects = [];
if (passes.includes('sqlite')) {
  projects.push(
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/libs/**/*.spec.ts', '<rootDir>/apps/**/*.spec.ts'] },
    { ...shared, displayName: 'integration', testMatch: ['<rootDir>/{libs,apps,test}/**/*.int-spec.ts'] },
    { ...shared, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'] },
    { ...shared, displayName: 'cluster', testMatch: ['<rootDir>/test/**/*.cluster-spec.ts'], ...GLOBAL_SETUP.cluster },
  );
}
if (passes.includes('helm3')) projects.push(...passProjects('helm3', '<rootDir>/test/support/pass-helm3.ts'));
if (passes.includes('postgresql')) projects.push(...passProjects('postgresql', '<rootDir>/test/support/pass-postgresql.ts'));

export default {
  testTimeout: 30_000,
  projects,
  // `npm run test:coverage` (unit and e2e projects): V8's own counters, no instrumented copy of the code.
  coverageProvider: 'v8',
  collectCoverageFrom: ['<rootDir>/{apps,libs}/*/src/**/*.ts', '!**/*.{spec,int-spec,e2e-spec,cluster-spec}.ts', '!**/generated/**'],
  coverageReporters: ['text-summary', 'json-summary'],
  // One line per pass and reports/jest-<pass>.json beside jest's own output (scripts/test-all.mjs).
  reporters: ['default', '<rootDir>/test/support/pass-reporter.mjs'],
};
