// The question model (in the spirit of Cube's measures and dimensions): what an aggregate
// answer may ask for, and where it can be read from. Each measure, dimension and source is
// declared once here; compile.ts turns a question over them into one statement.
//
// - A state is a partial aggregate the hourly views keep per hour; its base-table
//   expression builds the same state from raw rows for the ragged edges of a range, so
//   whole hours and edges merge exactly.
// - A measure is an expression over merged states (its merge), with an output type.
// - A dimension is a column answers group by; time is bucketed by one Granularity.
// - A source is an hourly view with the states, dimensions and filters it can answer;
//   edges always come from the base table.
// - A filter's condition and bound parameter read the same over the base table, the lookup
//   tables (same column names) and the views that keep its column: record listings
//   (transactions.ts, address-transactions.ts, failed-transactions.ts) take theirs from here too.
import { PERCENT } from '../../../core/limits/questions.ts';
import { TABLES } from '../../../warehouse/tables.ts';
import type { Bounds, RangeFilter, TimeRange, TransactionFilters } from '../types.ts';
import type { Granularity } from './granularity.ts';

/** The quantiles the views' t-digest states are built for. */
const Q = '0.5, 0.95, 0.99';

/** Each state: its expression over base-table rows (the view's column is named alike unless a source says otherwise). */
export const STATES = {
  tx_count: 'count()',
  success_count: 'countIf(success)',
  fee_sum: 'sum(fee)',
  fee_min: 'min(fee)',
  fee_max: 'max(fee)',
  cu_sum: 'sum(compute_units)',
  cu_min: 'min(compute_units)',
  cu_max: 'max(compute_units)',
  accounts_sum: 'sum(accounts_count)',
  first_seen: 'min(block_time)',
  last_seen: 'max(block_time)',
  max_slot: 'max(slot)',
  instruction_types: 'uniqExactState(toString(instruction_type))',
  programs: 'uniqExactState(toString(program_id))',
  cu_digest: `quantilesTDigestState(${Q})(compute_units)`,
  fee_digest: `quantilesTDigestState(${Q})(fee)`,
} as const;
export type State = keyof typeof STATES;

/** How a measure's value arrives: a number, a decimal string (a UInt64 past 2^53), or the quantiles 0.5, 0.95, 0.99. */
export type MeasureType = 'number' | 'text' | 'quantiles';

/** A measure the engine merges: one output column. */
export interface AggregateMeasure {
  /** Offered to clients as a metric (GraphQL's Metric enum, by the catalog), in these words. */
  metric?: string;
  /** The states it merges. */
  states: readonly State[];
  /** Its value over the merged rows, written over the state columns. */
  sql: string;
  type: MeasureType;
  /** Merged from t-digest states: approximate, and the dearest merge (the cost model charges it). */
  percentile?: boolean;
}

/**
 * A measure derived from two aggregate measures: their ratio (times `scale`) or difference.
 * Each output column costs the engine about 0.2 ms per answer, so it is read as its inputs
 * and computed after reading; an answer ordered by it gets it written as SQL (the same IEEE
 * arithmetic on the same integers, so the two agree to the bit).
 */
export interface DerivedMeasure {
  metric?: string;
  of: readonly [string, string];
  op: 'ratio' | 'difference';
  scale?: number;
}

export type Measure = AggregateMeasure | DerivedMeasure;

export const isDerived = (m: Measure): m is DerivedMeasure => 'of' in m;

/**
 * Every measure of today's answers. Averages and rates are over records (count). Sums stay
 * UInt64 (a float conversion per column costs the engine time; the value read is the same).
 */
export const MEASURES = {
  count: { states: ['tx_count'], sql: 'sum(tx_count)', type: 'number', metric: 'Records in the group' },
  successCount: { states: ['success_count'], sql: 'sum(success_count)', type: 'number' },
  failedCount: { of: ['count', 'successCount'], op: 'difference' },
  successRate: { of: ['successCount', 'count'], op: 'ratio', scale: PERCENT },
  sumFee: { states: ['fee_sum'], sql: 'sum(fee_sum)', type: 'number', metric: 'Total fee, lamports' },
  avgFee: { of: ['sumFee', 'count'], op: 'ratio', metric: 'Average fee per record, lamports' },
  minFee: { states: ['fee_min'], sql: 'min(fee_min)', type: 'number', metric: 'Lowest fee, lamports' },
  maxFee: { states: ['fee_max'], sql: 'max(fee_max)', type: 'number', metric: 'Highest fee, lamports' },
  sumComputeUnits: { states: ['cu_sum'], sql: 'sum(cu_sum)', type: 'number', metric: 'Total compute units' },
  avgComputeUnits: { of: ['sumComputeUnits', 'count'], op: 'ratio', metric: 'Average compute units per record' },
  minComputeUnits: { states: ['cu_min'], sql: 'min(cu_min)', type: 'number', metric: 'Fewest compute units of a record' },
  maxComputeUnits: { states: ['cu_max'], sql: 'max(cu_max)', type: 'number', metric: 'Most compute units of a record' },
  sumAccounts: { states: ['accounts_sum'], sql: 'sum(accounts_sum)', type: 'number', metric: 'Total accounts count' },
  avgAccounts: { of: ['sumAccounts', 'count'], op: 'ratio', metric: 'Average accounts count per record' },
  firstSeen: { states: ['first_seen'], sql: 'toUInt32(min(first_seen))', type: 'number' },
  lastSeen: { states: ['last_seen'], sql: 'toUInt32(max(last_seen))', type: 'number' },
  maxSlot: { states: ['max_slot'], sql: 'toString(max(max_slot))', type: 'text' },
  instructionTypes: { states: ['instruction_types'], sql: 'uniqExactMerge(instruction_types)', type: 'number' },
  programs: { states: ['programs'], sql: 'uniqExactMerge(programs)', type: 'number' },
  feeQuantiles: { states: ['fee_digest'], sql: `quantilesTDigestMerge(${Q})(fee_digest)`, type: 'quantiles', percentile: true },
  cuQuantiles: { states: ['cu_digest'], sql: `quantilesTDigestMerge(${Q})(cu_digest)`, type: 'quantiles', percentile: true },
  p50Fee: {
    states: ['fee_digest'],
    sql: `toFloat64(quantilesTDigestMerge(${Q})(fee_digest)[1])`,
    type: 'number',
    percentile: true,
    metric: 'Median fee (t-digest, approximate)',
  },
  p95Fee: {
    states: ['fee_digest'],
    sql: `toFloat64(quantilesTDigestMerge(${Q})(fee_digest)[2])`,
    type: 'number',
    percentile: true,
    metric: '95th percentile of fees (t-digest, approximate)',
  },
  p99Fee: {
    states: ['fee_digest'],
    sql: `toFloat64(quantilesTDigestMerge(${Q})(fee_digest)[3])`,
    type: 'number',
    percentile: true,
    metric: '99th percentile of fees (t-digest, approximate)',
  },
  p50ComputeUnits: {
    states: ['cu_digest'],
    sql: `toFloat64(quantilesTDigestMerge(${Q})(cu_digest)[1])`,
    type: 'number',
    percentile: true,
    metric: 'Median compute units (t-digest, approximate)',
  },
  p95ComputeUnits: {
    states: ['cu_digest'],
    sql: `toFloat64(quantilesTDigestMerge(${Q})(cu_digest)[2])`,
    type: 'number',
    percentile: true,
    metric: '95th percentile of compute units (t-digest, approximate)',
  },
  p99ComputeUnits: {
    states: ['cu_digest'],
    sql: `toFloat64(quantilesTDigestMerge(${Q})(cu_digest)[3])`,
    type: 'number',
    percentile: true,
    metric: '99th percentile of compute units (t-digest, approximate)',
  },
} as const satisfies Record<string, Measure>;
export type MeasureName = keyof typeof MEASURES;
/** A catalog of measures: the model's, or the model's with more (a test's, say). */
export type Measures = Readonly<Record<string, Measure>>;

/**
 * Dimensions: the column each is read as, in both a view and the base table, and its key
 * type. A dimension with `time` is computed from the hour start of its rows (every view keeps
 * hour starts; edges and the base table take toStartOfHour(block_time)), so days, ISO weeks
 * (Monday 00:00 UTC), months and days of week are unions of whole hours and views answer them.
 */
export const DIMENSIONS = {
  protocol: { column: 'protocol_name', type: 'String' },
  instructionType: { column: 'instruction_type', type: 'String' },
  program: { column: 'program_id', type: 'String' },
  errorMessage: { column: 'error_message', type: 'String' },
  /** The start of a time bucket of the question's granularity (from hour starts), Unix seconds. */
  time: { column: 'b', type: 'UInt32', time: 'question' },
  /** The start of the UTC day, Unix seconds. */
  date: { column: 'b_date', type: 'UInt32', time: 'day' },
  /** The start of the ISO week (Monday 00:00 UTC), Unix seconds. */
  week: { column: 'b_week', type: 'UInt32', time: 'week' },
  /** The start of the UTC month, Unix seconds. */
  month: { column: 'b_month', type: 'UInt32', time: 'month' },
  /** ISO day of week in UTC: 1 Monday ... 7 Sunday. */
  dayOfWeek: { column: 'b_dow', type: 'UInt8', time: 'dayOfWeek' },
} as const satisfies Record<string, { column: string; type: string; time?: Granularity | 'question' | 'dayOfWeek' }>;
export type Dimension = keyof typeof DIMENSIONS;

/** The dimensions computed from hour starts. */
export const TIME_DIMENSIONS = (Object.keys(DIMENSIONS) as Dimension[]).filter((d) => 'time' in DIMENSIONS[d]);
export const isTimeDimension = (d: Dimension): boolean => 'time' in DIMENSIONS[d];

/** Filters an aggregate source may apply beyond protocols and range, which every source applies. */
export type SourceFilter = 'instructionTypes' | 'errorPattern' | 'cells' | 'programs' | 'signatures' | 'status' | 'ranges' | 'logMessage';

export interface Source {
  table: string;
  /** The states it keeps, each with its view column. */
  states: Readonly<Partial<Record<State, string>>>;
  dimensions: readonly Dimension[];
  filters: readonly SourceFilter[];
  /** The records it aggregates: every one, or only failed ones (then edges read `NOT success`). */
  status: 'all' | 'failed';
  /** The base table itself: the whole range read from records (no view keeps what is asked). */
  base?: true;
}

const same = (...states: State[]): Partial<Record<State, string>> => Object.fromEntries(states.map((s) => [s, s]));
// cu_min and cu_max: added to both views by migration 050.
const SUMS: State[] = ['tx_count', 'success_count', 'fee_sum', 'fee_min', 'fee_max', 'cu_sum', 'cu_min', 'cu_max', 'accounts_sum', 'cu_digest', 'fee_digest'];

/** The hourly views, smallest first: a question is read from the first that can answer it. */
export const SOURCES: readonly Source[] = [
  {
    table: TABLES.protocolHourly,
    states: same(...SUMS, 'first_seen', 'last_seen', 'max_slot', 'instruction_types', 'programs'),
    dimensions: ['protocol', ...TIME_DIMENSIONS],
    filters: ['cells'],
    status: 'all',
  },
  {
    table: TABLES.instructionHourly,
    states: same(...SUMS),
    dimensions: ['protocol', 'instructionType', ...TIME_DIMENSIONS],
    filters: ['instructionTypes', 'cells'],
    status: 'all',
  },
  {
    table: TABLES.failureHourly,
    states: { tx_count: 'failures', fee_sum: 'fee_sum', cu_sum: 'cu_sum' },
    dimensions: ['protocol', 'instructionType', 'errorMessage', ...TIME_DIMENSIONS],
    filters: ['instructionTypes', 'errorPattern', 'cells'],
    status: 'failed',
  },
];

/** Where the ragged edges of every source are read, and records are listed. */
export const BASE_TABLE = TABLES.transactions;

/**
 * The base table as a source of last resort: what no view keeps (program ids, record-level
 * filters such as ranges, status, signatures or log messages) is aggregated from the records
 * of the range, which the one cost model prices by the rows it would read (and the plan's
 * budget may refuse). Its key (protocol_name, block_time) prunes to the asked protocols and range.
 */
export const BASE_SOURCE: Source = {
  table: BASE_TABLE,
  states: same(...(Object.keys(STATES) as State[])),
  dimensions: Object.keys(DIMENSIONS) as Dimension[],
  filters: ['instructionTypes', 'errorPattern', 'cells', 'programs', 'signatures', 'status', 'ranges', 'logMessage'],
  status: 'all',
  base: true,
};

// ---- filters ----------------------------------------------------------------------------------

/** One SQL statement with its bound parameters: what runs, and what the cost model
 *  (analytics-cost.ts) asks the engine to estimate, so both see the same text. */
export interface Statement {
  sql: string;
  params: Record<string, unknown>;
}

export interface Conditions {
  where: string[];
  params: Record<string, unknown>;
}

/** List and pattern filters: the condition, and the parameter it binds. */
export const FILTERS = {
  protocols: { sql: 'protocol_name IN {protocols:Array(String)}', param: 'protocols' },
  instructionTypes: { sql: 'instruction_type IN {instructionTypes:Array(String)}', param: 'instructionTypes' },
  programs: { sql: 'program_id IN {programIds:Array(String)}', param: 'programIds' },
  signatures: { sql: 'signature IN {sigs:Array(String)}', param: 'sigs' },
  // A case-insensitive substring: no regular expressions from clients.
  errorPattern: { sql: 'positionCaseInsensitiveUTF8(error_message, {pattern:String}) > 0', param: 'pattern' },
  // The base table keeps each record's log messages as one text: a case-insensitive substring of it.
  logMessage: { sql: 'positionCaseInsensitiveUTF8(log_messages, {logMessage:String}) > 0', param: 'logMessage' },
} as const;
export type FilterName = keyof typeof FILTERS;

/** Range filters over record columns: inclusive bounds, each side optional (base table only). */
export const RANGE_FILTERS = {
  // toUInt64: record listings select `toString(slot) AS slot` (TX_COLUMNS), and the engine
  // resolves a name in WHERE to a SELECT alias before a column, so the bound compares a
  // number either way (a bare `slot <= {…:UInt64}` failed there: String against UInt64).
  slot: { column: 'toUInt64(slot)', type: 'UInt64' },
  fee: { column: 'fee', type: 'UInt64' },
  computeUnits: { column: 'compute_units', type: 'UInt32' },
  accountsCount: { column: 'accounts_count', type: 'UInt16' },
} as const satisfies Record<RangeFilter, { column: string; type: string }>;
export type { Bounds, RangeFilter };

/**
 * Add the conditions of record-column ranges. Each bound is a bound parameter of the column's
 * own type, given as decimal text: the engine parses it as that type (UInt64 for slot and fee),
 * so a bound past 2^53 compares exactly, never rounded through a double.
 */
export function addRanges(c: Conditions, ranges: Partial<Record<RangeFilter, Bounds>> | undefined): void {
  for (const [name, b] of Object.entries(ranges ?? {}) as [RangeFilter, Bounds][]) {
    const { column, type } = RANGE_FILTERS[name];
    if (b.min !== undefined) {
      c.where.push(`${column} >= {r_${name}_min:${type}}`);
      c.params[`r_${name}_min`] = b.min;
    }
    if (b.max !== undefined) {
      c.where.push(`${column} <= {r_${name}_max:${type}}`);
      c.params[`r_${name}_max`] = b.max;
    }
  }
}

/** The status filter: which records a condition keeps ('all' keeps every one). */
export const STATUS_SQL = { succeeded: 'success', failed: 'NOT success' } as const;

/** Add a filter's condition and parameter, when it is given. */
export function addFilter(c: Conditions, name: FilterName, value: unknown): void {
  if (value === undefined) return;
  c.where.push(FILTERS[name].sql);
  c.params[FILTERS[name].param] = value;
}

/** The conditions every record listing shares: visible protocols, range of block times (inclusive), status, programIds. */
export function commonConditions(filters: Pick<TransactionFilters, 'range' | 'status' | 'programIds'>, visible: readonly string[]): Conditions {
  const c: Conditions = { where: [], params: {} };
  addFilter(c, 'protocols', visible);
  const bt = filters.range;
  if (bt?.gte !== undefined) {
    c.where.push("block_time >= toDateTime({gte:UInt32}, 'UTC')");
    c.params.gte = bt.gte;
  }
  if (bt?.lte !== undefined) {
    c.where.push("block_time <= toDateTime({lte:UInt32}, 'UTC')");
    c.params.lte = bt.lte;
  }
  if (filters.status === 'succeeded' || filters.status === 'failed') c.where.push(STATUS_SQL[filters.status]);
  addFilter(c, 'programs', filters.programIds);
  return c;
}

// ---- ranges: whole hours from a view, ragged edges from the base table -----------------------
// Splitting a time range into whole hours (answered by the hourly views) and ragged edges
// (answered from the base table), so any range is exact without scanning whole history; and
// the bound conditions of each part.

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
const END_OF_TIME = 2 ** 32;

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
export function intervalCondition(column: string, iv: Interval, prefix: string): { sql: string; params: Record<string, number> } {
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
