// Named activity buckets (protocol, hour or day) read from the protocol_hourly view, for
// live subscriptions: a committed write names the (protocol, hour) buckets it touched, and
// one read per write fetches their figures for every subscriber at once. Buckets are whole
// hours or days, so the view alone answers them (no ragged edges from the base table); the
// figures are those of getProtocolActivity's buckets.
import type { Warehouse } from '../../warehouse/warehouse.ts';
import { TABLES } from '../../warehouse/tables.ts';

export type BucketSize = 'hour' | 'day';

export interface BucketKey {
  protocolName: string;
  /** Unix seconds of the bucket's start (an hour's or a UTC day's). */
  start: number;
}

export interface BucketFigures extends BucketKey {
  size: BucketSize;
  count: number;
  successCount: number;
  failedCount: number;
  totalFees: number;
  totalComputeUnits: number;
}

interface Row {
  protocol_name: string;
  b: number;
  tx_count: string;
  success_count: string;
  fee_sum: string;
  cu_sum: string;
}

const keyOf = (protocolName: string, start: number): string => `${protocolName}#${start}`;

/** Keys per statement: bound parameters travel in the URL to a server (1 MiB limit), and a
 *  backfill can touch tens of thousands of buckets between two reads. */
const KEYS_PER_READ = 5000;

/** Figures of each named bucket of a visible protocol (zeros for a bucket with no rows), in the order named. */
export async function readActivityBuckets(wh: Warehouse, keys: readonly BucketKey[], size: BucketSize, visible: readonly string[]): Promise<BucketFigures[]> {
  const shown = new Set(visible);
  const wanted = keys.filter((k) => shown.has(k.protocolName));
  const out: BucketFigures[] = [];
  for (let i = 0; i < wanted.length; i += KEYS_PER_READ) out.push(...(await readChunk(wh, wanted.slice(i, i + KEYS_PER_READ), size)));
  return out;
}

async function readChunk(wh: Warehouse, wanted: readonly BucketKey[], size: BucketSize): Promise<BucketFigures[]> {
  let from = Infinity;
  let to = -Infinity;
  for (const k of wanted) {
    from = Math.min(from, k.start);
    to = Math.max(to, k.start);
  }
  const span = size === 'day' ? 86_400 : 3_600;
  const bucket = size === 'day' ? 'toUInt32(toStartOfDay(hour_start))' : 'toUInt32(hour_start)';
  const rows = await wh.query<Row>(
    `SELECT protocol_name, ${bucket} AS b, sum(tx_count) AS tx_count, sum(success_count) AS success_count,
            sum(fee_sum) AS fee_sum, sum(cu_sum) AS cu_sum
     FROM ${TABLES.protocolHourly}
     WHERE protocol_name IN {protocols:Array(String)}
       AND hour_start BETWEEN toDateTime({from:UInt32}, 'UTC') AND toDateTime({to:UInt32}, 'UTC')
       AND concat(protocol_name, '#', toString(b)) IN {keys:Array(String)}
     GROUP BY protocol_name, b`,
    {
      params: {
        // The protocol and range terms prune by the view's key; the key test is exact.
        protocols: [...new Set(wanted.map((k) => k.protocolName))],
        from,
        to: to + span - 1,
        keys: wanted.map((k) => keyOf(k.protocolName, k.start)),
      },
    },
  );
  const byKey = new Map(rows.map((r) => [keyOf(r.protocol_name, Number(r.b)), r]));
  return wanted.map((k) => {
    const r = byKey.get(keyOf(k.protocolName, k.start));
    const count = Number(r?.tx_count ?? 0);
    const successCount = Number(r?.success_count ?? 0);
    return {
      protocolName: k.protocolName,
      start: k.start,
      size,
      count,
      successCount,
      failedCount: count - successCount,
      totalFees: Number(r?.fee_sum ?? 0),
      totalComputeUnits: Number(r?.cu_sum ?? 0),
    };
  });
}
