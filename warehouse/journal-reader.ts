// Finished writes as the ingest journal records them (ingest/ingest-journal.ts writes it):
// for processes that did not make the writes themselves. The API's live subscriptions use
// it to learn the (protocol, hour) buckets written by the standalone ingest process or
// another replica; its own writes it hears from its pipeline directly.
import type { Warehouse } from './warehouse.ts';
import { JOURNAL_BEGIN_LOOKBACK_MS } from '../core/limits/ingest.ts';
import { TABLES } from './tables.ts';

export interface FinishedBatch {
  batchId: string;
  /** Unix milliseconds of the batch's 'done' row (the engine's clock). */
  at: number;
  buckets: { protocolName: string; hourStart: number }[];
}

/** The engine's clock, in Unix milliseconds: where a reader starts (history is not replayed). */
export async function journalClock(wh: Warehouse): Promise<number> {
  const [r] = await wh.query<{ now: string }>('SELECT toUnixTimestamp64Milli(now64(3)) AS now');
  return Number(r!.now);
}

/** Batches whose 'done' row is at or after `sinceMs`, with the buckets their 'begin' named. */
export async function readFinishedBatches(wh: Warehouse, sinceMs: number): Promise<FinishedBatch[]> {
  const rows = await wh.query<{ batch_id: string; at: string; buckets: [string, number][] }>(
    `SELECT d.batch_id AS batch_id, toUnixTimestamp64Milli(d.done_at) AS at,
            arrayMap(x -> (x.1, toUInt32(x.2)), b.begun) AS buckets
     FROM (SELECT batch_id, max(at) AS done_at FROM ${TABLES.ingestJournal}
           WHERE state = 'done' AND at >= fromUnixTimestamp64Milli({since:Int64}, 'UTC') GROUP BY batch_id) AS d
     INNER JOIN (SELECT batch_id, any(buckets) AS begun FROM ${TABLES.ingestJournal}
           WHERE state = 'begin' AND at >= fromUnixTimestamp64Milli({begin:Int64}, 'UTC') GROUP BY batch_id) AS b
     ON d.batch_id = b.batch_id
     ORDER BY at`,
    { params: { since: sinceMs, begin: sinceMs - JOURNAL_BEGIN_LOOKBACK_MS } },
  );
  return rows.map((r) => ({
    batchId: r.batch_id,
    at: Number(r.at),
    buckets: r.buckets.map(([protocolName, hour]) => ({ protocolName, hourStart: Number(hour) })),
  }));
}
