// Named activity buckets (protocol, hour or day), for live subscriptions: a committed write
// names the (protocol, hour) buckets it touched, and one read per write fetches their
// figures for every subscriber at once (the cells preset, presets.ts). Buckets are whole
// hours or days, so the hourly view alone answers them (no ragged edges from the base
// table); the figures are those of getProtocolActivity's buckets.
import { ACTIVITY_KEYS_PER_READ } from '../../../core/limits/questions.ts';
import type { Warehouse } from '../../../warehouse/warehouse.ts';
import { PRESETS } from './presets.ts';
import { compile, num, readRows, type AnswerRow } from '../question/compile.ts';
import type { ActivityGranularity } from '../question/granularity.ts';

/** The live subscriptions' name for the activity granularity (api/doors/graphql/subscriptions). */
export type BucketSize = ActivityGranularity;

export interface BucketKey {
  protocolName: string;
  /** Unix seconds of the bucket's start (an hour's or a UTC day's). */
  start: number;
}

export interface BucketFigures extends BucketKey {
  size: ActivityGranularity;
  count: number;
  successCount: number;
  failedCount: number;
  totalFees: number;
  totalComputeUnits: number;
  /** Newest slot in the bucket (0 when empty): live events' ids are slot-based (event-log.ts). */
  maxSlot: number;
}

const HOUR_SECONDS = 3_600;
const DAY_SECONDS = 86_400;
const SPAN: Record<ActivityGranularity, number> = { hour: HOUR_SECONDS, day: DAY_SECONDS };

/** The closed range covering every named bucket (the range term prunes by the view's key; the cells test is exact). */
export function cellsRange(keys: readonly BucketKey[], granularity: ActivityGranularity): { gte: number; lte: number } {
  let from = Infinity;
  let to = -Infinity;
  for (const k of keys) {
    from = Math.min(from, k.start);
    to = Math.max(to, k.start);
  }
  return { gte: from, lte: to + SPAN[granularity] - 1 };
}

/** Figures of each named bucket (zeros for a bucket with no rows), in the order named. */
export function toBucketFigures(keys: readonly BucketKey[], granularity: ActivityGranularity, rows: readonly AnswerRow[]): BucketFigures[] {
  const byKey = new Map(rows.map((r) => [`${r.protocol}#${r.time}`, r]));
  return keys.map((k) => {
    const r = byKey.get(`${k.protocolName}#${k.start}`);
    return {
      protocolName: k.protocolName,
      start: k.start,
      size: granularity,
      count: num(r, 'count'),
      successCount: num(r, 'successCount'),
      failedCount: num(r, 'failedCount'),
      totalFees: num(r, 'sumFee'),
      totalComputeUnits: num(r, 'sumComputeUnits'),
      maxSlot: Number(r?.values.maxSlot ?? 0) || 0,
    };
  });
}

/** Current figures of the named buckets of the `shown` protocols (others are left out), read
 *  in chunks of ACTIVITY_KEYS_PER_READ keys, uncached (the facade's activityBuckets). */
export async function readBucketFigures(
  wh: Warehouse,
  shown: ReadonlySet<string>,
  keys: readonly BucketKey[],
  size: ActivityGranularity,
): Promise<BucketFigures[]> {
  const wanted = keys.filter((k) => shown.has(k.protocolName));
  const out: BucketFigures[] = [];
  for (let i = 0; i < wanted.length; i += ACTIVITY_KEYS_PER_READ) {
    const chunk = wanted.slice(i, i + ACTIVITY_KEYS_PER_READ);
    const q = PRESETS.cells(
      {
        protocols: [...new Set(chunk.map((k) => k.protocolName))],
        range: cellsRange(chunk, size),
        cells: chunk.map((k) => ({ protocol: k.protocolName, start: k.start })),
      },
      size,
    );
    const statement = compile(q);
    const rows = statement === undefined ? [] : readRows(q, await wh.query<Record<string, unknown>>(statement.sql, { params: statement.params }));
    out.push(...toBucketFigures(chunk, size, rows));
  }
  return out;
}
