// Lint for the whole repository: typescript-eslint's recommended rules, and the type-aware
// rules that catch what the compiler lets through in async code (a promise nobody awaits, a
// promise where a callback's result is ignored, an await on a plain value, a switch that
// forgets a case). Formatting is Prettier's (eslint-config-prettier turns off the rules it owns).
import js from '@eslint/js'
import prettier from 'eslint-config-prettier'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '**/.turbo/**', 'packages/sdk/src/generated/**', 'var/**', 'test-artifacts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: {
        // Config files outside every tsconfig are checked with the default project.
        projectService: { allowDefaultProject: ['vitest.config.ts', 'packages/db/drizzle.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      '@typescript-eslint/only-throw-error': 'error',
      '@typescript-eslint/prefer-promise-reject-errors': 'error',
      // `_name` marks a value left out on purpose (a destructured field, a callback's argument).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      // Augmenting pdfkit's global PDFKit namespace (the types of our patches) needs namespace syntax.
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }],
      // A process's health check reads the worker before its one assignment: it cannot be const.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // Plain JavaScript that node runs as it is (the supervisor of npm start, a test's load
    // generator): Node's globals.
    files: ['scripts/**/*.mjs', '**/test/support/**/*.mjs'],
    languageOptions: {
      globals: { process: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', console: 'readonly', fetch: 'readonly' },
    },
  },
  prettier,
)
