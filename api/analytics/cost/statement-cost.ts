// The cost of a statement, as the engine estimates it before anything runs: the one cost
// function the question model's statements (analytics-cost.ts) and client SQL
// (api/services/sql/query-cost.ts, which adds join output) are priced by. `EXPLAIN ESTIMATE` uses
// the primary key and partition pruning, so its rows are what the statement would read.
import { TABLES } from '../../../warehouse/tables.ts';
import type { Settings, Warehouse } from '../../../warehouse/warehouse.ts';

/** The published hourly tables, as a recommendation names them. */
export const HOURLY_TABLES = `${TABLES.protocolHourly} / ${TABLES.instructionHourly}`;

export interface CostEstimate {
  /** Rows the engine expects to read, over every table read (a table read twice counts twice). */
  estimatedRows: number;
  /** The cost score compared with the budget: estimatedRows plus the rows its joins produce (client SQL), or the product of a cross join's sides. */
  score: number;
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
  return costOf(
    estimatedRows,
    input.crossJoins,
    [...perTable].map(([table, n]) => ({ table, rows: n })),
  );
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
    recommendations.push(
      `narrow the date range (WHERE date BETWEEN 'YYYY-MM-DD' AND 'YYYY-MM-DD'), or read the hourly tables ${HOURLY_TABLES} instead of ${TABLES.transactions}`,
    );
    recommendations.push("add a protocol (WHERE protocol_name = '…'): the table is ordered by protocol and time");
  }
  if (crossJoin) recommendations.unshift('join with a condition (JOIN … ON …) instead of a comma or CROSS JOIN');
  return { estimatedRows, score, tables, recommendations };
}
