// Known data sets for tests: deterministic demo records, ingested through the pipeline.
import type { Services } from '../../api/services.ts';
import { demoRecordsNdjson } from '../../ingest/demo-generator.ts';
import type { IngestRecord } from '../../ingest/record-schema.ts';

/** Three days ending on an hour boundary, so tests can reason about whole and partial hours. */
export const FIXTURE_END = 1_735_689_600; // 2025-01-01T00:00:00Z
export const FIXTURE_START = FIXTURE_END - 3 * 86_400;

export async function demoRecords(services: Pick<Services, 'wh'>, count: number, seed = 7): Promise<IngestRecord[]> {
  const text = await demoRecordsNdjson(services.wh, {
    seed, total: count, offset: 0, count, startTime: FIXTURE_START, endTime: FIXTURE_END,
  });
  return text.trim().split('\n').map((l) => JSON.parse(l) as IngestRecord);
}

export async function ingestRecords(services: Pick<Services, 'pipeline'>, records: readonly object[]) {
  return services.pipeline.ingest(records.map((value, i) => ({ value, position: { line: i + 1 } })), 'test');
}

/** Row counts of the base table and every table a view writes to. */
export const COUNTED_TABLES = ['transactions', 'tx_by_signature_v2', 'tx_by_address', 'protocol_hourly', 'instruction_hourly', 'failure_hourly'] as const;
export type CountedTable = (typeof COUNTED_TABLES)[number];

export async function tableCounts(services: Pick<Services, 'wh'>): Promise<Record<CountedTable, number>> {
  const out = {} as Record<CountedTable, number>;
  for (const t of COUNTED_TABLES) {
    // Aggregating tables may hold unmerged parts: count their totals, not their rows.
    const expr = t === 'failure_hourly' ? 'sum(failures)' : t.endsWith('_hourly') ? 'sum(tx_count)' : 'count()';
    const [r] = await services.wh.query<{ n: string }>(`SELECT ${expr} AS n FROM ${t}`);
    out[t] = Number(r?.n ?? 0);
  }
  return out;
}
