import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A temporary directory of its own for the run, checked for leftovers at the end; each file's
    // temporary directories removed after it, and its own user cache directory.
    globalSetup: ['test/setup/temporary-root.ts'],
    setupFiles: ['test/setup/temporary-files.ts', 'test/helpers/cache-home.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Spawned servers and CLIs are real processes; two cores do not want more than two at a time.
    maxWorkers: 2,
    // .ci/run reads the counts from this report to print its closing line.
    reporters: ['default', ['json', { outputFile: 'node_modules/.cache/vitest-report.json' }]],
  },
});
