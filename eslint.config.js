// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { CLIENT_AREAS, CLI_FORBIDDEN_PACKAGES, LAYERS, allowedTargets } from './layers.js';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'test-results/', 'bench/results/', 'coverage/', '.cache/'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['*.js', 'bin/*.js', 'scripts/*.js', 'scripts/*.mjs', 'bench/*.js', 'bench/*.mjs', 'fixtures/*/*.mjs', 'fixtures/*/*/*.mjs', 'fixtures/*/*.cjs'], maximumDefaultProjectFileMatchCount_THIS_WILL_SLOW_DOWN_LINTING: 96 }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-confusing-void-expression': 'off',
    },
  },
  {
    // The house rules (issue 13): no hand-written source file over 500 lines, no function over 80.
    files: ['src/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 500 }],
      'max-lines-per-function': ['error', { max: 80 }],
    },
  },
  {
    // The legacy HTTP+SSE transport is deprecated upstream, and kept here on purpose: many deployed servers still speak only it (issue 19).
    files: ['src/mcp/sse-transport.ts'],
    rules: { '@typescript-eslint/no-deprecated': ['error', { allow: [{ from: 'package', package: '@modelcontextprotocol/sdk', name: 'SSEClientTransport' }] }] },
  },
  {
    // On a 2025 connection the client's name and capabilities are what it declared at initialize, which only these accessors hold
    // (the per-request context the successor SDK points to carries them on 2026-07-28 requests only, where server.ts reads them there).
    files: ['src/gateway/server.ts'],
    rules: {
      '@typescript-eslint/no-deprecated': [
        'error',
        { allow: [{ from: 'package', package: '@modelcontextprotocol/server', name: ['getClientVersion', 'getClientCapabilities'] }] },
      ],
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
    // The web panel's browser app: plain ES modules run by the browser, not by Node.
    files: ['src/ui/static/**/*.js'],
    languageOptions: { parserOptions: { projectService: false, project: false }, globals: { window: 'readonly', document: 'readonly', location: 'readonly', fetch: 'readonly', EventSource: 'readonly', Notification: 'readonly', console: 'readonly' } },
  },
  {
    // The fixture package bin published by the install tests is CommonJS, as many real ones
    // are; so are our own bins (bin/package.json), for wispctl's start-up.
    files: ['**/*.cjs', 'bin/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', exports: 'writable' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // The declared layering (layers.js): each area imports only the doors of the areas below it.
  ...Object.keys(LAYERS).map((area) => {
    const allowed = allowedTargets(area).map((target) => target.replace(/[.]/g, '\\.')).join('|');
    return {
      files: [`src/${area}/**/*.ts`],
      rules: {
        '@typescript-eslint/no-restricted-imports': ['error', {
          patterns: [
            {
              regex: `^(\\.\\./)+(?!(${allowed})$)(${Object.keys(LAYERS).filter((a) => a !== area).join('|')})/`,
              message: `src/${area} may import only ${allowedTargets(area).join(', ') || 'nothing outside itself'} (layers.js)`,
            },
            ...(CLIENT_AREAS.includes(area) ? [{ regex: `^(${CLI_FORBIDDEN_PACKAGES.join('|')})(/.*)?$`, message: 'wispctl must not load daemon dependencies' }] : []),
          ],
        }],
      },
    };
  }),
);
