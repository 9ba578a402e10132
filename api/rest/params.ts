// Query-parameter rules the JSON Schema cannot state: real calendar dates, date order,
// and the conversion of a day range to the blockTime range the analytics layer takes.
import { invalidParams } from '../../core/errors.ts';
import { MAX_BLOCK_TIME } from '../../core/limits.ts';
import { dayStart } from '../../core/vocabulary/primitives.ts';
import type { TimeRange } from '../analytics/types.ts';

export interface DayRange {
  dateFrom: string | undefined;
  dateTo: string | undefined;
  /** [date_from 00:00:00, date_to 23:59:59] in Unix seconds; open sides stay undefined. */
  range: TimeRange;
}

export function dayRange(q: { date_from?: string; date_to?: string }, required = false): DayRange {
  if (required) {
    if (q.date_from === undefined) throw invalidParams('date_from is required (YYYY-MM-DD)', 'date_from');
    if (q.date_to === undefined) throw invalidParams('date_to is required (YYYY-MM-DD)', 'date_to');
  }
  const gte = q.date_from === undefined ? undefined : dayStart(q.date_from, 'date_from');
  // The last storable day ends early, at 06:28:15 (MAX_BLOCK_TIME).
  const lte = q.date_to === undefined ? undefined : Math.min(dayStart(q.date_to, 'date_to') + 86_399, MAX_BLOCK_TIME);
  if (gte !== undefined && lte !== undefined && gte > lte) {
    throw invalidParams(`date_from (${q.date_from}) is after date_to (${q.date_to})`, 'date_from');
  }
  const range: TimeRange = {};
  if (gte !== undefined) range.gte = gte;
  if (lte !== undefined) range.lte = lte;
  return { dateFrom: q.date_from, dateTo: q.date_to, range };
}

/** meta fields describing a day range. */
export function rangeMeta(r: DayRange) {
  return { dateFrom: r.dateFrom ?? null, dateTo: r.dateTo ?? null, blockTime: { gte: r.range.gte ?? null, lte: r.range.lte ?? null } };
}
