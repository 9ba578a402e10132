// Splitting a time range into whole hours (answered by the hourly views) and ragged edges
// (answered from the base table), so any range is exact without scanning whole history.

/** Inclusive bounds in Unix seconds; either side may be open. */
export interface TimeRange {
  gte?: number;
  lte?: number;
}

/** A half-open interval [from, to) in Unix seconds; either side may be open. */
export interface Interval {
  from?: number;
  to?: number;
}

export interface RangePlan {
  /** Whole hours, read from a view by hour_start; undefined when no whole hour is covered. */
  view: Interval | undefined;
  /** Partial hours at either end, read from the base table by block_time. */
  edges: Interval[];
}

const HOUR = 3600;

/**
 * Time columns are DateTime: UInt32 seconds, so nothing is stored at or after 2^32. Interval
 * arithmetic can reach past it (lte = 4294967295 becomes the exclusive bound 2^32; the hour
 * after 4294965600 ends at 4294969200), and such a bound does not fit a UInt32 parameter:
 * it wrapped around and dropped the records of the last storable hour. An upper bound at
 * or past 2^32 bounds nothing and is left out; a lower one there matches nothing.
 */
const END_OF_TIME = 4_294_967_296;

export function planRange(range: TimeRange): RangePlan {
  const from = range.gte;
  const to = range.lte === undefined ? undefined : range.lte + 1; // inclusive -> exclusive
  const firstWhole = from === undefined ? undefined : Math.ceil(from / HOUR) * HOUR;
  const lastWholeEnd = to === undefined ? undefined : Math.floor(to / HOUR) * HOUR;
  if (firstWhole !== undefined && lastWholeEnd !== undefined && firstWhole >= lastWholeEnd) {
    // Less than one whole hour inside the range: the base table answers all of it.
    return { view: undefined, edges: from! < to! ? [{ from, to }] : [] };
  }
  const edges: Interval[] = [];
  if (from !== undefined && firstWhole! > from) edges.push({ from, to: firstWhole });
  if (to !== undefined && lastWholeEnd! < to) edges.push({ from: lastWholeEnd, to });
  return { view: { from: firstWhole, to: lastWholeEnd }, edges };
}

/**
 * SQL condition for an interval on a column, with its parameters. Parameter names are
 * prefixed so several intervals can share one statement.
 */
export function intervalCondition(
  column: string,
  iv: Interval,
  prefix: string,
): { sql: string; params: Record<string, number> } {
  const parts: string[] = [];
  const params: Record<string, number> = {};
  // A negative or fractional bound would be mangled by the engine: fail loudly instead.
  for (const v of [iv.from, iv.to]) {
    if (v !== undefined && !(Number.isSafeInteger(v) && v >= 0)) throw new RangeError(`interval bound ${v} is not a Unix time`);
  }
  if (iv.from !== undefined && iv.from >= END_OF_TIME) return { sql: '0', params };
  if (iv.from !== undefined) {
    parts.push(`${column} >= toDateTime({${prefix}_from:UInt32}, 'UTC')`);
    params[`${prefix}_from`] = iv.from;
  }
  if (iv.to !== undefined && iv.to < END_OF_TIME) {
    parts.push(`${column} < toDateTime({${prefix}_to:UInt32}, 'UTC')`);
    params[`${prefix}_to`] = iv.to;
  }
  return { sql: parts.length === 0 ? '1' : parts.join(' AND '), params };
}

export function edgesCondition(column: string, edges: Interval[]): { sql: string; params: Record<string, number> } {
  const conds = edges.map((e, i) => intervalCondition(column, e, `edge${i}`));
  return {
    sql: conds.map((c) => `(${c.sql})`).join(' OR '),
    params: Object.assign({}, ...conds.map((c) => c.params)),
  };
}
