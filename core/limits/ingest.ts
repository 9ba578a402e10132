// Limits of ingest: the pipeline, its sources (Kafka, the operator API) and the demo data.

/** Rejected lines POST /admin/ingest lists one by one; the rest are counted, and all are in the
 *  dead-letter table with their reasons (a million listed errors were 46 MB of answer). */
export const INGEST_MAX_LISTED_ERRORS = 1000;
/** Ingest: signatures per store lookup of the de-duplication step over a server (embedded reads them all at once). */
export const INGEST_LOOKUP_CHUNK = 5000;
/** Ingest: records parsed between two yields to the event loop while a batch is being stored. */
export const INGEST_PARSE_SLICE = 500;
/** Ingest: records per chunk sent to a parse worker, and chunks in flight per ready worker. */
export const INGEST_PARSE_CHUNK = 2000;
export const INGEST_CHUNKS_PER_WORKER = 2;

// ---- Demo data (ingest/demo-generator.ts, ingest/seed.ts, ingest/demo-records-cli.ts) --------
/** Signature chunks drawn from: 8 chunks x 11 base58 characters make an 88-character signature. */
export const DEMO_SIG_CHUNKS = 65_536;
/** Wallets drawn log-uniformly: a few are very hot (Zipf-like). */
export const DEMO_ACCOUNT_POOL = 100_000;
/** Demo data covers this many days before the current hour. */
export const DEMO_DAYS = 30;
/** npm run demo-records: records written when --count is not given. */
export const DEMO_RECORDS_DEFAULT_COUNT = 1000;
/** npm run demo-records: the seed when --seed is not given. */
export const DEMO_RECORDS_DEFAULT_SEED = 7;
/** npm run demo-records: records rendered at a time (bounded memory: one slice of NDJSON at a time). */
export const DEMO_RECORDS_SLICE = 100_000;

// ---- The demo's live trickle (ingest/demo-trickle.ts) -------------------------------------------
/** DEMO_TRICKLE's largest rate, records a minute (50 a second), whatever DEMO_ROWS: a gentle stream. */
export const DEMO_TRICKLE_MAX_PER_MINUTE = 3000;
/** A first write reaches back at most this far (seconds) towards the newest stored record. */
export const DEMO_TRICKLE_BACKFILL_SECONDS = 3600;
/** Records one write holds at most (the backfill of a first write included). */
export const DEMO_TRICKLE_MAX_PER_WRITE = 5000;
/** Row ids of trickled records start here, past every seeded row (DEMO_ROWS is at most 10^10). */
export const DEMO_TRICKLE_ID_BASE = 2 ** 40;
/** Ids per second of a write's start: a write starting at second s takes ids base + s x this + i,
 *  so writes, which start a second or more apart and hold fewer records, never share one. */
export const DEMO_TRICKLE_IDS_PER_SECOND = 2 ** 16;

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

/** The largest slot (UInt64) as text, and 2^64 as a number: a slot at or past it is out of range. */
export const UINT64_MAX_TEXT = '18446744073709551615';
export const UINT64_LIMIT = 2 ** 64;

/** How far before a batch's 'done' journal row its 'begin' row is looked for: the insert's
 *  duration with margin, so that the join does not read the journal's whole week. */
export const JOURNAL_BEGIN_LOOKBACK_MS = 10 * 60_000;
