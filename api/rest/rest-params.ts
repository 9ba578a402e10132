// REST's day range: the query's date_from/date_to as the blockTime range the analytics
// layer takes, through the one day-range conversion (core/request-check.ts daySpan).
import { invalidParams } from '../../core/errors.ts';
import { daySpan } from '../../core/request-check.ts';
import type { TimeRange } from '../analytics/types.ts';

export interface DayRange<R extends TimeRange = TimeRange> {
  dateFrom: string | undefined;
  dateTo: string | undefined;
  /** [date_from 00:00:00, date_to 23:59:59] in Unix seconds; open sides stay undefined. */
  range: R;
}

const REST_DAYS = { from: 'date_from', to: 'date_to' };

export function dayRange(q: { date_from?: string; date_to?: string }): DayRange {
  return { dateFrom: q.date_from, dateTo: q.date_to, range: daySpan(q.date_from, q.date_to, REST_DAYS) };
}

/** A day range both of whose days are required (the route's schema says so; this says which is missing otherwise). */
export function closedDayRange(q: { date_from?: unknown; date_to?: unknown }): DayRange<Required<TimeRange>> {
  if (typeof q.date_from !== 'string') throw invalidParams('date_from is required (YYYY-MM-DD)', 'date_from');
  if (typeof q.date_to !== 'string') throw invalidParams('date_to is required (YYYY-MM-DD)', 'date_to');
  return { dateFrom: q.date_from, dateTo: q.date_to, range: daySpan(q.date_from, q.date_to, REST_DAYS) as Required<TimeRange> };
}

/** meta fields describing a day range. */
export function rangeMeta(r: DayRange) {
  return { dateFrom: r.dateFrom ?? null, dateTo: r.dateTo ?? null, blockTime: { gte: r.range.gte ?? null, lte: r.range.lte ?? null } };
}
