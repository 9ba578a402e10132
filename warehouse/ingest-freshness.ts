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

/** The same figures per protocol (one row each), for watermarks that answer per visible protocol. */
export async function readFreshnessByProtocol(wh: Warehouse): Promise<Map<string, { newestBlockTime: number; newestIngestedAt: number }>> {
  const rows = await wh.query<{ protocol_name: string; block: string; ingested: string }>(
    `SELECT protocol_name, toUnixTimestamp(max(newest_block)) AS block,
            toUnixTimestamp64Milli(max(newest_ingested)) AS ingested
     FROM ${TABLES.ingestFreshness} GROUP BY protocol_name`,
  );
  return new Map(rows.map((r) => [r.protocol_name, { newestBlockTime: Number(r.block), newestIngestedAt: Number(r.ingested) / 1000 }]));
}
