// Shared by the ingest benchmarks (ingest-paths.ts, ingest-single-pass.ts): fresh demo bodies,
// the engine's own insert of a body (the ceiling every ingest figure is a ratio to), and the
// pipeline options and warm-up the rounds use.
import type { Services } from '../api/server/services.ts';
import { demoRecordsNdjson } from '../ingest/demo-generator.ts';
import { ndjsonRecords } from '../ingest/ndjson.ts';
import type { IngestPipeline } from '../ingest/pipeline.ts';
import { BASE_COLUMNS, TABLES } from '../warehouse/tables.ts';
import type { Warehouse } from '../warehouse/warehouse.ts';
import { timeMs } from './bench-support.ts';

/** The ceiling's insert: the base table's columns, its views in parallel, unknown fields skipped. */
export const ENGINE_INSERT = { columns: BASE_COLUMNS, settings: { parallel_view_processing: 1, input_format_skip_unknown_fields: 1 } };

/** The engine's own insert of an NDJSON body into the base table (and so through its views). */
export const engineInsert = (wh: Warehouse, bytes: Uint8Array): Promise<void> => wh.insertBytes(TABLES.transactions, bytes, 'JSONEachRow', ENGINE_INSERT);

/**
 * Fresh demo records as NDJSON, `count` a call, each call a seed of its own (so none repeats an
 * earlier call's, even on a reused store, DATA_DIR), spread over the data's last day.
 */
export function freshBodies(wh: Warehouse, count: number): (n?: number) => Promise<string> {
  const now = Math.floor(Date.now() / 3_600_000) * 3600;
  let seed = Date.now() % 1_000_000_000;
  return (n = count) => demoRecordsNdjson(wh, { seed: seed++, total: n, offset: 0, count: n, startTime: now - 86_400, endTime: now });
}

/** The options the benchmarks give a pipeline (parse on the main thread). */
export const benchPipelineOptions = (services: Services) => ({
  maxRecordBytes: 256 * 1024,
  batchRows: services.config.ingest.batchRows,
  writerId: 'bench',
  parseWorkers: 0,
});

/** A pipeline's prepare (the journal's repair check, timed: said when slow), then one small ingest to warm the JIT. */
export async function warmPipeline(p: IngestPipeline, name: string, fresh: (n?: number) => Promise<string>, say: (s: string) => void): Promise<void> {
  const prepMs = await timeMs(() => p.prepare());
  if (prepMs > 50) say(`${name}: prepare (repair check) ${prepMs.toFixed(0)} ms`);
  await p.ingest(ndjsonRecords(await fresh(2000)), 'bench-warm');
}
