// The warehouse as the analytics layer sees it (not to be confused with warehouse/budgeted-warehouse.ts,
// which it wraps and which runs each statement under its request budget): every read carries the engine's
// own time limit, and a read cut by it becomes the catalog's query time-out (JSON-RPC
// -32000, REST 408) naming the limit, not an internal error. Filters that match nothing in
// an index (an unknown program id, an instruction type) can still make a read scan; on the
// one serving session such a read would hold up everyone's answers, so it is bounded.
import { AppError, Errors } from '../../core/errors.ts';
import type { Budget } from '../../core/budget.ts';
import { boundTo, type BudgetBinding } from '../../warehouse/budgeted-warehouse.ts';
import { ClickHouseCode, WarehouseError, type InsertOptions, type QueryOptions, type Warehouse } from '../../warehouse/warehouse.ts';

export class AnalyticsWarehouse implements Warehouse, BudgetBinding {
  constructor(
    private readonly inner: Warehouse,
    private readonly seconds: number,
  ) {}

  /** The same bounds over the inner session bound to `budget` (warehouse/budgeted-warehouse.ts). */
  under(budget: Budget | null | undefined): AnalyticsWarehouse {
    return new AnalyticsWarehouse(boundTo(this.inner, budget), this.seconds);
  }

  get transport(): Warehouse['transport'] {
    return this.inner.transport;
  }

  get cluster(): Warehouse['cluster'] {
    return this.inner.cluster;
  }

  private bounded(options: QueryOptions = {}): QueryOptions {
    return { ...options, settings: { max_execution_time: this.seconds, timeout_overflow_mode: 'throw', ...options.settings } };
  }

  private mapped(err: unknown): unknown {
    if (!(err instanceof WarehouseError)) return err;
    switch (err.clickhouseCode) {
      case ClickHouseCode.TIMEOUT_EXCEEDED:
      case ClickHouseCode.QUERY_WAS_CANCELLED:
        return new AppError(
          Errors.queryTimeout,
          `the answer took longer than ${this.seconds} s to compute and was cancelled; narrow the request (a shorter blockTime range, fewer records per page)`,
          { cause: err },
        );
      // The request budget's limits (core/budget.ts), met while running: the client asked for too much.
      case ClickHouseCode.TOO_MANY_ROWS:
      case ClickHouseCode.TOO_MANY_ROWS_OR_BYTES:
        return /result/i.test(err.message)
          ? new AppError(Errors.responseTooLarge, 'the answer is larger than this interface may send: ask for fewer records per page or a shorter range', {
              cause: err,
            })
          : new AppError(Errors.queryTooComplex, 'the answer would read more rows than the plan allows per request: narrow the range or name a protocol', {
              cause: err,
            });
      case ClickHouseCode.MEMORY_LIMIT_EXCEEDED:
      case ClickHouseCode.SET_SIZE_LIMIT_EXCEEDED:
        return new AppError(Errors.queryTooComplex, 'the answer needs more memory than the plan allows per request: narrow the range or ask for fewer groups', {
          cause: err,
        });
      default:
        return err;
    }
  }

  async query<T>(sql: string, options?: QueryOptions): Promise<T[]> {
    try {
      return await this.inner.query<T>(sql, this.bounded(options));
    } catch (err) {
      throw this.mapped(err);
    }
  }

  async queryText(sql: string, format: string, options?: QueryOptions): Promise<string> {
    try {
      return await this.inner.queryText(sql, format, this.bounded(options));
    } catch (err) {
      throw this.mapped(err);
    }
  }

  async *stream(sql: string, format: string, options?: QueryOptions): AsyncIterable<Uint8Array> {
    try {
      yield* this.inner.stream(sql, format, this.bounded(options));
    } catch (err) {
      throw this.mapped(err);
    }
  }

  // Writes are the pipeline's, not the analytics layer's: passed through unchanged.
  insert(table: string, rows: readonly object[], options?: InsertOptions): Promise<void> {
    return this.inner.insert(table, rows, options);
  }

  insertBytes(table: string, data: Uint8Array, format: string, options?: InsertOptions): Promise<void> {
    return this.inner.insertBytes(table, data, format, options);
  }

  exec(sql: string, options?: QueryOptions): Promise<void> {
    return this.inner.exec(sql, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
