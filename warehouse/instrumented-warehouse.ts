// A Warehouse that reports how long each call took, for the latency metrics. It wraps
// whichever transport is configured, so every caller is measured without knowing it.
import type { WarehouseObserver } from '../core/observers.ts';
import type { InsertOptions, QueryOptions, Warehouse } from './warehouse.ts';

export class InstrumentedWarehouse implements Warehouse {
  constructor(
    private readonly inner: Warehouse,
    private readonly observer: WarehouseObserver,
  ) {}

  get transport(): Warehouse['transport'] {
    return this.inner.transport;
  }

  get cluster(): Warehouse['cluster'] {
    return this.inner.cluster;
  }

  private async timed<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      const result = await fn();
      this.observer.observeWarehouse(operation, (performance.now() - t0) / 1000, true);
      return result;
    } catch (err) {
      this.observer.observeWarehouse(operation, (performance.now() - t0) / 1000, false);
      throw err;
    }
  }

  query<T = Record<string, unknown>>(sql: string, options?: QueryOptions): Promise<T[]> {
    return this.timed('query', () => this.inner.query<T>(sql, options));
  }

  queryText(sql: string, format: string, options?: QueryOptions): Promise<string> {
    return this.timed('query_text', () => this.inner.queryText(sql, format, options));
  }

  /** Measured from the call to the last chunk (or the failure), i.e. the whole transfer. */
  async *stream(sql: string, format: string, options?: QueryOptions): AsyncIterable<Uint8Array> {
    const t0 = performance.now();
    let ok = false;
    try {
      yield* this.inner.stream(sql, format, options);
      ok = true;
    } finally {
      this.observer.observeWarehouse('stream', (performance.now() - t0) / 1000, ok);
    }
  }

  insert(table: string, rows: readonly object[], options?: InsertOptions): Promise<void> {
    return this.timed('insert', () => this.inner.insert(table, rows, options));
  }

  insertBytes(table: string, data: Uint8Array, format: string, options?: InsertOptions): Promise<void> {
    return this.timed('insert', () => this.inner.insertBytes(table, data, format, options));
  }

  exec(sql: string, options?: QueryOptions): Promise<void> {
    return this.timed('exec', () => this.inner.exec(sql, options));
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
