import { createLogger } from './core/logger.ts';
import { demoRecordsNdjson } from './ingest/demo-generator.ts';
import { ndjsonRecords } from './ingest/ndjson.ts';
import { IngestPipeline } from './ingest/pipeline.ts';
import { startBenchServer } from './bench/bench-server.ts';
import type { IngestObserver } from './core/observers.ts';
const server = await startBenchServer(10_000_000);
const { wh, registry } = server.services;
const now = Math.floor(Date.now() / 3_600_000) * 3600;
let seed = Date.now() % 1e9;
for (const design of ['time-keys', 'signature-index', 'time-keys', 'signature-index'] as const) {
  const sums: Record<string, number> = {};
  const obs = { observeIngest() {}, observeBatch() {}, observeDeadLetters() {}, observeFreshness() {}, observeBackfill() {},
    observeStage(s: string, x: number) { sums[s] = (sums[s] ?? 0) + x; } } as IngestObserver;
  const p = new IngestPipeline(wh, registry, server.services.dataVersion, createLogger('silent'), { maxRecordBytes: 262144, batchRows: 10000, dedupe: design, observer: obs });
  const nd = await demoRecordsNdjson(wh, { seed: seed++, total: 40000, offset: 0, count: 40000, startTime: now - 86400, endTime: now });
  const t0 = performance.now();
  const r = await p.ingest(ndjsonRecords(nd), 'probe');
  console.log(design, r.accepted, Math.round(performance.now() - t0), 'ms', Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, Math.round(v * 1000)])));
}
await server.close();
