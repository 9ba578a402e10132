// Shared set-up of the REST/SQL benchmarks: real services on an embedded engine, seeded
// with demo rows once (a data directory is reused between runs when DATA_DIR is given),
// and the HTTP app listening on an ephemeral local port.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../api/app.ts';
import { createServices, type Services } from '../api/services.ts';
import { loadConfig } from '../core/config.ts';
import { createLogger } from '../core/logger.ts';
import { progressPrinter, seedIfEmpty } from '../ingest/seed.ts';

export interface BenchServer {
  services: Services;
  app: FastifyInstance;
  baseUrl: string;
  close(): Promise<void>;
}

export async function startBenchServer(rows: number): Promise<BenchServer> {
  const given = process.env.DATA_DIR;
  const dataDir = given ?? mkdtempSync(path.join(tmpdir(), 'txa-bench-'));
  const config = loadConfig({ ...process.env, DATA_DIR: dataDir, DEMO_ROWS: '0', LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' });
  const services = await createServices(config, createLogger(config.logLevel));
  const t0 = Date.now();
  const seeded = await seedIfEmpty(services.wh, rows, config.demoSeed, progressPrinter());
  if (seeded > 0) process.stderr.write(`seeded ${seeded} rows in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  const app = await buildApp(services);
  const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    services,
    app,
    baseUrl,
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

export function apiKeyHeader(): Record<string, string> {
  return process.env.API_KEY ? { 'x-api-key': process.env.API_KEY } : {};
}
