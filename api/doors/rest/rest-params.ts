// REST's day range as its answers' meta shows it: the query's date_from/date_to beside the
// blockTime range the one day-range conversion (core/request-check.ts daySpan) made of them.
import type { TimeRange } from '../../analytics/types.ts';

export interface DayRange<R extends TimeRange = TimeRange> {
  dateFrom: string | undefined;
  dateTo: string | undefined;
  /** [date_from 00:00:00, date_to 23:59:59] in Unix seconds; open sides stay undefined. */
  range: R;
}

/** meta fields describing a day range. */
export function rangeMeta(r: DayRange) {
  return { dateFrom: r.dateFrom ?? null, dateTo: r.dateTo ?? null, blockTime: { gte: r.range.gte ?? null, lte: r.range.lte ?? null } };
}
