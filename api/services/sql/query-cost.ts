// One cost model for every interface that lets a client shape a query (SQL today, GraphQL's
// queryComplexity and its execution guard next): the engine's own estimate of the rows a
// query reads (`EXPLAIN ESTIMATE`, which uses the primary key and partition pruning),
// compared with the budget of the caller's plan before the query runs.
import { PLAN_QUERY_BUDGET, type Plan } from '../../../core/plans.ts';
import { costOf, estimateCost, HOURLY_TABLES, type CostEstimate } from '../../analytics/cost/statement-cost.ts';
import type { Settings, Warehouse } from '../../../warehouse/warehouse.ts';
import { priceJoins, type JoinCost, type JoinPrice } from './join-cost.ts';
import { JoinStats } from './join-stats.ts';
import type { PreparedQuery } from './sql-guard.ts';
import { SQL_BYTES_PER_BUDGET_ROW } from '../../../core/limits/sql.ts';

// The budget is checked before the query runs (the estimate) and enforced by the engine
// while it runs (max_rows_to_read), so a misestimate still stops.
export { PLAN_QUERY_BUDGET };
export { costOf, estimateCost };

/** A client query's cost: the statement's, with the rows its joins produce. */
export interface SqlCostEstimate extends CostEstimate {
  /** Rows the query's joins produce at most (join-cost.ts); 0 without joins or when not priced. */
  joinRows?: number;
  /** The costliest join, for the refusal message. */
  costliestJoin?: JoinCost;
}

/**
 * The score of client SQL: rows read plus the rows its joins produce (join-cost.ts), which
 * replaces the cross-join formula of costOf (a join without a condition is priced there as
 * the product of its own sides, which it is).
 */
export function withJoins(cost: CostEstimate, joins: JoinPrice): SqlCostEstimate {
  if (joins.joins.length === 0) return cost;
  const costliestJoin = joins.joins.reduce((a, b) => (b.rows > a.rows ? b : a));
  const recommendations = [
    'join on the key that identifies rows (signature and instruction_index for transactions; protocol_name and hour_start for the hourly tables) rather than a column many rows share',
    "narrow each side of the join with a date range (WHERE date BETWEEN 'YYYY-MM-DD' AND 'YYYY-MM-DD') or a protocol",
    `join aggregated subqueries (GROUP BY the join key first), or read the hourly tables ${HOURLY_TABLES}`,
    ...cost.recommendations.filter((r) => !r.startsWith('join with a condition')),
  ];
  return { ...cost, score: cost.estimatedRows + joins.rows, joinRows: joins.rows, costliestJoin, recommendations };
}

/**
 * The cost of a client's SELECT: rows read (EXPLAIN ESTIMATE) plus join output (join-cost.ts).
 * EXPLAIN ESTIMATE plans the query, and planning runs scalar and IN subqueries (their
 * results shape the plan): a join inside one would run before it is priced. So those joins
 * are priced first, their sides at their tables' full size (the estimate leaves such reads
 * out anyway), and over the budget the query is refused without asking the engine to plan it.
 */
export async function estimateSqlCost(wh: Warehouse, prepared: PreparedQuery, settings: Settings, stats: JoinStats, budget: number): Promise<SqlCostEstimate> {
  const measurements = JoinStats.budget();
  const early = await priceJoins(prepared.tree, prepared.canonicalTokens, prepared.cteNames, stats.facts(wh, [], measurements));
  const planned = early.joins.filter((j) => j.inExpression === true);
  const plannedRows = planned.reduce((a, j) => a + j.rows, 0);
  // Written so that a NaN is over budget too (fail closed).
  if (!(plannedRows <= budget)) {
    const tables = await Promise.all(prepared.tables.map(async (table) => ({ table, rows: await stats.tableRows(wh, table).catch(() => 0) })));
    const read = costOf(
      tables.reduce((a, t) => a + t.rows, 0),
      0,
      tables,
    );
    return withJoins(read, { rows: plannedRows, joins: planned });
  }
  const read = await estimateCost(wh, prepared.executed, { tables: prepared.tables, crossJoins: 0 }, settings);
  return withJoins(read, await priceJoins(prepared.tree, prepared.canonicalTokens, prepared.cteNames, stats.facts(wh, read.tables, measurements)));
}

/** Engine settings that enforce a plan's budget while the query runs. */
export function budgetSettings(plan: Plan): Settings {
  const rows = PLAN_QUERY_BUDGET[plan];
  return { max_rows_to_read: rows, max_bytes_to_read: rows * SQL_BYTES_PER_BUDGET_ROW, read_overflow_mode: 'throw' };
}

/** The refusal message for a query over budget. */
export function overBudgetMessage(cost: SqlCostEstimate, plan: Plan): string {
  const budget = PLAN_QUERY_BUDGET[plan];
  const join = cost.costliestJoin;
  const what =
    join !== undefined && cost.joinRows !== undefined && cost.joinRows > 0
      ? Number.isFinite(join.rows)
        ? `would read about ${fmt(cost.estimatedRows)} rows and its joins would produce about ${fmt(cost.joinRows)} rows (${join.what}: about ${fmt(join.rows)})`
        : `has a join whose output cannot be estimated before it runs (${join.what}); ARRAY JOIN a column or a literal array, and name each side's columns with its alias`
      : cost.score === cost.estimatedRows
        ? `would read about ${fmt(cost.estimatedRows)} rows`
        : `would compare about ${fmt(cost.score)} row pairs (a join without a condition over ${fmt(cost.estimatedRows)} rows)`;
  return `the query ${what}; the ${plan} plan allows ${fmt(budget)} per query. To narrow it: ${cost.recommendations.join('; ') || 'read fewer rows'}`;
}

const MILLION = 1e6;
const BILLION = 1e9;
const fmt = (n: number): string =>
  !Number.isFinite(n) ? 'unbounded' : n >= BILLION ? `${(n / BILLION).toFixed(1)}B` : n >= MILLION ? `${(n / MILLION).toFixed(1)}M` : `${Math.round(n)}`;
