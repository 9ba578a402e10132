// Real services on a fresh embedded engine in a temporary data directory, for tests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../../core/config/load-config.ts';
import { createLogger, type Logger } from '../../core/logger.ts';
import { createServices, type Services } from '../../api/server/services.ts';
import { ADMIN_TOKEN } from './admin-token.ts';

export { ADMIN_TOKEN };

export interface StartOptions {
  /** A logger of the test's own (e.g. writing to a stream the test reads). */
  logger?: Logger;
  /** Clock of rate-limit windows. */
  now?: () => number;
  /** Clock of export jobs (retention, link expiry). */
  exportClock?: () => number;
  /** The question model's measures the services answer (the model's unless given). */
  measures?: import('../../api/analytics/question/model.ts').Measures;
  /** The chain an in-process x402 facilitator settles on (test/support/litesvm-chain.ts). */
  x402Chain?: import('../../api/services/x402/x402-server.ts').SvmChain;
}

export function testConfig(env: Record<string, string> = {}): Config & { dataDir: string } {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'txa-test-'));
  // ANONYMOUS_RATE_LIMIT: interface tests check their 401s by the dozen from one address;
  // the per-IP limit has its own test (access-rate-limit), which sets it low explicitly.
  return loadConfig({
    DATA_DIR: dataDir,
    EXPORT_DIR: `${dataDir}-exports`,
    DEMO_ROWS: '0',
    ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
    ANONYMOUS_RATE_LIMIT: '100000',
    ...env,
  });
}

export async function startServices(env: Record<string, string> = {}, options: StartOptions = {}): Promise<Services & { cleanup(): Promise<void> }> {
  const config = testConfig(env);
  const services = await createServices(config, options.logger ?? createLogger('silent'), {
    now: options.now,
    exportClock: options.exportClock,
    ...(options.measures ? { measures: options.measures } : {}),
    x402Chain: options.x402Chain,
  });
  return {
    ...services,
    async cleanup() {
      await services.close();
      if (config.clickhouse.url === undefined) rmSync(config.dataDir, { recursive: true, force: true });
      rmSync(config.exports.dir, { recursive: true, force: true });
    },
  };
}

/** Services plus the HTTP app built on them (drive it with app.inject()). */
export async function startApp(env: Record<string, string> = {}, options: StartOptions = {}) {
  const { buildApp } = await import('../../api/server/app.ts');
  const services = await startServices(env, options);
  const app = await buildApp(services);
  return {
    services,
    app,
    async cleanup() {
      await app.close();
      await services.cleanup();
    },
  };
}

/** An app with `records` demo records ingested and an API key: the set-up of interface tests. */
export async function startAppWithData(records: number) {
  const { apiKeyHeaders } = await import('./api-key.ts');
  const { ingestDemo } = await import('./fixtures.ts');
  const t = await startApp();
  const headers = await apiKeyHeaders(t.app);
  await ingestDemo(t.services, records);
  const active = await t.services.registry.activeNames();
  return { t, headers, active };
}
