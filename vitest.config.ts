import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The JSON report is what .ci/run reads to print its totals line (scripts/test.sh names
    // another for each further Node.js release it runs on).
    reporters: ['default', ['json', { outputFile: process.env.WISP_TEST_REPORT ?? 'test-results/vitest.json' }]],
    // `npm run test:unit` runs the first alone: the loop while working (under a minute).
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      { extends: true, test: { name: 'integration', include: ['test/integration/**/*.test.ts', 'test/stress/**/*.test.ts'] } },
    ],
  },
});
