import { defineConfig } from 'vitest/config';

// chDB binds one data directory per process: every test file runs in its own forked
// process with its own temporary data directory.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
