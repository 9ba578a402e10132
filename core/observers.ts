// What the layers below the API report about their work, as interfaces: the warehouse and
// ingest layers call these without knowing who listens; core/metrics.ts implements them on
// the process's one metrics registry.

/** Every warehouse call: its operation (query, query_text, stream, insert, exec), time, outcome. */
export interface WarehouseObserver {
  observeWarehouse(operation: string, seconds: number, ok: boolean): void;
}

/** Every ingest through the pipeline (any source), and every insert batch it writes. */
export interface IngestObserver {
  observeIngest(source: string, accepted: number, rejected: number, duplicates: number): void;
  observeBatch(rows: number): void;
}
