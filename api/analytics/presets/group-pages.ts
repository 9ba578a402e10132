// Open questions over the model, where the caller picks the dimensions and measures
// (GraphQL's transactions(groupBy, metrics), timeSeries and failedTransactions ask them), with
// their answers shaped into keyset pages of groups (cursors bound to the question by the
// token codec) or into series with every bucket. No SQL here: compile.ts writes it.
import { AppError, Errors, param } from '../../../core/errors.ts';
import { MAX_SERIES_POINTS } from '../../../core/limits/questions.ts';
import { listingFingerprint, type PageDirection, type PageTokens } from '../paging/page-token.ts';
import type { AnswerRow, Position, Question, QuestionFilters } from '../question/compile.ts';
import { bucketStarts, type Granularity } from '../question/granularity.ts';
import { isTimeDimension, type Dimension } from '../question/model.ts';
import type { TimeRange } from '../types.ts';
import { UINT32_MAX } from '../../../core/vocabulary/primitives.ts';

/** The dimensions a caller may group by. */
export type GroupKey = Exclude<Dimension, 'errorMessage'>;
/** A measure of the service's catalog (the door checked it is one offered as a metric). */
export type Metric = string;
export type SortDirection = 'asc' | 'desc';

/** What the failure view keeps: counts and fee sums, no extremes or percentiles. */
export const FAILURE_METRICS: ReadonlySet<Metric> = new Set(['count', 'sumFee', 'avgFee']);

/** Filters as asked: protocols undefined means every visible one. */
export interface GroupFilters extends Pick<QuestionFilters, 'programIds' | 'signatures' | 'status' | 'ranges' | 'logMessage'> {
  protocols?: readonly string[];
  range: TimeRange;
  instructionTypes?: readonly string[];
}

export interface GroupPageRequest {
  filters: GroupFilters;
  keys: readonly GroupKey[];
  metrics: readonly Metric[];
  /** By a metric, or by a grouped key (then by the other keys). */
  sort: { metric: Metric; key?: undefined; direction: SortDirection } | { metric?: undefined; key: GroupKey; direction: SortDirection };
  limit: number;
  cursor?: string;
  /** Forward (default): the groups after `cursor`; backward: those right before it (group-connection.ts reads them). */
  direction?: PageDirection;
}

export interface FailureRequest {
  /** Failed records by definition: no status of their own. */
  filters: Omit<GroupFilters, 'status'> & { errorPattern?: string };
  /** Keys besides the error message, which every failure group has. */
  keys: readonly GroupKey[];
  metrics: readonly Metric[];
  limit: number;
  cursor?: string;
  direction?: PageDirection;
}

/** A time series: over a closed range, in buckets of one granularity. */
export interface SeriesRequest {
  filters: GroupFilters & { range: Required<TimeRange> };
  keys: readonly GroupKey[];
  metrics: readonly Metric[];
  granularity: Granularity;
}

/** One group: its keys (only those grouped by) and the requested metrics. */
export interface Group {
  protocol?: string;
  instructionType?: string;
  program?: string;
  /** Start of the time bucket, Unix seconds. */
  time?: number;
  date?: number;
  week?: number;
  month?: number;
  dayOfWeek?: number;
  errorMessage?: string;
  values: Partial<Record<Metric, number>>;
}

export interface GroupPage {
  groups: { group: Group; cursor: string }[];
  more: boolean;
}

/** One series of a time series: its keys (those grouped by) and one point per bucket. */
export interface Series {
  keys: Pick<Group, 'protocol' | 'instructionType' | 'program'>;
  points: { time: number; values: Group['values'] }[];
}

type PageKey = GroupKey | 'errorMessage';

const filtersOf = (f: GroupFilters & { errorPattern?: string }, protocols: readonly string[]): QuestionFilters => ({
  protocols,
  range: f.range,
  protocolsNamed: f.protocols !== undefined,
  ...(f.instructionTypes !== undefined ? { instructionTypes: f.instructionTypes } : {}),
  ...(f.errorPattern !== undefined ? { errorPattern: f.errorPattern } : {}),
  ...(f.programIds !== undefined ? { programIds: f.programIds } : {}),
  ...(f.signatures !== undefined ? { signatures: f.signatures } : {}),
  ...(f.status !== undefined ? { status: f.status } : {}),
  ...(f.ranges !== undefined ? { ranges: f.ranges } : {}),
  ...(f.logMessage !== undefined ? { logMessage: f.logMessage } : {}),
});

function readPosition(v: unknown[], keys: readonly PageKey[]): Position | undefined {
  if (v.length !== keys.length + 1 || typeof v[0] !== 'number' || !Number.isFinite(v[0])) return undefined;
  const out: (string | number)[] = [];
  for (const [i, k] of keys.entries()) {
    const x = v[i + 1];
    if (k !== 'errorMessage' && isTimeDimension(k) ? !(Number.isSafeInteger(x) && (x as number) >= 0 && (x as number) <= UINT32_MAX) : typeof x !== 'string')
      return undefined;
    out.push(x as string | number);
  }
  return { value: v[0], keys: out };
}

const keyValue = (g: Group, k: PageKey): string | number => g[k] ?? (k !== 'errorMessage' && isTimeDimension(k) ? 0 : '');

const TEXT_KEYS = ['protocol', 'instructionType', 'program', 'errorMessage'] as const;
const NUMBER_KEYS = ['time', 'date', 'week', 'month', 'dayOfWeek'] as const;

function toGroup(r: AnswerRow, metrics: readonly Metric[]): Group {
  const g: Group = { values: {} };
  for (const k of TEXT_KEYS) if (r[k] !== undefined) g[k] = r[k];
  for (const k of NUMBER_KEYS) if (r[k] !== undefined) g[k] = r[k];
  for (const m of metrics) g.values[m] = r.values[m] as number;
  return g;
}

// ---- groups ------------------------------------------------------------------------------

/**
 * Group filters as their tokens' fingerprints hash them: the status under its former name and
 * type (`success`, true or false). A fingerprint hashes key names, and a token issued before
 * `success` and `status` were one filter (by an older deploy, a replica not yet rolled) must
 * still resume; 'all', like no status, was never hashed.
 */
const fingerprinted = ({ status, ...f }: GroupFilters): Omit<GroupFilters, 'status'> & { success?: boolean } =>
  status === 'succeeded' || status === 'failed' ? { ...f, success: status === 'succeeded' } : f;

const groupFingerprint = (req: GroupPageRequest, protocols: readonly string[]): string =>
  listingFingerprint({ f: { ...fingerprinted(req.filters), protocols }, k: req.keys, m: [...req.metrics].sort(), s: req.sort, b: 'hour' });

/** A page of groups sorted by a metric, then by the group keys, one way; one row past the page tells whether more follow. */
export function groupsQuestion(tokens: PageTokens, req: GroupPageRequest, protocols: readonly string[]): Question<Metric> {
  const keys = pageKeys(req);
  const after =
    req.cursor === undefined ? undefined : tokens.decode(req.cursor, 'g1', groupFingerprint(req, protocols), (v) => readPosition(v, keys), req.direction);
  return {
    measures: req.metrics,
    dimensions: keys,
    filters: filtersOf(req.filters, protocols),
    order: { ...(req.sort.metric === undefined ? {} : { measure: req.sort.metric }), direction: req.sort.direction },
    page: { limit: req.limit + 1, ...(after ? { after } : {}) },
  };
}

/** The keys in page order: a key sorted by first, then the others as asked. */
const pageKeys = (req: GroupPageRequest): GroupKey[] =>
  req.sort.key === undefined ? [...req.keys] : [req.sort.key, ...req.keys.filter((k) => k !== req.sort.key)];

export function toGroupPage(tokens: PageTokens, req: GroupPageRequest, protocols: readonly string[], rows: readonly AnswerRow[]): GroupPage {
  const fp = groupFingerprint(req, protocols);
  const kept = rows.slice(0, req.limit).map((r) => toGroup(r, req.metrics));
  const keys = pageKeys(req);
  const sortMetric = req.sort.metric;
  return {
    groups: kept.map((g, i) => ({
      group: g,
      // Sorted by a key, the position is the keys alone (the value is unused).
      cursor: tokens.encode([
        'g1',
        sortMetric === undefined ? 0 : ((rows[i]!.values[sortMetric] as number | undefined) ?? 0),
        ...keys.map((k) => keyValue(g, k)),
        fp,
      ]),
    })),
    more: rows.length > req.limit,
  };
}

// ---- failures by error message ------------------------------------------------------------

const failureKeys = (req: FailureRequest): PageKey[] => [...req.keys, 'errorMessage'];
const failureFingerprint = (req: FailureRequest, protocols: readonly string[]): string =>
  listingFingerprint({ f: { ...req.filters, protocols }, k: req.keys, m: [...req.metrics].sort() });

/** Failed records grouped by error message (and the asked keys), most frequent first. */
export function failuresQuestion(tokens: PageTokens, req: FailureRequest, protocols: readonly string[]): Question<Metric> {
  const keys = failureKeys(req);
  const after =
    req.cursor === undefined ? undefined : tokens.decode(req.cursor, 'f1', failureFingerprint(req, protocols), (v) => readPosition(v, keys), req.direction);
  return {
    measures: req.metrics,
    dimensions: keys,
    filters: { ...filtersOf(req.filters, protocols), status: 'failed' },
    order: { measure: 'count', direction: 'desc' },
    page: { limit: req.limit + 1, ...(after ? { after } : {}) },
  };
}

export function toFailurePage(tokens: PageTokens, req: FailureRequest, protocols: readonly string[], rows: readonly AnswerRow[]): GroupPage {
  const keys = failureKeys(req);
  const fp = failureFingerprint(req, protocols);
  const kept = rows.slice(0, req.limit).map((r) => toGroup(r, [...new Set<Metric>([...req.metrics, 'count'])]));
  return {
    groups: kept.map((g) => ({ group: g, cursor: tokens.encode(['f1', g.values.count ?? 0, ...keys.map((k) => keyValue(g, k)), fp]) })),
    more: rows.length > req.limit,
  };
}

// ---- time series --------------------------------------------------------------------------

/** Every group of a time series, ordered by keys then time (no paging: the caller bounds the buckets). */
export const seriesQuestion = (req: SeriesRequest, protocols: readonly string[]): Question<Metric> => ({
  measures: req.metrics,
  dimensions: [...req.keys, 'time'],
  granularity: req.granularity,
  filters: filtersOf(req.filters, protocols),
});

/** One series per combination of the grouped keys (one without keys), each with every bucket, empty ones as zeros. */
export function toSeries(req: SeriesRequest, rows: readonly AnswerRow[]): Series[] {
  const starts = bucketStarts(req.filters.range, req.granularity);
  const bySeries = new Map<string, { keys: Series['keys']; byTime: Map<number, Group['values']> }>();
  if (req.keys.length === 0) bySeries.set('', { keys: {}, byTime: new Map() });
  for (const g of rows.map((r) => toGroup(r, req.metrics))) {
    const keys: Series['keys'] = {};
    if (g.protocol !== undefined) keys.protocol = g.protocol;
    if (g.instructionType !== undefined) keys.instructionType = g.instructionType;
    if (g.program !== undefined) keys.program = g.program;
    const id = JSON.stringify(keys);
    let s = bySeries.get(req.keys.length === 0 ? '' : id);
    if (!s) bySeries.set(id, (s = { keys, byTime: new Map() }));
    s.byTime.set(g.time ?? 0, g.values);
  }
  const points = bySeries.size * starts.length * Math.max(1, req.metrics.length);
  if (points > MAX_SERIES_POINTS) {
    throw new AppError(
      Errors.invalidParams,
      `${param('range')}: the answer would hold ${points} points; at most ${MAX_SERIES_POINTS} are allowed (use a shorter range, a coarser bucket, fewer metrics or fewer groups)`,
      { field: 'range' },
    );
  }
  const zero = Object.fromEntries(req.metrics.map((m) => [m, 0])) as Group['values'];
  return [...bySeries.values()].map((s) => ({ keys: s.keys, points: starts.map((time) => ({ time, values: s.byTime.get(time) ?? zero })) }));
}
