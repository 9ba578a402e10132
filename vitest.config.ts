import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Three speeds of test, one run: `npm test` runs all of them, `npm run test:fast` the first
// two (no daemons to start), for a quick loop while working.
//  - unit:    no engine, no network (pure functions, the import graph, configuration);
//  - engine:  the real embedded engine (chDB) in the test's own process;
//  - daemons: real outside processes as well (a Kafka broker, redis-server, Prometheus,
//             the service as a child process, schemathesis from the project's .venv).
const UNIT = ['architecture', 'batch-edges', 'catalog', 'one-rule-once', 'chunked-json', 'config', 'dashboard-assets', 'dashboard-passwords', 'docs-plan-figures', 'event-log', 'export-scheduler', 'fuzz-settings', 'grafana-board', 'graphql-document-limits', 'house-rules', 'ingest-steps', 'install-scripts', 'live-feed', 'live-journal', 'live-stream-soak', 'mcp-transport', 'result-cache', 'sql-concurrency-gate', 'sql-lexer', 'stream-replay-cost', 'unit-boundaries'].map((n) => `test/${n}.test.ts`);
const DAEMONS = ['access-metrics', 'access-shared', 'access-shutdown', 'batch-abandon-crash', 'browser-clients', 'dashboard-browser', 'docs-examples', 'export-cli', 'export-loaders', 'export-restart', 'fuzz', 'graphiql-browser', 'kafka-crash', 'kafka-ingest', 'monitoring', 'openapi-client', 'openapi-go-client', 'openapi-ts-client', 'process-exit', 'promtool', 'soak', 'terminal-output', 'user-metrics'].map((n) => `test/${n}.test.ts`);

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
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT } },
      { extends: true, test: { name: 'engine', include: ['test/**/*.test.ts'], exclude: [...UNIT, ...DAEMONS] } },
      { extends: true, test: { name: 'daemons', include: DAEMONS } },
    ],
  },
});
