// Each top-level field of a request, turned into the analytics question it asks (for the
// cost guard, before anything runs) and how to answer it (for its resolver). Arguments are
// checked here with GraphQL's names for them; the answers come from the shared analytics
// layer and are only reshaped for the schema's types.
import { invalidParams } from '../../core/errors.ts';
import type { Analytics, CostQuestion } from '../analytics/analytics.ts';
import type { AnswerCost, Recommendation } from '../analytics/analytics-cost.ts';
import { FAILURE_METRICS, type Group, type Metric } from '../analytics/group-pages.ts';
import { bucketCount, type Granularity } from '../analytics/question/granularity.ts';
import { isTimeDimension } from '../analytics/question/model.ts';
import type { TimeRange, Transaction } from '../analytics/types.ts';
import { errorPatternOf, groupFilters, keysOf, list, metricsOf, rangeOf, takesOnly, transactionsAsk, type Args, type FiltersArg } from './question-args.ts';
import { pageOf, type PaginationArg } from './pagination-args.ts';
import { wantsOf } from '../analytics/connection.ts';
import { connectionOf, type ConnectionSelection } from './connection-plans.ts';
import { metricValue, questionVocabulary, type GroupKey, type QuestionVocabulary } from './question-vocabulary.ts';
import { prepareTransactions } from './transactions-question.ts';
import { breaksRule, Signature } from '../../core/vocabulary/primitives.ts';

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

/** The keys failedTransactions' nodes show. */
const FAILURE_KEYS: readonly GroupKey[] = ['protocol', 'instructionType', 'time'];

const GRANULARITY: Record<string, Granularity> = { HOUR: 'hour', DAY: 'day', WEEK: 'week', MONTH: 'month' };

const RECOMMENDATION: Record<Exclude<Recommendation, 'dropPercentile'>, string> = {
  narrowRange: 'narrow filters.dateRange (fewer days)',
  addProtocol: 'add a protocol (filters.protocols)',
  coarserBucket: 'use a coarser bucket (bucketBy DAY, WEEK or MONTH, or groupBy without HOUR)',
  useViews:
    'drop what only records answer (groupBy PROGRAM_ID; filters slotRange, feeRange, computeRange, accountsCount, success, status, logMessage, programIds, signatures): without them hourly views answer',
};

/** The recommendations in words; the percentile metrics are the vocabulary's. */
export const wordRecommendations = (cost: AnswerCost, vocab: QuestionVocabulary): string[] =>
  cost.recommendations.map((r) =>
    r === 'dropPercentile'
      ? `drop a percentile metric (${vocab.metrics
          .filter((m) => m.percentile)
          .map((m) => m.value)
          .join(', ')})`
      : RECOMMENDATION[r],
  );

// ---- the node shapes of the schema --------------------------------------------------------

const transactionOut = (t: Transaction): Record<string, unknown> => {
  const d = new Date(t.blockTime * 1000);
  return { ...t, date: d.toISOString().slice(0, 10), hour: d.getUTCHours() };
};

// ---- the fields ---------------------------------------------------------------------------

/** The question and answer of transactions(filters, pagination, groupBy, metrics, sort): prepared by the catalog. */
async function transactionsPlan(a: Analytics, args: Args, selection: ConnectionSelection | undefined, budget: number): Promise<FieldPlan> {
  const { prepared, points } = await prepareTransactions(a, args, questionVocabulary(a.measures), selection, budget);
  return {
    question: prepared,
    points,
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
  takesOnly(f, 'protocolStats');
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
  takesOnly(f, 'timeSeries');
  const range = rangeOf(f, true) as Required<TimeRange>;
  const vocab = questionVocabulary(a.measures);
  const keys = keysOf(args.groupBy, vocab);
  const timeKey = vocab.groupKeys.find((k) => keys.includes(k.dimension) && isTimeDimension(k.dimension));
  if (timeKey !== undefined) throw invalidParams(`groupBy ${timeKey.value} is not allowed in timeSeries: bucketBy sets the time buckets`, 'groupBy');
  const metrics = metricsOf(args.metrics, vocab);
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
        const name = keys.length === 0 ? 'all' : keys.map((k) => s.keys[k as keyof typeof s.keys]).join('/');
        for (const [i, m] of metrics.entries()) {
          // The metric as the request named it (a renamed metric's older name too).
          const label = `${name}:${(args.metrics as string[] | undefined)?.[i] ?? metricValue(m)}`;
          for (const p of s.points) out.push({ timestamp: p.time, value: p.values[m] ?? 0, label });
        }
      }
      return out;
    },
  };
}

async function failedTransactionsPlan(a: Analytics, args: Args, selection: ConnectionSelection | undefined, budget: number): Promise<FieldPlan> {
  const f = args.filters as FiltersArg | null | undefined;
  takesOnly(f, 'failedTransactions');
  const range = rangeOf(f);
  const vocab = questionVocabulary(a.measures);
  const keys = args.groupBy !== null && args.groupBy !== undefined ? keysOf(args.groupBy, vocab) : (['protocol', 'instructionType'] as GroupKey[]);
  const unshown = keys.filter((k) => !FAILURE_KEYS.includes(k));
  if (unshown.length > 0) throw invalidParams('groupBy: failedTransactions groups by PROTOCOL, INSTRUCTION_TYPE and HOUR', 'groupBy');
  const metrics = metricsOf(args.metrics, vocab);
  const other = metrics.filter((m) => !FAILURE_METRICS.has(m));
  if (other.length > 0)
    throw invalidParams(`metrics: failedTransactions offers COUNT, SUM_FEE and AVG_FEE (not ${other.map(metricValue).join(', ')})`, 'metrics');
  const pattern = errorPatternOf(f);
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
  const vocab = questionVocabulary(a.measures);
  const asked = { filters: args.filters, groupBy: args.groupBy, metrics: args.metrics };
  const ask = transactionsAsk(asked, vocab);
  const listing = ask.kind === 'listing' ? (await prepareTransactions(a, asked, vocab)).prepared : undefined;
  return {
    question: { kind: 'fixed' },
    async run() {
      const cost = await a.cost(listing ?? (await prepareTransactions(a, asked, vocab)).prepared);
      return { ...cost, withinBudget: cost.score <= budget, recommendations: wordRecommendations(cost, vocab) };
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
