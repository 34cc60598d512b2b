import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'libs/weave-node/dist/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    rules: {
      // Shared code is reached only through a library's index (as novu enforces it): the index
      // is the library's contract, its files are not.
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/libs/*/src/**', '**/libs/*/src', '#libs/*/*'],
              message: 'Import shared code through its index: #libs/<name>.',
            },
            {
              group: ['**/apps/*/src/**', '../../apps/**'],
              message: 'Apps do not import each other; share through libs/.',
            },
          ],
        },
      ],
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
    // Tests and benchmarks start the real services, so they may reach into apps.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/libs/*/src/**', '#libs/*/*'], message: 'Import shared code through its index: #libs/<name>.' }] }] },
  },
);
