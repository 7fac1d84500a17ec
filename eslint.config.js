// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'test-results/', 'bench/results/', 'coverage/', '.cache/'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['*.js', 'bin/*.js', 'scripts/*.js', 'scripts/*.mjs', 'bench/*.js', 'bench/*.mjs', 'fixtures/*/*.mjs', 'fixtures/*/*/*.mjs', 'fixtures/*/*.cjs'], maximumDefaultProjectFileMatchCount_THIS_WILL_SLOW_DOWN_LINTING: 64 }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-confusing-void-expression': 'off',
    },
  },
  {
    // vitest's asymmetric matchers (expect.any, objectContaining) are typed `any`.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-unsafe-assignment': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', setInterval: 'readonly', clearTimeout: 'readonly', Buffer: 'readonly', performance: 'readonly', setImmediate: 'readonly', TextDecoder: 'readonly', fetch: 'readonly' } },
  },
  {
    // The fixture package bin published by the install tests is CommonJS, as many real ones are.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', exports: 'writable' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // wispctl must start fast and must never load the daemon's internals (SDK, ajv, pino):
    // it talks to the daemon only through the control client and protocol.
    files: ['src/cli/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{
          regex: '^\\.\\./(?!control/(client|protocol|paths)(\\.js)?$)',
          message: 'src/cli may import only ../control/client.js, ../control/protocol.js and ../control/paths.js',
        }, { regex: '^(ajv|pino|@modelcontextprotocol/.*)$', message: 'wispctl must not load daemon dependencies' }],
      }],
    },
  },
);
