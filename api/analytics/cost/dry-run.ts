// A call priced before it runs, by the one cost model (analytics-cost.ts): the call is answered
// once against a warehouse that runs nothing (each statement it would run is recorded and
// answered with no rows; the engine's estimates, EXPLAIN, still reach the engine), then its
// statements are priced as a prepared answer is: the engine's estimate of the rows each would
// read, plus the base cost per statement. The x402 plan prices keyless calls so
// (api/services/x402/x402-pricing.ts). A call whose later statements depend on earlier rows (a page
// after a lookup) is priced by those it would run first: never more than it runs.
import type { InsertOptions, QueryOptions, Warehouse } from '../../../warehouse/warehouse.ts';
import { costOf, type AnswerCost } from './analytics-cost.ts';
import { FIXED_SHAPE } from '../prepared.ts';
import type { Statement } from '../question/model.ts';

const ESTIMATE = /^\s*EXPLAIN\s/i;

/** A warehouse that records the reads it is asked for and runs none of them; writes are refused. */
class RecordingWarehouse implements Warehouse {
  readonly statements: Statement[] = [];
  constructor(readonly inner: Warehouse) {}

  get transport() {
    return this.inner.transport;
  }

  async query<T = Record<string, unknown>>(sql: string, options?: QueryOptions): Promise<T[]> {
    if (ESTIMATE.test(sql)) return this.inner.query<T>(sql, options);
    this.statements.push({ sql, params: { ...options?.params } });
    return [];
  }

  async queryText(sql: string, _format: string, options?: QueryOptions): Promise<string> {
    this.statements.push({ sql, params: { ...options?.params } });
    return '';
  }

  stream(sql: string, _format: string, options?: QueryOptions): AsyncIterable<Uint8Array> {
    this.statements.push({ sql, params: { ...options?.params } });
    return { [Symbol.asyncIterator]: () => ({ next: async (): Promise<IteratorResult<Uint8Array>> => ({ done: true, value: undefined }) }) };
  }

  async insert(table: string, _rows: readonly object[], _options?: InsertOptions): Promise<void> {
    throw new Error(`a dry run writes nothing (an insert into ${table})`);
  }

  async insertBytes(table: string): Promise<void> {
    throw new Error(`a dry run writes nothing (an insert into ${table})`);
  }

  async exec(): Promise<void> {
    throw new Error('a dry run runs no statement');
  }

  async close(): Promise<void> {}
}

/**
 * The cost of what `answer` would run: it is answered on `analyticsOver` a warehouse that
 * runs nothing (over `wh`, which estimates), then its statements are priced. What it throws
 * on rows it never got is left: the statements recorded until then are priced.
 */
export async function dryRunCost<A>(analyticsOver: (wh: Warehouse) => A, wh: Warehouse, answer: (dry: A) => Promise<unknown>): Promise<AnswerCost> {
  const recorder = new RecordingWarehouse(wh);
  try {
    await answer(analyticsOver(recorder));
  } catch {
    /* priced by what it would have run until then */
  }
  return costOf(wh, recorder.statements, FIXED_SHAPE);
}
