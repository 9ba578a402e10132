// Aggregates grouped by protocol, time bucket and instruction type with the metrics a caller
// picks (GraphQL transactions(groupBy, metrics) and timeSeries), and failures grouped by error
// message. Whole hours come from the hourly views, the ragged edges of a range from the base
// table, merged in one statement, as every other aggregate answer does (protocol-aggregates.ts).
// Pages of groups are keyset-paged in SQL on (sort value, group keys), with cursors bound to
// the question by the token codec.
import type { Warehouse } from '../../warehouse/warehouse.ts';
import type { Statement } from './filter-conditions.ts';
import { decodeToken, encodeToken, listingFingerprint } from './page-token.ts';
import { edgesCondition, intervalCondition, planRange, type TimeRange } from './time-range.ts';
import { TABLES } from '../../warehouse/tables.ts';

export type GroupKey = 'protocol' | 'hour' | 'instructionType';
export type Metric = 'count' | 'avgFee' | 'minFee' | 'maxFee' | 'p50Fee' | 'p95Fee' | 'p99Fee' | 'sumFee' | 'p95ComputeUnits';
export type TimeBucket = 'hour' | 'day' | 'week' | 'month';
export type SortDirection = 'asc' | 'desc';

/** Metrics read from t-digest states: approximate, and the dearest to merge. */
export const PERCENTILE_METRICS: ReadonlySet<Metric> = new Set(['p50Fee', 'p95Fee', 'p99Fee', 'p95ComputeUnits']);
/** What the failure view keeps: counts and fee sums, no extremes or percentiles. */
export const FAILURE_METRICS: ReadonlySet<Metric> = new Set(['count', 'sumFee', 'avgFee']);

export interface GroupFilters {
  /** Protocols to read (already narrowed to the visible ones by the facade). */
  protocols: readonly string[];
  range: TimeRange;
  instructionTypes?: readonly string[];
}

export interface GroupRequest {
  filters: GroupFilters;
  keys: readonly GroupKey[];
  metrics: readonly Metric[];
  /** Size of the time key (the `hour` key of groups, the buckets of a series); hour by default. */
  bucket?: TimeBucket;
}

export interface GroupPageRequest extends GroupRequest {
  sort: { metric: Metric; direction: SortDirection };
  limit: number;
  cursor?: string;
}

export interface FailureRequest {
  filters: GroupFilters & { errorPattern?: string };
  /** Keys besides the error message, which every failure group has. */
  keys: readonly GroupKey[];
  metrics: readonly Metric[];
  limit: number;
  cursor?: string;
}

/** One group: its keys (only those grouped by) and the requested metrics. */
export interface Group {
  protocol?: string;
  instructionType?: string;
  /** Start of the time bucket, Unix seconds. */
  time?: number;
  errorMessage?: string;
  values: Partial<Record<Metric, number>>;
}

export interface GroupPage {
  groups: { group: Group; cursor: string }[];
  more: boolean;
}

const Q = '0.5, 0.95, 0.99';

const KEY_COLUMN: Record<GroupKey | 'errorMessage', string> = {
  protocol: 'protocol_name',
  instructionType: 'instruction_type',
  hour: 'b',
  errorMessage: 'error_message',
};

/** Merge expressions of each metric over the union of view rows and edge rows. */
const METRIC_SQL: Record<Metric, string> = {
  count: 'toFloat64(sum(tx_count))',
  sumFee: 'toFloat64(sum(fee_sum))',
  avgFee: 'sum(fee_sum) / sum(tx_count)',
  minFee: 'toFloat64(min(fee_min))',
  maxFee: 'toFloat64(max(fee_max))',
  p50Fee: `toFloat64(quantilesTDigestMerge(${Q})(fee_digest)[1])`,
  p95Fee: `toFloat64(quantilesTDigestMerge(${Q})(fee_digest)[2])`,
  p99Fee: `toFloat64(quantilesTDigestMerge(${Q})(fee_digest)[3])`,
  p95ComputeUnits: `toFloat64(quantilesTDigestMerge(${Q})(cu_digest)[2])`,
};

/** Per metric: the view columns it reads, and the same columns computed from base rows. */
const METRIC_COLUMNS: Record<Metric, [string, string][]> = {
  count: [],
  sumFee: [['fee_sum', 'sum(fee) AS fee_sum']],
  avgFee: [['fee_sum', 'sum(fee) AS fee_sum']],
  minFee: [['fee_min', 'min(fee) AS fee_min']],
  maxFee: [['fee_max', 'max(fee) AS fee_max']],
  p50Fee: [['fee_digest', `quantilesTDigestState(${Q})(fee) AS fee_digest`]],
  p95Fee: [['fee_digest', `quantilesTDigestState(${Q})(fee) AS fee_digest`]],
  p99Fee: [['fee_digest', `quantilesTDigestState(${Q})(fee) AS fee_digest`]],
  p95ComputeUnits: [['cu_digest', `quantilesTDigestState(${Q})(compute_units) AS cu_digest`]],
};

/** The time key of a bucket size, from the hour start `t`, as Unix seconds. */
const BUCKET_SQL: Record<TimeBucket, string> = {
  hour: 'toUInt32(t)',
  day: 'toUInt32(toStartOfDay(t))',
  // ISO weeks, starting on Monday 00:00 UTC.
  week: "toUInt32(toDateTime(toMonday(t), 'UTC'))",
  month: "toUInt32(toDateTime(toStartOfMonth(t), 'UTC'))",
};

interface SourceSpec {
  view: string;
  /** Columns every row of both branches carries besides the metric columns. */
  keyColumns: string[];
  /** The count column: tx_count in the activity views, failures in the failure view. */
  countView: string;
  extraWhere: string[];
  rawWhere: string[];
}

/**
 * The grouped aggregate as a subquery with columns: the grouped keys (protocol_name,
 * instruction_type, b, error_message) and m_<metric> for each metric. Undefined when nothing
 * can match.
 */
function groupedSelect(
  source: SourceSpec,
  filters: GroupFilters,
  keys: readonly (GroupKey | 'errorMessage')[],
  metrics: readonly Metric[],
  bucket: TimeBucket,
  params: Record<string, unknown>,
): string | undefined {
  if (filters.protocols.length === 0) return undefined;
  const plan = planRange(filters.range);
  const cols = new Map<string, string>();
  for (const m of metrics) for (const [view, raw] of METRIC_COLUMNS[m]) cols.set(view, raw);
  const viewCols = [...source.keyColumns, 'hour_start AS t', `${source.countView} AS tx_count`, ...cols.keys()];
  const rawCols = [...source.keyColumns, 'toStartOfHour(block_time) AS t', 'count() AS tx_count', ...cols.values()];
  const where = ['protocol_name IN {protocols:Array(String)}', ...source.extraWhere];
  params.protocols = filters.protocols;
  if (filters.instructionTypes !== undefined) {
    where.push('instruction_type IN {itypes:Array(String)}');
    params.itypes = filters.instructionTypes;
  }
  const branches: string[] = [];
  if (plan.view) {
    const c = intervalCondition('hour_start', plan.view, 'view');
    Object.assign(params, c.params);
    branches.push(`SELECT ${viewCols.join(', ')} FROM ${source.view} WHERE ${[...where, c.sql].join(' AND ')}`);
  }
  if (plan.edges.length > 0) {
    const c = edgesCondition('block_time', plan.edges);
    Object.assign(params, c.params);
    branches.push(`SELECT ${rawCols.join(', ')} FROM ${TABLES.transactions} WHERE ${[...where, ...source.rawWhere, `(${c.sql})`].join(' AND ')}
      GROUP BY ${[...source.keyColumns, 't'].join(', ')}`);
  }
  if (branches.length === 0) return undefined;
  const keySelect = keys.map((k) => (k === 'hour' ? `${BUCKET_SQL[bucket]} AS b` : KEY_COLUMN[k]));
  const metricSelect = metrics.map((m) => `${METRIC_SQL[m]} AS m_${m}`);
  const groupBy = keys.map((k) => KEY_COLUMN[k]);
  return `SELECT ${[...keySelect, ...metricSelect].join(', ')}
    FROM (${branches.join('\nUNION ALL\n')})
    ${groupBy.length > 0 ? `GROUP BY ${groupBy.join(', ')}` : ''}
    HAVING sum(tx_count) > 0`;
}

const ACTIVITY = (filters: GroupFilters, keys: readonly GroupKey[]): SourceSpec => {
  // Instruction types are only in instruction_hourly; protocol_hourly is smaller otherwise.
  const byType = keys.includes('instructionType') || filters.instructionTypes !== undefined;
  return {
    view: byType ? 'instruction_hourly' : 'protocol_hourly',
    keyColumns: byType ? ['protocol_name', 'instruction_type'] : ['protocol_name'],
    countView: 'tx_count',
    extraWhere: [],
    rawWhere: [],
  };
};

const FAILURES = (pattern: string | undefined, params: Record<string, unknown>): SourceSpec => {
  const extraWhere: string[] = [];
  if (pattern !== undefined) {
    // A case-insensitive substring: no regular expressions from clients.
    extraWhere.push('positionCaseInsensitiveUTF8(error_message, {pattern:String}) > 0');
    params.pattern = pattern;
  }
  return {
    view: 'failure_hourly',
    keyColumns: ['protocol_name', 'instruction_type', 'error_message'],
    countView: 'failures',
    extraWhere,
    rawWhere: ['NOT success'],
  };
};

// ---- keyset pages of groups ---------------------------------------------------------------

interface Position {
  value: number;
  keys: (string | number)[];
}

const fingerprintOf = (what: unknown): string => listingFingerprint(what);

function pagedStatement(inner: string, keys: readonly (GroupKey | 'errorMessage')[], sortColumn: string, direction: SortDirection,
  position: Position | undefined, limit: number, params: Record<string, unknown>): Statement {
  const dir = direction === 'asc' ? 'ASC' : 'DESC';
  const keyCols = keys.map((k) => KEY_COLUMN[k]);
  const order = [sortColumn, ...keyCols].map((c) => `${c} ${dir}`).join(', ');
  let where = '';
  if (position !== undefined) {
    const types = keys.map((k) => (k === 'hour' ? 'UInt32' : 'String'));
    const placeholders = ['{c_v:Float64}', ...types.map((t, i) => `{c_k${i}:${t}}`)];
    where = `WHERE (${[sortColumn, ...keyCols].join(', ')}) ${direction === 'asc' ? '>' : '<'} (${placeholders.join(', ')})`;
    params.c_v = position.value;
    position.keys.forEach((k, i) => (params[`c_k${i}`] = k));
  }
  params.lim = limit + 1;
  return { sql: `SELECT * FROM (${inner}) ${where} ORDER BY ${order} LIMIT {lim:UInt32}`, params };
}

interface GroupRow {
  protocol_name?: string;
  instruction_type?: string;
  b?: number;
  error_message?: string;
  [metric: `m_${string}`]: number;
}

function toGroup(r: GroupRow, metrics: readonly Metric[]): Group {
  const g: Group = { values: {} };
  if (r.protocol_name !== undefined) g.protocol = r.protocol_name;
  if (r.instruction_type !== undefined) g.instructionType = r.instruction_type;
  if (r.b !== undefined) g.time = Number(r.b);
  if (r.error_message !== undefined) g.errorMessage = r.error_message;
  for (const m of metrics) g.values[m] = Number(r[`m_${m}`]);
  return g;
}

const keyValue = (g: Group, k: GroupKey | 'errorMessage'): string | number =>
  k === 'hour' ? (g.time ?? 0) : k === 'protocol' ? (g.protocol ?? '') : k === 'instructionType' ? (g.instructionType ?? '') : (g.errorMessage ?? '');

function readPosition(v: unknown[], keys: readonly (GroupKey | 'errorMessage')[]): Position | undefined {
  if (v.length !== keys.length + 1 || typeof v[0] !== 'number' || !Number.isFinite(v[0])) return undefined;
  const out: (string | number)[] = [];
  for (const [i, k] of keys.entries()) {
    const x = v[i + 1];
    if (k === 'hour' ? !(Number.isSafeInteger(x) && (x as number) >= 0 && (x as number) <= 4_294_967_295) : typeof x !== 'string') return undefined;
    out.push(x as string | number);
  }
  return { value: v[0], keys: out };
}

/** The statement for one page of groups, with the position it resumes from. */
export function groupPageStatement(req: GroupPageRequest): Statement | undefined {
  const params: Record<string, unknown> = {};
  const metrics = [...new Set([...req.metrics, req.sort.metric])];
  const inner = groupedSelect(ACTIVITY(req.filters, req.keys), req.filters, req.keys, metrics, req.bucket ?? 'hour', params);
  if (inner === undefined) return undefined;
  const position = req.cursor === undefined ? undefined : decodeToken(req.cursor, 'g1', groupFingerprint(req), (v) => readPosition(v, req.keys));
  return pagedStatement(inner, req.keys, `m_${req.sort.metric}`, req.sort.direction, position, req.limit, params);
}

const groupFingerprint = (req: GroupPageRequest): string =>
  fingerprintOf({ f: req.filters, k: req.keys, m: [...req.metrics].sort(), s: req.sort, b: req.bucket ?? 'hour' });

/** One page of groups, sorted by a metric then by the group keys, with a cursor per group. */
export async function pageGroups(wh: Warehouse, req: GroupPageRequest): Promise<GroupPage> {
  const statement = groupPageStatement(req);
  if (statement === undefined) return { groups: [], more: false };
  const rows = await wh.query<GroupRow>(statement.sql, { params: statement.params });
  const fp = groupFingerprint(req);
  const metrics = [...new Set([...req.metrics, req.sort.metric])];
  const kept = rows.slice(0, req.limit).map((r) => toGroup(r, metrics));
  return {
    groups: kept.map((g) => ({
      group: { ...g, values: pick(g.values, req.metrics) },
      cursor: encodeToken(['g1', g.values[req.sort.metric] ?? 0, ...req.keys.map((k) => keyValue(g, k)), fp]),
    })),
    more: rows.length > req.limit,
  };
}

const pick = (values: Group['values'], metrics: readonly Metric[]): Group['values'] =>
  Object.fromEntries(metrics.map((m) => [m, values[m]]));

/** Every group of a time series (no paging: the caller bounds the buckets), ordered by keys then time. */
export function seriesStatement(req: GroupRequest): Statement | undefined {
  const params: Record<string, unknown> = {};
  const inner = groupedSelect(ACTIVITY(req.filters, req.keys), req.filters, req.keys, req.metrics, req.bucket ?? 'hour', params);
  if (inner === undefined) return undefined;
  return { sql: `SELECT * FROM (${inner}) ORDER BY ${req.keys.map((k) => KEY_COLUMN[k]).join(', ') || '1'}`, params };
}

export async function seriesGroups(wh: Warehouse, req: GroupRequest): Promise<Group[]> {
  const statement = seriesStatement(req);
  if (statement === undefined) return [];
  const rows = await wh.query<GroupRow>(statement.sql, { params: statement.params });
  return rows.map((r) => toGroup(r, req.metrics));
}

// ---- failures by error message ----------------------------------------------------------

const failureKeys = (req: FailureRequest): (GroupKey | 'errorMessage')[] => [...req.keys, 'errorMessage'];
const failureFingerprint = (req: FailureRequest): string =>
  fingerprintOf({ f: req.filters, k: req.keys, m: [...req.metrics].sort() });

export function failurePageStatement(req: FailureRequest): Statement | undefined {
  const params: Record<string, unknown> = {};
  const keys = failureKeys(req);
  const metrics = [...new Set<Metric>([...req.metrics, 'count'])];
  const inner = groupedSelect(FAILURES(req.filters.errorPattern, params), req.filters, keys, metrics, 'hour', params);
  if (inner === undefined) return undefined;
  const position = req.cursor === undefined ? undefined : decodeToken(req.cursor, 'f1', failureFingerprint(req), (v) => readPosition(v, keys));
  return pagedStatement(inner, keys, 'm_count', 'desc', position, req.limit, params);
}

/** Failure groups, most frequent first: each error message within the requested keys. */
export async function pageFailures(wh: Warehouse, req: FailureRequest): Promise<GroupPage> {
  const statement = failurePageStatement(req);
  if (statement === undefined) return { groups: [], more: false };
  const rows = await wh.query<GroupRow>(statement.sql, { params: statement.params });
  const keys = failureKeys(req);
  const fp = failureFingerprint(req);
  const metrics = [...new Set<Metric>([...req.metrics, 'count'])];
  const kept = rows.slice(0, req.limit).map((r) => toGroup(r, metrics));
  return {
    groups: kept.map((g) => ({ group: g, cursor: encodeToken(['f1', g.values.count ?? 0, ...keys.map((k) => keyValue(g, k)), fp]) })),
    more: rows.length > req.limit,
  };
}

// ---- time buckets ---------------------------------------------------------------------------

const DAY = 86_400;
/** 1970-01-05, the first Monday after the epoch: ISO weeks are counted from it. */
const FIRST_MONDAY = 4 * DAY;

/** The start of the bucket holding `t` (Unix seconds, UTC), as the engine computes it. */
export function bucketStart(t: number, bucket: TimeBucket): number {
  switch (bucket) {
    case 'hour':
      return Math.floor(t / 3600) * 3600;
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

function nextBucket(start: number, bucket: TimeBucket): number {
  switch (bucket) {
    case 'hour':
      return start + 3600;
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
export function bucketCount(range: Required<TimeRange>, bucket: TimeBucket): number {
  if (range.lte < range.gte) return 0;
  const width = { hour: 3600, day: DAY, week: 7 * DAY, month: 28 * DAY }[bucket];
  return Math.floor((range.lte - bucketStart(range.gte, bucket)) / width) + 1;
}

/** Starts of every bucket that overlaps [gte, lte], in order. */
export function bucketStarts(range: Required<TimeRange>, bucket: TimeBucket): number[] {
  const out: number[] = [];
  for (let t = bucketStart(range.gte, bucket); t <= range.lte; t = nextBucket(t, bucket)) out.push(t);
  return out;
}
