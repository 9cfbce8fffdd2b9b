// The lint rules of the house (type-aware, typescript-eslint). `npm test` runs them; an error fails it.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import packages from './scripts/packages.cjs';

// A cast says nothing about what was thrown: `errorMessage(error)` and `errorCode(error)` (runtime/)
// read any thrown value, `error instanceof Error` narrows it.
const errorCasts = [
  {
    selector: ":matches(TSAsExpression, TSTypeAssertion) > TSTypeReference.typeAnnotation[typeName.name='Error']",
    message: 'No `as Error`: use errorMessage(error) from runtime/, or narrow with `error instanceof Error`.',
  },
  {
    selector: ":matches(TSAsExpression, TSTypeAssertion) > TSTypeReference.typeAnnotation[typeName.left.name='NodeJS'][typeName.right.name='ErrnoException']",
    message: 'No `as NodeJS.ErrnoException`: use errorCode(error) from runtime/.',
  },
];
// Product code throws a MeshError (or a subclass) with a code of the catalogue, runtime/error-codes.ts.
const bareErrors = [
  {
    selector: "ThrowStatement > :matches(NewExpression, CallExpression).argument[callee.name='Error']",
    message: 'Product code throws a MeshError (or a subclass) with a code of runtime/error-codes.ts, keeping the message and the cause.',
  },
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tools/**', 'var/**', 'coverage/**', 'eslint.config.js', '.dependency-cruiser.cjs', 'jest.config.js', 'testing/summary-reporter.js', 'bin/**', 'scripts/**', '**/testdata/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Promises are awaited, returned or explicitly voided: a dropped rejection crashes a daemon.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-empty': ['error', { allowEmptyCatch: true }],
      eqeqeq: ['error', 'always'],
      'prefer-const': 'error',
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Settings are read through the settings registry (runtime/settings.ts), never process.env.' }],
      'no-restricted-syntax': ['error', ...errorCasts],
    },
  },
  {
    // The product packages (scripts/packages.cjs) but their tests, their test support and the data
    // plane's pure decision functions (which throw plain errors their callers wrap).
    files: packages.PRODUCT.map((name) => `${name}/**/*.ts`),
    ignores: ['**/*.test.ts', '**/testing/**', 'dataplane/decisions/**'],
    rules: { 'no-restricted-syntax': ['error', ...errorCasts, ...bareErrors] },
  },
  {
    // Plain JavaScript helpers (the TypeScript loader of child processes) are linted without types.
    files: ['**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, globals: { URL: 'readonly', process: 'readonly', console: 'readonly' } },
  },
  {
    // Tests build loosely typed fixtures (patch documents, API objects) on purpose.
    files: ['**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The settings registry, the programs' entry points and test/bench harnesses may read the environment.
    files: ['runtime/settings.ts', '**/*.test.ts', 'e2e/**', 'bench/**', 'testing/**'],
    rules: { 'no-restricted-properties': 'off' },
  },
);
