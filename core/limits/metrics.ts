// The buckets of the service's histograms (core/metrics.ts): where their figures fall is what
// the Grafana board and the alert rules read, so they are chosen once, here.

/** Seconds of an HTTP request: 1 ms to 30 s. */
export const HTTP_SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Seconds of one engine statement: 0.5 ms to 30 s. */
export const STATEMENT_SECONDS_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Rows of one ingest batch. */
export const BATCH_ROWS_BUCKETS = [1, 10, 100, 1000, 5000, 10_000, 50_000, 100_000];
/** Seconds of one Kafka batch's insert: 10 ms to 30 s. */
export const KAFKA_INSERT_SECONDS_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Records of one Kafka batch. */
export const KAFKA_BATCH_RECORDS_BUCKETS = [1, 10, 100, 500, 1000, 2500, 5000, 10000, 25000];
/** Seconds from a record's block_time to its storage: half a second to a day (backfills are old). */
export const FRESHNESS_BLOCK_SECONDS_BUCKETS = [0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600, 86400];
/** Seconds from a record's Kafka produce time to its storage: 50 ms to 5 minutes. */
export const FRESHNESS_PRODUCE_SECONDS_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300];
/** Seconds of one ingest stage (parse, queue, dedupe, journal, insert, notify): 1 ms to 10 s. */
export const INGEST_STAGE_SECONDS_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds from the pipeline's receipt of a chunk to its being queryable, per lane: 50 ms to 30 s. */
export const INGEST_FRESHNESS_SECONDS_BUCKETS = [0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 5, 10, 30];
