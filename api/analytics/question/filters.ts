// The filters of the question model, each defined once: its condition and its bound
// parameter read the same over the base table, the lookup tables (same column names) and
// the hourly views that keep its column. Listings (transactions.ts, address-transactions.ts,
// failed-transactions.ts) and the compiler (compile.ts) take their conditions from here.
import type { TransactionFilters } from '../types.ts';

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
} as const;
export type FilterName = keyof typeof FILTERS;

/** The status filter: which records a condition keeps ('all' keeps every one). */
export const STATUS_SQL = { succeeded: 'success', failed: 'NOT success' } as const;

/** Add a filter's condition and parameter, when it is given. */
export function addFilter(c: Conditions, name: FilterName, value: unknown): void {
  if (value === undefined) return;
  c.where.push(FILTERS[name].sql);
  c.params[FILTERS[name].param] = value;
}

/** The conditions every record listing shares: visible protocols, blockTime (inclusive), status, programIds. */
export function commonConditions(filters: Pick<TransactionFilters, 'blockTime' | 'status' | 'programIds'>, visible: readonly string[]): Conditions {
  const c: Conditions = { where: [], params: {} };
  addFilter(c, 'protocols', visible);
  const bt = filters.blockTime;
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
