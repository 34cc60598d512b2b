import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

// Shared code is reached only through a library's index (as novu enforces it): the index is the
// library's contract, its files are not.
const THROUGH_INDEX = { group: ['**/libs/*/src/**', '**/libs/*/src', '#libs/*/*'], message: 'Import shared code through its index: #libs/<name>.' };
const NO_APP_TO_APP = { group: ['**/apps/*/src/**', '../../apps/**'], message: 'Apps do not import each other; share through libs/.' };
// libs/servers spawns nats-server, PostgreSQL and Redis for development and tests: nothing a
// service runs in production may reach it (what both need is in #libs/connections).
const SPAWNER_MESSAGE = 'libs/servers is the development and test spawner; production code takes connection helpers from #libs/connections.';
const NO_SPAWNER_PATH = { name: '#libs/servers', message: SPAWNER_MESSAGE };
const NO_SPAWNER = { group: ['**/libs/servers/**'], message: SPAWNER_MESSAGE };

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'libs/weave-node/dist/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    rules: {
      'no-restricted-imports': ['error', { paths: [NO_SPAWNER_PATH], patterns: [THROUGH_INDEX, NO_APP_TO_APP, NO_SPAWNER] }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unsafe-function-type': 'off',
    },
  },
  {
    // The dashboard (React): the rules of hooks and the React Compiler's checks.
    files: ['apps/dashboard/src/**/*.{ts,tsx}'],
    ...reactHooks.configs.flat.recommended,
    rules: { ...reactHooks.configs.flat.recommended.rules, 'react-hooks/exhaustive-deps': 'error' },
  },
  {
    // The spawner itself, and the demo seeder (a development tool that starts its own servers).
    files: ['libs/servers/**/*.ts', 'apps/demo-seed/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [THROUGH_INDEX, NO_APP_TO_APP] }] },
  },
  {
    // Tests and benchmarks start the real services and their servers, so they may reach into apps and the spawner.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [THROUGH_INDEX] }] },
  },
);
