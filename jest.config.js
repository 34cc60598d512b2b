// Jest runs our ESM sources (NestJS 12 is ESM only) through @swc/jest with legacy decorators
// and decorator metadata, the same transform the build uses (.swcrc).
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'es6' },
  },
];

const common = {
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: {
    '^#libs/([^/]+)$': '<rootDir>/libs/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // An ES-module-only dependency of @fastify/static that Jest cannot require (see the file).
    '^content-disposition$': '<rootDir>/test/support/content-disposition.cjs',
  },
  testEnvironment: 'node',
};

export default {
  // Integration tests start real servers and services; unit tests finish in milliseconds anyway.
  testTimeout: 120000,
  // The slowest files first, also on a clean clone without Jest's cache (see the file).
  testSequencer: '<rootDir>/test/support/slow-first-sequencer.js',
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.spec.ts', '<rootDir>/test/e2e/**/*.spec.ts'],
    },
    {
      // Fault tests (npm run test:faults, not part of npm test): private servers, services as
      // child processes of dist/ (built once by the global setup), kill -9 and restarts.
      ...common,
      displayName: 'faults',
      testMatch: ['<rootDir>/test/faults/**/*.spec.ts'],
      globalSetup: '<rootDir>/test/faults/global-setup.js',
    },
  ],
};
