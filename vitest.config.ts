import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The JSON report is what .ci/run reads to print its totals line.
    reporters: ['default', ['json', { outputFile: 'test-results/vitest.json' }]],
  },
});
