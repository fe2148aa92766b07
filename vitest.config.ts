import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Each test file gets its own user cache directory, removed after it.
    setupFiles: ['test/helpers/cache-home.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Spawned servers and CLIs are real processes; two cores do not want more than two at a time.
    maxWorkers: 2,
    // .ci/run reads the counts from this report to print its closing line.
    reporters: ['default', ['json', { outputFile: 'node_modules/.cache/vitest-report.json' }]],
  },
});
