// Jest runs in native ESM mode (NestJS 12 and execa are ESM-only): `npm test` passes
// --experimental-vm-modules. ts-jest transpiles each file on its own (isolatedModules).
const shared = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^@app/(.*)$': '<rootDir>/libs/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.json' }],
  },
  testEnvironment: 'node',
  // A ceiling for a hung test, not a timing target: a busy 2-core machine runs the store-backed
  // suites several times slower than an idle one (jest's 5 s default failed there).
  testTimeout: 30_000,
};

export default {
  testTimeout: 30_000,
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/libs/**/*.spec.ts', '<rootDir>/apps/**/*.spec.ts'] },
    { ...shared, displayName: 'integration', testMatch: ['<rootDir>/{libs,apps,test}/**/*.int-spec.ts'] },
    { ...shared, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'] },
    {
      ...shared,
      displayName: 'cluster',
      testMatch: ['<rootDir>/test/**/*.cluster-spec.ts'],
      globalSetup: '<rootDir>/test/cluster/jest-global-setup.ts',
      globalTeardown: '<rootDir>/test/cluster/jest-global-teardown.ts',
    },
  ],
};
