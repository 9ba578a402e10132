// The cost of an analytics answer before it runs, by the one cost model the SQL sandbox uses
// (api/services/sql/query-cost.ts): the engine's own estimate (EXPLAIN ESTIMATE) of the rows each
// statement the answer runs would read, plus a fixed base cost, compared by the caller with
// the plan's budget (PLAN_QUERY_BUDGET). GraphQL's queryComplexity reports it and its guard
// refuses over-budget requests with it, so the two cannot disagree.
import { ANSWER_COST_PER_PERCENTILE, ANSWER_COST_PER_STATEMENT } from '../../../core/limits/questions.ts';
import type { Warehouse } from '../../../warehouse/warehouse.ts';
import { estimateCost } from './statement-cost.ts';
import type { Statement } from '../question/model.ts';
import type { Granularity } from '../question/granularity.ts';
import type { TimeRange } from '../types.ts';

/** What a caller can do to lower a cost, as codes; each interface words them. */
export type Recommendation = 'narrowRange' | 'addProtocol' | 'coarserBucket' | 'dropPercentile' | 'useViews';

export interface AnswerCost {
  /** Rows the engine expects the answer's statements to read. */
  estimatedRows: number;
  /** The fixed part: ANSWER_COST_PER_STATEMENT per statement plus ANSWER_COST_PER_PERCENTILE per percentile metric (core/limits). */
  baseCost: number;
  /** estimatedRows + baseCost: what is compared with the plan's budget. */
  score: number;
  recommendations: Recommendation[];
}

/** What the recommendations look at: the shape of the question, not its SQL. */
export interface CostShape {
  range: TimeRange;
  protocolsGiven: boolean;
  /** The size of the time buckets, when the answer is bucketed in time. */
  granularity?: Granularity;
  /** Percentile measures shown or sorted by (each merges t-digest states). */
  percentiles?: number;
  /** Read from the base table's records (a dimension or filter no hourly view keeps). */
  records?: boolean;
}

const WEEK = 7 * 86_400;

export async function costOf(wh: Warehouse, statements: readonly Statement[], shape: CostShape): Promise<AnswerCost> {
  let estimatedRows = 0;
  for (const s of statements) {
    const e = await estimateCost(wh, s.sql, { tables: [], crossJoins: 0 }, {}, s.params);
    estimatedRows += e.estimatedRows;
  }
  const percentiles = shape.percentiles ?? 0;
  const baseCost = ANSWER_COST_PER_STATEMENT * Math.max(1, statements.length) + ANSWER_COST_PER_PERCENTILE * percentiles;
  return { estimatedRows, baseCost, score: estimatedRows + baseCost, recommendations: recommend(shape, percentiles) };
}

function recommend(shape: CostShape, percentiles: number): Recommendation[] {
  const out: Recommendation[] = [];
  const { gte, lte } = shape.range;
  if (gte === undefined || lte === undefined || lte - gte > WEEK) out.push('narrowRange');
  if (!shape.protocolsGiven) out.push('addProtocol');
  if (shape.granularity !== undefined && shape.granularity !== 'month') out.push('coarserBucket');
  if (percentiles > 0) out.push('dropPercentile');
  if (shape.records === true) out.push('useViews');
  return out;
}
