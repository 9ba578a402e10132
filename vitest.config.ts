import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Three speeds of test, one run, one folder each: `npm test` runs all of them,
// `npm run test:fast` the first two (no daemons to start), for a quick loop while working.
//  - test/unit:    no engine, no network (pure functions, the import graph, configuration);
//  - test/engine:  the real embedded engine (chDB) in the test's own process;
//  - test/daemons: real outside processes as well (a Kafka broker, redis-server, Prometheus,
//                  the service as a child process, schemathesis from the project's .venv).
// test/support and test/fixtures are shared by all three.
const TIERS = ['unit', 'engine', 'daemons'] as const;

// chDB binds one data directory per process: every test file runs in its own forked
// process with its own temporary data directory.
export default defineConfig({
  test: {
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: Math.max(1, availableParallelism()),
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: TIERS.map((name) => ({ extends: true, test: { name, include: [`test/${name}/**/*.test.ts`] } })),
  },
});
