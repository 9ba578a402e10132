// WHERE conditions for the filters every listing shares (visible protocols, blockTime,
// status, programIds). The base table and both lookup tables name these columns alike.
import type { TransactionFilters } from './types.ts';

/** One SQL statement with its bound parameters: what a helper runs, and what the cost model
 *  (analytics-cost.ts) asks the engine to estimate, so both see the same text. */
export interface Statement {
  sql: string;
  params: Record<string, unknown>;
}

export interface Conditions {
  where: string[];
  params: Record<string, unknown>;
}

export function commonConditions(filters: Pick<TransactionFilters, 'blockTime' | 'status' | 'programIds'>, visible: readonly string[]): Conditions {
  const where = ['protocol_name IN {visible:Array(String)}'];
  const params: Record<string, unknown> = { visible };
  const bt = filters.blockTime;
  if (bt?.gte !== undefined) {
    where.push("block_time >= toDateTime({gte:UInt32}, 'UTC')");
    params.gte = bt.gte;
  }
  if (bt?.lte !== undefined) {
    where.push("block_time <= toDateTime({lte:UInt32}, 'UTC')");
    params.lte = bt.lte;
  }
  if (filters.status === 'succeeded') where.push('success');
  if (filters.status === 'failed') where.push('NOT success');
  if (filters.programIds) {
    where.push('program_id IN {programIds:Array(String)}');
    params.programIds = filters.programIds;
  }
  return { where, params };
}
