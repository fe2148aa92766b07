import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Spawned servers and CLIs are real processes; two cores do not want more than two at a time.
    maxWorkers: 2,
  },
});
