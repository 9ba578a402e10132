// Named activity buckets (protocol, hour or day), for live subscriptions: a committed write
// names the (protocol, hour) buckets it touched, and one read per write fetches their
// figures for every subscriber at once (the cells preset, presets.ts). Buckets are whole
// hours or days, so the hourly view alone answers them (no ragged edges from the base
// table); the figures are those of getProtocolActivity's buckets.
import { num, type AnswerRow } from './question/compile.ts';
import type { ActivityGranularity } from './question/granularity.ts';

/** The live subscriptions' name for the activity granularity (api/graphql/subscriptions). */
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

const SPAN: Record<ActivityGranularity, number> = { hour: 3_600, day: 86_400 };

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
