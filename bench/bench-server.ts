// Shared set-up of the REST/SQL benchmarks: real services on an embedded engine, seeded
// with demo rows once (a data directory is reused between runs when DATA_DIR is given),
// and the HTTP app listening on an ephemeral local port.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../api/server/app.ts';
import { createServices, type Services } from '../api/server/services.ts';
import { loadConfig } from '../core/config/load-config.ts';
import { createLogger } from '../core/logger.ts';
import { progressPrinter, seedIfEmpty } from '../ingest/seed.ts';
import { PLAN_CONCURRENCY } from '../core/plans.ts';

export interface BenchServer {
  services: Services;
  app: FastifyInstance;
  baseUrl: string;
  /** Headers carrying an enterprise API key created through the operator API. */
  headers: Record<string, string>;
  /** Headers for `connections` concurrent connections: enough enterprise keys that none
   *  has more connections than its cap on requests in flight (for runLoad's connectionHeaders). */
  connectionHeaders(connections: number): Promise<Record<string, string>[]>;
  close(): Promise<void>;
}

/**
 * The rate limiter's clock, 1000x fast unless RATE_LIMIT_CLOCK=real: windows turn over
 * every 60 ms, so every request still pays for the key lookup and the counter, but the
 * enterprise limit (2000/min) does not turn a throughput run into a run of 429s.
 */
function limiterClock(): (() => number) | undefined {
  if (process.env.RATE_LIMIT_CLOCK === 'real') return undefined;
  const t0 = Date.now();
  return () => t0 + (Date.now() - t0) * 1000;
}

/** Services on an embedded engine in a fresh temporary data directory (removed by cleanup). */
export async function startBenchServices(env: Record<string, string> = {}): Promise<Services & { cleanup(): Promise<void> }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'txa-bench-'));
  const config = loadConfig({ DATA_DIR: dataDir, DEMO_ROWS: '0', LOG_LEVEL: 'silent', ...env });
  const services = await createServices(config, createLogger(config.logLevel));
  return {
    ...services,
    async cleanup() {
      await services.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** `configure` may add routes (e.g. a bare baseline) before the server starts listening. */
export async function startBenchServer(rows: number, configure?: (app: FastifyInstance) => void): Promise<BenchServer> {
  const given = process.env.DATA_DIR;
  const dataDir = given ?? mkdtempSync(path.join(tmpdir(), 'txa-bench-'));
  const config = loadConfig({ ...process.env, DATA_DIR: dataDir, DEMO_ROWS: '0', LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' });
  const services = await createServices(config, createLogger(config.logLevel), { now: limiterClock() });
  const t0 = Date.now();
  const seeded = await seedIfEmpty(services.wh, rows, config.demoSeed, progressPrinter());
  if (seeded > 0) process.stderr.write(`seeded ${seeded} rows in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  const app = await buildApp(services);
  configure?.(app);
  const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  const keyRes = await app.inject({
    method: 'POST',
    url: '/admin/keys',
    headers: { authorization: `Bearer ${config.adminToken}` },
    payload: { name: 'bench', plan: 'enterprise' },
  });
  if (keyRes.statusCode !== 201) throw new Error(`creating the bench API key failed: ${keyRes.statusCode} ${keyRes.body}`);
  const headers = { 'x-api-key': (keyRes.json() as { key: string }).key };
  const connectionHeaders = async (connections: number): Promise<Record<string, string>[]> => {
    const out = [headers];
    while (out.length < Math.ceil(connections / PLAN_CONCURRENCY.enterprise)) {
      const res = await app.inject({
        method: 'POST',
        url: '/admin/keys',
        headers: { authorization: `Bearer ${config.adminToken}` },
        payload: { name: `bench-${out.length}`, plan: 'enterprise' },
      });
      if (res.statusCode !== 201) throw new Error(`creating a bench API key failed: ${res.statusCode} ${res.body}`);
      out.push({ 'x-api-key': (res.json() as { key: string }).key });
    }
    return out;
  };
  return {
    services,
    app,
    baseUrl,
    headers,
    connectionHeaders,
    async close() {
      await app.close();
      await services.close();
      if (given === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Samples this process's memory (the embedded engine lives in it too) until stopped. */
export function memorySampler(everyMs = 100): { stop(): { peakRssMb: number; peakHeapMb: number; startRssMb: number } } {
  const mb = (b: number) => Math.round((b / 1024 / 1024) * 10) / 10;
  const start = process.memoryUsage();
  let peakRss = start.rss;
  let peakHeap = start.heapUsed;
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return { peakRssMb: mb(peakRss), peakHeapMb: mb(peakHeap), startRssMb: mb(start.rss) };
    },
  };
}

/** An API key given in API_KEY (for a running server), else the in-process server's own. */
export function apiKeyHeader(server?: BenchServer): Record<string, string> {
  return process.env.API_KEY ? { 'x-api-key': process.env.API_KEY } : (server?.headers ?? {});
}
