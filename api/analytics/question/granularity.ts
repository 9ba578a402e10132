// The one time-bucket type: every answer bucketed in time (JSON-RPC interval, REST
// granularity, GraphQL bucketBy and groupBy HOUR, live activity buckets) names its size as
// a Granularity, and the engine and this module agree on where each bucket starts.
import { AppError, Errors, hint, param } from '../../../core/errors.ts';
import { MAX_ACTIVITY_BUCKETS } from '../../../core/limits/questions.ts';
import { SHORTEST_MONTH_DAYS } from '../../../core/vocabulary/calendar.ts';
import type { TimeRange } from '../types.ts';

/** Every bucket size, smallest first (the catalog offers them on JSON-RPC and REST). */
export const GRANULARITIES = ['hour', 'day', 'week', 'month'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** The granularities of activity answers: whole hours or UTC days. */
export type ActivityGranularity = Extract<Granularity, 'hour' | 'day'>;

/** The time key of a bucket, as Unix seconds, from a column holding hour starts. */
export function bucketSql(granularity: Granularity, hourStart: string): string {
  switch (granularity) {
    case 'hour':
      return `toUInt32(${hourStart})`;
    case 'day':
      return `toUInt32(toStartOfDay(${hourStart}))`;
    case 'week':
      // ISO weeks, starting on Monday 00:00 UTC.
      return `toUInt32(toDateTime(toMonday(${hourStart}), 'UTC'))`;
    case 'month':
      return `toUInt32(toDateTime(toStartOfMonth(${hourStart}), 'UTC'))`;
  }
}

const HOUR = 3_600;
const DAY = 86_400;
/** 1970-01-05, the first Monday after the epoch: ISO weeks are counted from it. */
const FIRST_MONDAY = 4 * DAY;

/** The start of the bucket holding `t` (Unix seconds, UTC), as the engine computes it. */
export function bucketStart(t: number, granularity: Granularity): number {
  switch (granularity) {
    case 'hour':
      return Math.floor(t / HOUR) * HOUR;
    case 'day':
      return Math.floor(t / DAY) * DAY;
    case 'week':
      // The engine's dates start at 1970-01-01: the days before the first Monday share it.
      return Math.max(0, Math.floor((t - FIRST_MONDAY) / (7 * DAY)) * 7 * DAY + FIRST_MONDAY);
    case 'month': {
      const d = new Date(t * 1000);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000;
    }
  }
}

function nextBucket(start: number, granularity: Granularity): number {
  switch (granularity) {
    case 'hour':
      return start + HOUR;
    case 'day':
      return start + DAY;
    case 'week':
      return start < FIRST_MONDAY ? FIRST_MONDAY : start + 7 * DAY;
    case 'month': {
      const d = new Date(start * 1000);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 1000;
    }
  }
}

/** How many buckets cover [gte, lte], without listing them (months: close enough, rounded up). */
export function bucketCount(range: Required<TimeRange>, granularity: Granularity): number {
  if (range.lte < range.gte) return 0;
  const width = { hour: HOUR, day: DAY, week: 7 * DAY, month: SHORTEST_MONTH_DAYS * DAY }[granularity];
  return Math.floor((range.lte - bucketStart(range.gte, granularity)) / width) + 1;
}

/** Starts of every bucket that overlaps [gte, lte], in order. */
export function bucketStarts(range: Required<TimeRange>, granularity: Granularity): number[] {
  const out: number[] = [];
  for (let t = bucketStart(range.gte, granularity); t <= range.lte; t = nextBucket(t, granularity)) out.push(t);
  return out;
}

/** Refuse a series of more than MAX_ACTIVITY_BUCKETS buckets before anything runs. */
export function checkBuckets(range: Required<TimeRange>, granularity: Granularity): void {
  const buckets = bucketCount(range, granularity);
  if (buckets > MAX_ACTIVITY_BUCKETS) {
    throw new AppError(
      Errors.invalidParams,
      `${param('range')}: the range spans ${buckets} ${granularity} buckets; at most ${MAX_ACTIVITY_BUCKETS} are allowed (use a shorter range${granularity === 'hour' ? ` or ${hint('coarserBucket')}` : ''})`,
      { field: 'range' },
    );
  }
}
