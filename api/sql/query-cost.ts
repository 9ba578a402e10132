// One cost model for every interface that lets a client shape a query (SQL today, GraphQL's
// queryComplexity and its execution guard next): the engine's own estimate of the rows a
// query reads (`EXPLAIN ESTIMATE`, which uses the primary key and partition pruning),
// compared with the budget of the caller's plan before the query runs.
import { PLAN_QUERY_BUDGET, type Plan } from '../../core/plans.ts';
import { TABLES } from '../../warehouse/tables.ts';
import type { Settings, Warehouse } from '../../warehouse/warehouse.ts';
import { priceJoins, type JoinCost, type JoinPrice } from './join-cost.ts';
import { JoinStats } from './join-stats.ts';
import type { PreparedQuery } from './sql-guard.ts';
import { SQL_BYTES_PER_BUDGET_ROW } from '../../core/limits.ts';

// The budget is checked before the query runs (the estimate) and enforced by the engine
// while it runs (max_rows_to_read), so a misestimate still stops.
export { PLAN_QUERY_BUDGET };


/** The published hourly tables, as a recommendation names them. */
const HOURLY_TABLES = `${TABLES.protocolHourly} / ${TABLES.instructionHourly}`;

export interface CostEstimate {
  /** Rows the engine expects to read, over every table read (a table read twice counts twice). */
  estimatedRows: number;
  /** The cost score compared with the budget: estimatedRows plus the rows its joins produce (client SQL), or the product of a cross join's sides. */
  score: number;
  /** Rows the query's joins produce at most (join-cost.ts); 0 without joins or when not priced. */
  joinRows?: number;
  /** The costliest join, for the refusal message. */
  costliestJoin?: JoinCost;
  /** Rows per table, as estimated. */
  tables: { table: string; rows: number }[];
  /** What the caller can do to lower the score, most useful first. */
  recommendations: string[];
}

export interface CostInput {
  /** Published tables the query reads (from the guard's parse tree). */
  tables: readonly string[];
  /** Joins with no condition (comma or CROSS JOIN) in the query; 0 for none. */
  crossJoins: number;
}

/**
 * Estimate the cost of `sql` (already checked by the guard) on `wh` with `settings` (the
 * same settings it will run with, so row filters and limits apply to the estimate too).
 */
export async function estimateCost(wh: Warehouse, sql: string, input: CostInput, settings: Settings, params?: Record<string, unknown>): Promise<CostEstimate> {
  // `params`: the bound parameters of a statement the analytics layer built (GraphQL answers).
  const rows = await wh.query<{ table: string; rows: string }>(`EXPLAIN ESTIMATE ${sql}`, { settings, params });
  const perTable = new Map<string, number>();
  for (const r of rows) perTable.set(r.table, (perTable.get(r.table) ?? 0) + Number(r.rows));
  // A table the guard saw that the estimate leaves out (a scalar subquery's read, which
  // the planner does not estimate) is costed at its whole size: an upper bound.
  const missing = input.tables.filter((t) => !perTable.has(t));
  if (missing.length > 0) {
    const sizes = await wh.query<{ table: string; rows: string }>(
      `SELECT table, sum(rows) AS rows FROM system.parts
       WHERE active AND database = currentDatabase() AND table IN {tables:Array(String)} GROUP BY table`,
      { params: { tables: missing } },
    );
    for (const s of sizes) perTable.set(s.table, Number(s.rows));
  }
  const estimatedRows = [...perTable.values()].reduce((a, b) => a + b, 0);
  return costOf(estimatedRows, input.crossJoins, [...perTable].map(([table, n]) => ({ table, rows: n })));
}

/** The score for an estimate; joins without a condition are costed by the product of their sides. */
export function costOf(estimatedRows: number, crossJoins: number, tables: { table: string; rows: number }[]): CostEstimate {
  // Every row meets every row: the work is the product of the k = crossJoins + 1 sides, at
  // most (rows/k)^k when the rows read split evenly between them (an upper bound).
  const sides = crossJoins + 1;
  const score = crossJoins > 0 ? Math.max(estimatedRows, (estimatedRows / sides) ** sides) : estimatedRows;
  const crossJoin = crossJoins > 0;
  const recommendations: string[] = [];
  if (tables.some((t) => t.table === TABLES.transactions)) {
    recommendations.push(`narrow the date range (WHERE date BETWEEN 'YYYY-MM-DD' AND 'YYYY-MM-DD'), or read the hourly tables ${HOURLY_TABLES} instead of ${TABLES.transactions}`);
    recommendations.push('add a protocol (WHERE protocol_name = \'…\'): the table is ordered by protocol and time');
  }
  if (crossJoin) recommendations.unshift('join with a condition (JOIN … ON …) instead of a comma or CROSS JOIN');
  return { estimatedRows, score, tables, recommendations };
}

/**
 * The score of client SQL: rows read plus the rows its joins produce (join-cost.ts), which
 * replaces the cross-join formula of costOf (a join without a condition is priced there as
 * the product of its own sides, which it is).
 */
export function withJoins(cost: CostEstimate, joins: JoinPrice): CostEstimate {
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
export async function estimateSqlCost(wh: Warehouse, prepared: PreparedQuery, settings: Settings, stats: JoinStats, budget: number): Promise<CostEstimate> {
  const measurements = JoinStats.budget();
  const early = await priceJoins(prepared.tree, prepared.canonicalTokens, prepared.cteNames, stats.facts(wh, [], measurements));
  const planned = early.joins.filter((j) => j.inExpression === true);
  const plannedRows = planned.reduce((a, j) => a + j.rows, 0);
  // Written so that a NaN is over budget too (fail closed).
  if (!(plannedRows <= budget)) {
    const tables = await Promise.all(prepared.tables.map(async (table) => ({ table, rows: await stats.tableRows(wh, table).catch(() => 0) })));
    const read = costOf(tables.reduce((a, t) => a + t.rows, 0), 0, tables);
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
export function overBudgetMessage(cost: CostEstimate, plan: Plan): string {
  const budget = PLAN_QUERY_BUDGET[plan];
  const join = cost.costliestJoin;
  const what = join !== undefined && cost.joinRows !== undefined && cost.joinRows > 0
    ? (Number.isFinite(join.rows)
      ? `would read about ${fmt(cost.estimatedRows)} rows and its joins would produce about ${fmt(cost.joinRows)} rows (${join.what}: about ${fmt(join.rows)})`
      : `has a join whose output cannot be estimated before it runs (${join.what}); ARRAY JOIN a column or a literal array, and name each side's columns with its alias`)
    : cost.score === cost.estimatedRows
      ? `would read about ${fmt(cost.estimatedRows)} rows`
      : `would compare about ${fmt(cost.score)} row pairs (a join without a condition over ${fmt(cost.estimatedRows)} rows)`;
  return `the query ${what}; the ${plan} plan allows ${fmt(budget)} per query. To narrow it: ${cost.recommendations.join('; ') || 'read fewer rows'}`;
}

const fmt = (n: number): string => (!Number.isFinite(n) ? 'unbounded' : n >= 1e9 ? `${(n / 1e9).toFixed(1)}B` : n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : `${Math.round(n)}`);
