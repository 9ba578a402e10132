// Each top-level field of a request, turned into the analytics question it asks (for the
// cost guard, before anything runs) and how to answer it (for its resolver). Arguments are
// checked here with GraphQL's names for them; the answers come from the shared analytics
// layer and are only reshaped for the schema's types.
import type { Analytics, CostQuestion } from '../../analytics/analytics.ts';
import type { AnswerCost, Recommendation } from '../../analytics/cost/analytics-cost.ts';
import type { Group, Metric } from '../../analytics/presets/group-pages.ts';
import { bucketCount, type Granularity } from '../../analytics/question/granularity.ts';
import type { TimeRange } from '../../analytics/types.ts';
import { groupFilters, pageOf, type CheckedQuestion } from './checked-question.ts';
import { questionInput, questionName, type Args } from './question-args.ts';
import { wantsOf, type ConnectionPage } from '../../analytics/paging/connection.ts';
import type { Prepared } from '../../analytics/prepared.ts';
import { connectionOf, type ConnectionSelection } from './connection-plans.ts';
import { keysOf, metricsOf, metricValue, type OpenQuestionDoor, type QuestionVocabulary } from './question-vocabulary.ts';
import { checkTransactions, prepareTransactions } from './transactions-question.ts';

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

/** A connection field's plan: its prepared page, its points, and each edge counted and mapped to its node. */
function connectionPlan<T, O>(prepared: Prepared<ConnectionPage<T>>, points: number, node: (t: T) => O): FieldPlan {
  return {
    question: prepared,
    points,
    async run(meter) {
      const page = await prepared.answer();
      meter.count(page.edges.length);
      return connectionOf(page, node);
    },
  };
}

const GRANULARITY: Record<string, Granularity> = { HOUR: 'hour', DAY: 'day', WEEK: 'week', MONTH: 'month' };

/** An open question's keys and metrics as its checked request holds them. */
type Keyed = CheckedQuestion & { groupBy?: string[]; metrics?: string[] };

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

// ---- the fields ---------------------------------------------------------------------------

/** The question and answer of transactions(filters, pagination, groupBy, metrics, sort): prepared by the catalog. */
async function transactionsPlan(a: Analytics, q: OpenQuestionDoor, args: Args, selection: ConnectionSelection | undefined, budget: number): Promise<FieldPlan> {
  const ask = await checkTransactions(a, args, q);
  const prepared = await prepareTransactions(a, ask, q.vocab, selection, budget);
  return connectionPlan(prepared, ask.points, (n) => n);
}

async function timeSeriesPlan(a: Analytics, q: OpenQuestionDoor, args: Args): Promise<FieldPlan> {
  const granularity = GRANULARITY[args.bucketBy as string] ?? 'hour';
  // Everything by the one check (open-questions.ts): the keys (no time key: bucketBy sets the
  // buckets), at least one metric, the protocols, the closed range and its bucket count.
  // No metrics (an explicit null) is an empty list: the request names at least one.
  const input = questionInput('timeSeries', args, { groupBy: args.groupBy, metrics: args.metrics ?? [], granularity }, true);
  const c = (await a.check(q.requests.timeSeries, input, questionName)) as Keyed;
  const [keys, metrics] = [keysOf(c.groupBy, q.vocab), metricsOf(c.metrics, q.vocab)];
  const range = c.range as Required<TimeRange>;
  const prepared = await a.prepare('series', { filters: { ...groupFilters(c), range }, keys, metrics, granularity, protocols: c.protocols });
  // Known before reading: buckets x metrics x protocols (by PROTOCOL); instruction types only once read.
  const protocolSeries = keys.includes('protocol') ? (c.protocolsAsked ?? c.protocols).length : 1;
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

async function failedTransactionsPlan(
  a: Analytics,
  q: OpenQuestionDoor,
  args: Args,
  selection: ConnectionSelection | undefined,
  budget: number,
): Promise<FieldPlan> {
  // Everything by the one check: the keys and metrics it offers, the page, the protocols and
  // range; the selection and budget beside the checked request.
  const input = questionInput('failedTransactions', args, { groupBy: args.groupBy, metrics: args.metrics });
  const c = (await a.check(q.requests.failedTransactions, input, questionName)) as Keyed & { errorPattern?: string };
  const page = pageOf(c);
  const metrics = metricsOf(c.metrics, q.vocab);
  const asks = {
    keys: c.groupBy === undefined ? (['protocol', 'instructionType'] as const) : keysOf(c.groupBy, q.vocab),
    metrics: metrics.length > 0 ? metrics : (['count'] as Metric[]),
    limit: page.limit,
    direction: page.direction,
    ...(page.cursor ? { cursor: page.cursor } : {}),
  };
  const filters = { ...groupFilters(c), ...(c.errorPattern !== undefined ? { errorPattern: c.errorPattern } : {}) };
  const prepared = await a.prepare('failures', { ...asks, filters, protocols: c.protocols }, { wants: wantsOf(selection, page.direction), budget });
  return connectionPlan(prepared, page.limit, (g: Group) => ({
    protocolName: g.protocol ?? null,
    instructionType: g.instructionType ?? null,
    hour: g.time ?? null,
    errorMessage: g.errorMessage ?? '',
    count: g.values.count ?? 0,
    sumFee: g.values.sumFee ?? null,
    avgFee: g.values.avgFee ?? null,
  }));
}

async function queryComplexityPlan(a: Analytics, q: OpenQuestionDoor, args: Args, budget: number): Promise<FieldPlan> {
  // The question transactions(filters, groupBy, metrics) would ask, with default paging:
  // its arguments are checked now, a listing's protocols too (a listing reads its page
  // window to be prepared); groups are prepared when this field runs.
  const vocab = q.vocab;
  const ask = await checkTransactions(a, { filters: args.filters, groupBy: args.groupBy, metrics: args.metrics }, q, 'queryComplexity');
  const listing = ask.kind === 'listing' ? await prepareTransactions(a, ask, vocab) : undefined;
  return {
    question: { kind: 'fixed' },
    async run() {
      const cost = await a.cost(listing ?? (await prepareTransactions(a, ask, vocab)));
      return { ...cost, withinBudget: cost.score <= budget, recommendations: wordRecommendations(cost, vocab) };
    },
  };
}

/**
 * The plan of one top-level field of Query; undefined for fields this module does not own
 * (those asked through a declared request, declared-fields.ts: signature, protocolStats, protocols).
 * `selection`: the connection fields the document selects that cost reads of their own.
 */
export async function planField(
  a: Analytics,
  q: OpenQuestionDoor,
  field: string,
  args: Args,
  budget: number,
  selection?: ConnectionSelection,
): Promise<FieldPlan | undefined> {
  switch (field) {
    case 'transactions':
      return transactionsPlan(a, q, args, selection, budget);
    case 'timeSeries':
      return timeSeriesPlan(a, q, args);
    case 'failedTransactions':
      return failedTransactionsPlan(a, q, args, selection, budget);
    case 'queryComplexity':
      return queryComplexityPlan(a, q, args, budget);
    default:
      return undefined;
  }
}
