import { availableParallelism } from 'node:os';
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
    // Test files share a worker process rather than starting one each (a fork per file cost more CPU than
    // the tests themselves): each file still gets its own temporary and cache directories from the setup
    // files, and a file that changes a global (process.env, a clock) puts it back. Most of a worker's time is
    // spent waiting on the real servers and CLIs it spawns, so two workers per core keep the cores busy.
    isolate: false,
    maxWorkers: availableParallelism() * 2,
    // .ci/run reads the counts from this report to print its closing line.
    reporters: ['default', ['json', { outputFile: 'node_modules/.cache/vitest-report.json' }]],
  },
});
