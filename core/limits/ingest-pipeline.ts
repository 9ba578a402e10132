// Limits of the ingest pipeline and its sources: part of core/limits.ts (which re-exports this file), kept
// apart so that no file of limits outgrows the house rule; every number still lives under core/limits.

// ---- Ingest pipeline (ingest/pipeline.ts, ingest/ingest-main.ts) ------------------------------
/** Parsed rows handed to the write queue at a time (the writer groups them up to batchRows). */
export const INGEST_HAND_ROWS = 5000;
/** Rows per backfill batch at most (ingest/write-queue.ts): what a live record may wait behind,
 *  one insert of this size (~0.2-0.5 s on the shared 2-core machine, bench/RESULTS.md issue 40). */
export const INGEST_BACKFILL_BATCH_ROWS = 5000;
/** De-duplication (ingest/steps/dedupe.ts): a batch whose block times span at most this many
 *  seconds reads its time range of ingest_keys; a wider one asks for its keys one by one. */
export const INGEST_DEDUPE_SPAN_SECONDS = 3600;
/** Longest a backfill call waits for live calls in hand before it parses anyway (ms): live
 *  records get the JavaScript thread first, a backfill still moves under steady live traffic. */
export const INGEST_BACKFILL_YIELD_MS = 250;
/** Backfills whose progress the pipeline keeps for the status answer (finished ones beyond it are forgotten). */
export const INGEST_BACKFILLS_KEPT = 20;
/** npm run ingest: how often the consumer's progress line is printed (ms). */
export const INGEST_REPORT_EVERY_MS = 10_000;

// ---- Kafka source (ingest/kafka-source.ts) ----------------------------------------------------
/** Longest wait between two retries of a failed insert (ms): the wait doubles up to it. */
export const KAFKA_MAX_BACKOFF_MS = 30_000;
/** How often the consumer heartbeats while the warehouse works on a batch (ms), so it does not look dead. */
export const KAFKA_HEARTBEAT_EVERY_MS = 1_000;
