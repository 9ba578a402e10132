// Query-parameter rules the JSON Schema cannot state: real calendar dates, date order,
// and the conversion of a day range to the blockTime range the analytics layer takes.
import { invalidParams } from '../../core/errors.ts';
import { MAX_BLOCK_TIME } from '../../core/limits.ts';
import { dayStart } from '../../core/vocabulary/primitives.ts';
import type { TimeRange } from '../analytics/types.ts';

export interface DayRange<R extends TimeRange = TimeRange> {
  dateFrom: string | undefined;
  dateTo: string | undefined;
  /** [date_from 00:00:00, date_to 23:59:59] in Unix seconds; open sides stay undefined. */
  range: R;
}

const dayEnd = (day: string, field: string): number =>
  // The last storable day ends early, at 06:28:15 (MAX_BLOCK_TIME).
  Math.min(dayStart(day, field) + 86_399, MAX_BLOCK_TIME);

function ordered(q: { date_from?: string; date_to?: string }, gte: number | undefined, lte: number | undefined): void {
  if (gte !== undefined && lte !== undefined && gte > lte) {
    throw invalidParams(`date_from (${q.date_from}) is after date_to (${q.date_to})`, 'date_from');
  }
}

export function dayRange(q: { date_from?: string; date_to?: string }): DayRange {
  const gte = q.date_from === undefined ? undefined : dayStart(q.date_from, 'date_from');
  const lte = q.date_to === undefined ? undefined : dayEnd(q.date_to, 'date_to');
  ordered(q, gte, lte);
  const range: TimeRange = {};
  if (gte !== undefined) range.gte = gte;
  if (lte !== undefined) range.lte = lte;
  return { dateFrom: q.date_from, dateTo: q.date_to, range };
}

/** A day range both of whose days are required (the route's schema says so; this says which is missing otherwise). */
export function closedDayRange(q: { date_from?: string; date_to?: string }): DayRange<Required<TimeRange>> {
  if (q.date_from === undefined) throw invalidParams('date_from is required (YYYY-MM-DD)', 'date_from');
  if (q.date_to === undefined) throw invalidParams('date_to is required (YYYY-MM-DD)', 'date_to');
  const gte = dayStart(q.date_from, 'date_from');
  const lte = dayEnd(q.date_to, 'date_to');
  ordered(q, gte, lte);
  return { dateFrom: q.date_from, dateTo: q.date_to, range: { gte, lte } };
}

/** meta fields describing a day range. */
export function rangeMeta(r: DayRange) {
  return { dateFrom: r.dateFrom ?? null, dateTo: r.dateTo ?? null, blockTime: { gte: r.range.gte ?? null, lte: r.range.lte ?? null } };
}
