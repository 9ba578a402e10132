// Newest block_time and ingested_at over all stored records, from the tiny table that
// migration 010 keeps up to date (never a scan of transactions). For /metrics and /health.
import type { Warehouse } from './warehouse.ts';
import { TABLES } from './tables.ts';

export interface Freshness {
  /** Unix seconds of the newest record's block_time; null when nothing is stored. */
  newestBlockTime: number | null;
  /** Unix seconds (fractional) of the newest arrival; null when nothing is stored. */
  newestIngestedAt: number | null;
}

export async function readFreshness(wh: Warehouse): Promise<Freshness> {
  const [row] = await wh.query<{ n: string; block: string; ingested: string }>(
    `SELECT count() AS n, toUnixTimestamp(max(newest_block)) AS block,
            toUnixTimestamp64Milli(max(newest_ingested)) AS ingested
     FROM ${TABLES.ingestFreshness}`,
  );
  if (!row || Number(row.n) === 0) return { newestBlockTime: null, newestIngestedAt: null };
  return { newestBlockTime: Number(row.block), newestIngestedAt: Number(row.ingested) / 1000 };
}
