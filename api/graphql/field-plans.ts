// Each top-level field of a request, turned into the analytics question it asks (for the
// cost guard, before anything runs) and how to answer it (for its resolver). Arguments are
// checked here with GraphQL's names for them; the answers come from the shared analytics
// layer and are only reshaped for the schema's types.
import { invalidParams } from '../../core/errors.ts';
import { GRAPHQL_MAX_PATTERN_CHARS, MAX_BLOCK_TIME } from '../../core/limits.ts';
import type { Analytics, CostQuestion, Prepared } from '../analytics/analytics.ts';
import type { AnswerCost, Recommendation } from '../analytics/analytics-cost.ts';
import { FAILURE_METRICS, type Group, type GroupFilters, type GroupKey, type GroupPageRequest, type Metric } from '../analytics/group-pages.ts';
import { bucketCount, type Granularity } from '../analytics/question/granularity.ts';
import type { ListRequest, TimeRange, Transaction, TransactionFilters } from '../analytics/types.ts';
import type { ConnectionPage } from '../analytics/connection.ts';
import { pageOf, type PaginationArg } from '../catalog/pagination-args.ts';
import { connectionOf, wantsOf, type ConnectionSelection } from './connection-plans.ts';
import { breaksRule, dayStart, FILTER_LISTS, Signature } from '../../core/vocabulary/primitives.ts';

/**
 * What a running field reports to its request: the items it answers, against the document's
 * GRAPHQL_MAX_DOCUMENT_POINTS (throws QUERY_TOO_COMPLEX past it).
 */
export interface FieldMeter {
  count(points: number): void;
}

/**
 * A top-level field ready to run: what it costs is asked of `question` (its prepared
 * answer: the statements are built once, then costed and run as the same objects), `run` answers it;
 * `points` is how many items its arguments ask for (the least it can answer when the number
 * of series is known only once read; 1 when absent).
 */
export interface FieldPlan {
  question: CostQuestion;
  points?: number;
  run(meter: FieldMeter): Promise<unknown>;
}

/** GraphQL enum values to the analytics layer's names. */
const METRIC: Record<string, Metric> = {
  COUNT: 'count', AVG_FEE: 'avgFee', MIN_FEE: 'minFee', MAX_FEE: 'maxFee', P50_FEE: 'p50Fee', P95_FEE: 'p95Fee',
  P99_FEE: 'p99Fee', SUM_FEE: 'sumFee', P95_COMPUTE_UNITS: 'p95ComputeUnits',
};
const METRIC_NAME = Object.fromEntries(Object.entries(METRIC).map(([k, v]) => [v, k])) as Record<Metric, string>;
const GROUP_KEY: Record<string, GroupKey> = { PROTOCOL: 'protocol', HOUR: 'time', INSTRUCTION_TYPE: 'instructionType' };
const GRANULARITY: Record<string, Granularity> = { HOUR: 'hour', DAY: 'day', WEEK: 'week', MONTH: 'month' };

/** Each string filter is the vocabulary's primitive, with the list caps every interface
 *  shares (FILTER_LISTS), under GraphQL's argument names. */
const LISTS: Record<string, { primitive: Primitive; max: number }> = Object.fromEntries(
  Object.entries(FILTER_LISTS).map(([name, l]) => [`filters.${name}`, { primitive: l.item, max: l.max }]),
);
type Primitive = (typeof FILTER_LISTS)[keyof typeof FILTER_LISTS]['item'];

const RECOMMENDATION: Record<Recommendation, string> = {
  narrowRange: 'narrow filters.dateRange (fewer days)',
  addProtocol: 'add a protocol (filters.protocols)',
  coarserBucket: 'use a coarser bucket (bucketBy DAY, WEEK or MONTH, or groupBy without HOUR)',
  dropPercentile: 'drop a percentile metric (P50_FEE, P95_FEE, P99_FEE, P95_COMPUTE_UNITS)',
};

export const wordRecommendations = (cost: AnswerCost): string[] => cost.recommendations.map((r) => RECOMMENDATION[r]);

interface DateRangeArg { start?: string | null; end?: string | null }
interface FiltersArg {
  protocols?: string[] | null;
  dateRange?: DateRangeArg | null;
  errorPattern?: string | null;
  instructionTypes?: string[] | null;
  programIds?: string[] | null;
  signatures?: string[] | null;
  status?: 'SUCCEEDED' | 'FAILED' | 'ALL' | null;
}
interface SortArg { field?: string | null; direction?: 'ASC' | 'DESC' | null }

type Args = Record<string, unknown>;

const present = <T>(v: T | null | undefined): v is T => v !== null && v !== undefined;

function list(value: string[] | null | undefined, name: keyof typeof LISTS): string[] | undefined {
  if (!present(value)) return undefined;
  const { primitive, max } = LISTS[name]!;
  if (value.length > max) throw invalidParams(`${name} may hold at most ${max} entries (got ${value.length})`, name);
  for (const [i, v] of value.entries()) {
    const rule = breaksRule(v, primitive);
    if (rule !== undefined) throw invalidParams(`${name}[${i}] must be ${rule} (got ${JSON.stringify(v.slice(0, 100))})`, name);
  }
  return value;
}

/** filters.dateRange as a block-time range: [start 00:00:00, end 23:59:59] UTC. */
function rangeOf(f: FiltersArg | null | undefined, required = false): TimeRange {
  const d = f?.dateRange;
  if (required && (!present(d) || !present(d.start) || !present(d.end))) {
    throw invalidParams('filters.dateRange with both start and end (YYYY-MM-DD) is required', 'dateRange');
  }
  if (!present(d)) return {};
  const gte = present(d.start) ? dayStart(d.start, 'filters.dateRange.start') : undefined;
  const lte = present(d.end) ? Math.min(dayStart(d.end, 'filters.dateRange.end') + 86_399, MAX_BLOCK_TIME) : undefined;
  if (gte !== undefined && lte !== undefined && gte > lte) {
    throw invalidParams(`filters.dateRange.start (${d.start}) is after filters.dateRange.end (${d.end})`, 'dateRange');
  }
  return { ...(gte === undefined ? {} : { gte }), ...(lte === undefined ? {} : { lte }) };
}

/** Refuse filters the answer cannot honour (rather than ignore them). */
function refuse(f: FiltersArg | null | undefined, names: (keyof FiltersArg)[], why: string): void {
  for (const n of names) if (present(f?.[n])) throw invalidParams(`filters.${n} ${why}`, n);
}

/** The enum values of a list argument, each at most once: a repeated value is refused (it was dropped silently). */
function distinct(v: unknown, name: string, max: number): string[] {
  const names = (v as string[] | null | undefined) ?? [];
  if (names.length > max) throw invalidParams(`${name} may hold at most ${max} entries, each value once (got ${names.length})`, name);
  const seen = new Set<string>();
  for (const [i, n] of names.entries()) {
    if (seen.has(n)) throw invalidParams(`${name}[${i}]: ${n} is listed twice; name each value once`, name);
    seen.add(n);
  }
  return names;
}

const metricsOf = (v: unknown): Metric[] => distinct(v, 'metrics', Object.keys(METRIC).length).map((n) => METRIC[n]!);
const keysOf = (v: unknown): GroupKey[] => distinct(v, 'groupBy', Object.keys(GROUP_KEY).length).map((n) => GROUP_KEY[n]!);

function groupFilters(f: FiltersArg | null | undefined, range: TimeRange): GroupFilters {
  const protocols = list(f?.protocols, 'filters.protocols');
  const instructionTypes = list(f?.instructionTypes, 'filters.instructionTypes');
  return { range, ...(protocols ? { protocols } : {}), ...(instructionTypes ? { instructionTypes } : {}) };
}

// ---- the node shapes of the schema --------------------------------------------------------

const groupNode = (g: Group): Record<string, unknown> => ({
  protocol: g.protocol ?? null,
  protocolName: g.protocol ?? null,
  hour: g.time ?? null,
  instructionType: g.instructionType ?? null,
  ...g.values,
});

const transactionOut = (t: Transaction): Record<string, unknown> => {
  const d = new Date(t.blockTime * 1000);
  return { ...t, date: d.toISOString().slice(0, 10), hour: d.getUTCHours() };
};

// ---- the fields ---------------------------------------------------------------------------

/** What transactions(filters, pagination, groupBy, metrics, sort) asks: records, or groups (no keys but metrics: one group of everything). */
type TransactionsAsk =
  | { kind: 'listing'; request: ListRequest; points: number }
  | { kind: 'groups'; request: GroupPageRequest; points: number };

/** The arguments of transactions(...) checked and turned into its request; nothing is read. */
function transactionsAsk(args: Args): TransactionsAsk {
  const f = args.filters as FiltersArg | null | undefined;
  refuse(f, ['errorPattern'], 'applies to failedTransactions only');
  const range = rangeOf(f);
  const page = pageOf(args.pagination as PaginationArg | null | undefined);
  const keys = keysOf(args.groupBy);
  const asked = metricsOf(args.metrics);
  const sort = args.sort as SortArg | null | undefined;
  const direction = sort?.direction === 'ASC' ? 'asc' : 'desc';

  if (keys.length === 0 && asked.length === 0) {
    // Records, in time order.
    if (present(sort?.field)) throw invalidParams('sort.field sorts groups; without groupBy or metrics records are in time order (sort.direction)', 'sort');
    const filters: TransactionFilters = {};
    const protocols = list(f?.protocols, 'filters.protocols');
    if (protocols) filters.protocols = protocols;
    if (range.gte !== undefined || range.lte !== undefined) filters.blockTime = range;
    const itypes = list(f?.instructionTypes, 'filters.instructionTypes');
    if (itypes) filters.instructionTypes = itypes;
    const programIds = list(f?.programIds, 'filters.programIds');
    if (programIds) filters.programIds = programIds;
    const signatures = list(f?.signatures, 'filters.signatures');
    if (signatures) filters.signatures = signatures;
    if (present(f?.status) && f.status !== 'ALL') filters.status = f.status === 'SUCCEEDED' ? 'succeeded' : 'failed';
    const request: ListRequest = { filters, sortOrder: direction, limit: page.limit, direction: page.direction, ...(page.cursor ? { cursor: page.cursor } : {}) };
    return { kind: 'listing', request, points: page.limit };
  }

  refuse(f, ['programIds', 'signatures', 'status'], 'cannot be combined with groupBy or metrics: aggregates come from hourly views that do not keep it; list the records instead');
  const metrics = asked.length > 0 ? asked : (['count'] as Metric[]);
  const request: GroupPageRequest = {
    filters: groupFilters(f, range),
    keys,
    metrics,
    sort: { metric: present(sort?.field) ? METRIC[sort.field]! : metrics.includes('count') ? 'count' : metrics[0]!, direction },
    limit: page.limit,
    direction: page.direction,
    ...(page.cursor ? { cursor: page.cursor } : {}),
  };
  return { kind: 'groups', request, points: page.limit };
}

/**
 * The prepared answer of a transactions(...) request, as a connection page: its protocols
 * resolved and its statement(s) built, once, with the reads the selection asks for.
 */
async function prepareTransactions(a: Analytics, ask: TransactionsAsk, selection?: ConnectionSelection, budget?: number): Promise<Prepared<ConnectionPage<unknown>>> {
  const wants = wantsOf(selection, ask.request.direction ?? 'forward');
  if (ask.kind === 'listing') return a.prepareListing(ask.request, wants, budget);
  const groups = await a.prepareGroups(ask.request, wants, budget);
  return {
    ...groups,
    answer: async () => {
      const page = await groups.answer();
      return { ...page, edges: page.edges.map((e) => ({ node: groupNode(e.node), cursor: e.cursor })) };
    },
  };
}

/** The question and answer of transactions(filters, pagination, groupBy, metrics, sort). */
async function transactionsPlan(a: Analytics, args: Args, selection: ConnectionSelection | undefined, budget: number): Promise<FieldPlan> {
  const ask = transactionsAsk(args);
  const prepared = await prepareTransactions(a, ask, selection, budget);
  return {
    question: prepared,
    points: ask.points,
    async run(meter) {
      const page = await prepared.answer();
      meter.count(page.edges.length);
      return connectionOf(page, (n) => n);
    },
  };
}

function signaturePlan(a: Analytics, args: Args): FieldPlan {
  const signature = args.signature as string;
  const rule = breaksRule(signature, Signature);
  if (rule !== undefined) throw invalidParams(`signature must be ${rule} (got ${JSON.stringify(signature.slice(0, 100))})`, 'signature');
  return {
    question: { kind: 'fixed' },
    async run() {
      const tx = await a.transaction(signature);
      return tx === null ? null : transactionOut(tx);
    },
  };
}

async function protocolStatsPlan(a: Analytics, args: Args): Promise<FieldPlan> {
  const f = args.filters as FiltersArg | null | undefined;
  refuse(f, ['errorPattern', 'instructionTypes', 'programIds', 'signatures', 'status'], 'is not a filter of protocolStats (protocols and dateRange are)');
  const range = rangeOf(f);
  const protocols = list(f?.protocols, 'filters.protocols');
  const prepared = await a.prepareStatsList(protocols, range);
  return {
    question: prepared,
    points: protocols?.length ?? 1,
    async run(meter) {
      const stats = await prepared.answer();
      meter.count(stats.length);
      return stats;
    },
  };
}

async function timeSeriesPlan(a: Analytics, args: Args): Promise<FieldPlan> {
  const f = args.filters as FiltersArg;
  refuse(f, ['errorPattern', 'programIds', 'signatures', 'status'], 'is not a filter of timeSeries (protocols, dateRange and instructionTypes are)');
  const range = rangeOf(f, true) as Required<TimeRange>;
  const keys = keysOf(args.groupBy);
  if (keys.includes('time')) throw invalidParams('groupBy HOUR is not allowed in timeSeries: bucketBy sets the time buckets', 'groupBy');
  const metrics = metricsOf(args.metrics);
  if (metrics.length === 0) throw invalidParams('metrics must name at least one metric', 'metrics');
  const granularity = GRANULARITY[args.bucketBy as string] ?? 'hour';
  const request = { filters: { ...groupFilters(f, range), range }, keys, metrics, granularity };
  // Known before reading: buckets x metrics x protocols (by PROTOCOL); instruction types only once read.
  const protocolSeries = keys.includes('protocol') ? (request.filters.protocols?.length ?? (await a.protocols()).length) : 1;
  const prepared = await a.prepareSeries(request);
  return {
    question: prepared,
    points: bucketCount(range, granularity) * metrics.length * Math.max(1, protocolSeries),
    async run(meter) {
      const series = await prepared.answer();
      meter.count(series.length * (series[0]?.points.length ?? 0) * metrics.length);
      const out: { timestamp: number; value: number; label: string }[] = [];
      for (const s of series) {
        const name = keys.length === 0 ? 'all' : keys.map((k) => (k === 'protocol' ? s.keys.protocol : s.keys.instructionType)).join('/');
        for (const m of metrics) {
          const label = `${name}:${METRIC_NAME[m]}`;
          for (const p of s.points) out.push({ timestamp: p.time, value: p.values[m] ?? 0, label });
        }
      }
      return out;
    },
  };
}

async function failedTransactionsPlan(a: Analytics, args: Args, selection: ConnectionSelection | undefined, budget: number): Promise<FieldPlan> {
  const f = args.filters as FiltersArg | null | undefined;
  refuse(f, ['programIds', 'signatures', 'status'], 'is not a filter of failedTransactions (protocols, dateRange, instructionTypes and errorPattern are)');
  const range = rangeOf(f);
  const keys = present(args.groupBy) ? keysOf(args.groupBy) : (['protocol', 'instructionType'] as GroupKey[]);
  const metrics = metricsOf(args.metrics);
  const other = metrics.filter((m) => !FAILURE_METRICS.has(m));
  if (other.length > 0) throw invalidParams(`metrics: failedTransactions offers COUNT, SUM_FEE and AVG_FEE (not ${other.map((m) => METRIC_NAME[m]).join(', ')})`, 'metrics');
  const pattern = f?.errorPattern ?? undefined;
  if (pattern !== undefined && (pattern.length === 0 || pattern.length > GRAPHQL_MAX_PATTERN_CHARS)) {
    throw invalidParams(`filters.errorPattern must be 1 to ${GRAPHQL_MAX_PATTERN_CHARS} characters long`, 'errorPattern');
  }
  const page = pageOf(args.pagination as PaginationArg | null | undefined);
  const request = {
    filters: { ...groupFilters(f, range), ...(pattern !== undefined ? { errorPattern: pattern } : {}) },
    keys,
    metrics: metrics.length > 0 ? metrics : (['count'] as Metric[]),
    limit: page.limit,
    direction: page.direction,
    ...(page.cursor ? { cursor: page.cursor } : {}),
  };
  const prepared = await a.prepareFailures(request, wantsOf(selection, page.direction), budget);
  return {
    question: prepared,
    points: page.limit,
    async run(meter) {
      const page = await prepared.answer();
      meter.count(page.edges.length);
      return connectionOf(page, (g: Group) => ({
        protocolName: g.protocol ?? null,
        instructionType: g.instructionType ?? null,
        hour: g.time ?? null,
        errorMessage: g.errorMessage ?? '',
        count: g.values.count ?? 0,
        sumFee: g.values.sumFee ?? null,
        avgFee: g.values.avgFee ?? null,
      }));
    },
  };
}

async function queryComplexityPlan(a: Analytics, args: Args, budget: number): Promise<FieldPlan> {
  // The question transactions(filters, groupBy, metrics) would ask, with default paging:
  // its arguments are checked now, a listing's protocols too (a listing reads its page
  // window to be prepared); groups are prepared when this field runs.
  const ask = transactionsAsk({ filters: args.filters, groupBy: args.groupBy, metrics: args.metrics });
  const listing = ask.kind === 'listing' ? await prepareTransactions(a, ask) : undefined;
  return {
    question: { kind: 'fixed' },
    async run() {
      const cost = await a.cost(listing ?? await prepareTransactions(a, ask));
      return { ...cost, withinBudget: cost.score <= budget, recommendations: wordRecommendations(cost) };
    },
  };
}

function protocolsPlan(a: Analytics): FieldPlan {
  return { question: { kind: 'fixed' }, run: () => a.protocols() };
}

/**
 * The plan of one top-level field of Query; undefined for fields this module does not own.
 * `selection`: the connection fields the document selects that cost reads of their own.
 */
export async function planField(a: Analytics, field: string, args: Args, budget: number, selection?: ConnectionSelection): Promise<FieldPlan | undefined> {
  switch (field) {
    case 'transactions':
      return transactionsPlan(a, args, selection, budget);
    case 'signature':
      return signaturePlan(a, args);
    case 'protocolStats':
      return protocolStatsPlan(a, args);
    case 'timeSeries':
      return timeSeriesPlan(a, args);
    case 'failedTransactions':
      return failedTransactionsPlan(a, args, selection, budget);
    case 'queryComplexity':
      return queryComplexityPlan(a, args, budget);
    case 'protocols':
      return protocolsPlan(a);
    default:
      return undefined;
  }
}
