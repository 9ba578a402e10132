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
/** Rows seeded by one INSERT ... SELECT when the caller does not say. */
export const DEMO_SEED_SLICE_ROWS = 1_000_000;
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
/** Lines a block when a body is staged for the engine's checks (ingest/engine-checks.ts): a body
 *  staged as one block is checked on one thread; in blocks, on every core (a 40,000-line body's
 *  checks 470 → 320 ms on 2 cores, bench/RESULTS.md "The engine checks' fixed cost and one thread"). */
export const INGEST_STAGE_BLOCK_LINES = 2048;
/** De-duplication (ingest/steps/dedupe.ts): a batch whose block times span at most this many
 *  seconds reads its time range of ingest_keys; a wider one asks for its keys one by one. */
export const INGEST_DEDUPE_SPAN_SECONDS = 3600;
/**
 * How long a backfill call waits for live calls in hand before it parses anyway (ms), so live
 * records get the machine first and a backfill still moves under steady live traffic:
 * - freshMs: while live keeps up;
 * - lagMs: a live call slower than this (arrival to stored) means live is behind; a quarter of
 *   the freshness target (1 s), so the backfill steps back before live records miss it (beside
 *   a 10M replay at 80 % of the live maximum: p99 1.8-3.0 s, median 2.2, against 2.3-4.6 s,
 *   median 2.6, at 500 ms; bench/RESULTS.md, session 17);
 * - laggingMs: while live is behind. At 80 % of the live maximum a forced backfill batch every
 *   250 ms saturated the 2-core machine (live p99 5.5 s beside a 10M replay, bench/RESULTS.md,
 *   issue 40); one every 5 s still moves a replay ~1,000 records/s.
 */
export const INGEST_BACKFILL_YIELD = { freshMs: 250, lagMs: 250, laggingMs: 5000 } as const;
/** Backfills whose progress the pipeline keeps for the status answer (finished ones beyond it are forgotten). */
export const INGEST_BACKFILLS_KEPT = 20;
/** npm run ingest: how often the consumer's progress line is printed (ms). */
export const INGEST_REPORT_EVERY_MS = 10_000;

/** Ingest: characters of a refused oversized record the dead-letter table keeps (4 KiB). */
export const INGEST_DEAD_LETTER_PAYLOAD_CHARS = 4096;
/** Ingest: most addresses a record's `accounts` may list. */
export const INGEST_MAX_ACCOUNTS = 1024;
/** Ingest: Retry-After of a write refused because the store's disk is full (the operator frees space). */
export const INGEST_STORAGE_FULL_RETRY_AFTER_SECONDS = 60;
/** Characters of the progress bar npm run seed and npm run produce draw. */
export const PROGRESS_BAR_CHARS = 25;

// ---- Kafka clients (ingest/kafka-client.ts) ---------------------------------------------------
/** How long a client waits for a broker's connection (ms). */
export const KAFKA_CONNECTION_TIMEOUT_MS = 3_000;
/** A broker restart takes a few seconds: retries start this far apart (ms), grow to the most,
 *  and are this many before the client gives up. */
export const KAFKA_RETRY_INITIAL_MS = 200;
export const KAFKA_RETRY_MAX_MS = 5_000;
export const KAFKA_RETRIES = 30;
/** Pause before topics are created again after a retriable error (ms). */
export const KAFKA_TOPIC_RETRY_MS = 300;
/** Messages per produce request when the caller does not say. */
export const KAFKA_PUBLISH_CHUNK = 4_000;

// ---- npm run produce (ingest/produce-cli.ts) ----------------------------------------------------
/** Records produced when --count is not given, and the seed when --seed is not. */
export const PRODUCE_DEFAULT_COUNT = 100_000;
export const PRODUCE_DEFAULT_SEED = 42;
/** Largest --rate, records a second. */
export const PRODUCE_MAX_RATE = 10_000_000;
/** --slice: records rendered at a time, its default and bounds. */
export const PRODUCE_DEFAULT_SLICE = 50_000;
export const PRODUCE_MIN_SLICE = 100;
export const PRODUCE_MAX_SLICE = 1_000_000;
/** Paced produce requests a second (chunks of about 50 ms of records keep the rate smooth), and
 *  the smallest such chunk; KAFKA_PUBLISH_CHUNK is the largest. */
export const PRODUCE_CHUNKS_PER_SECOND = 20;
export const PRODUCE_MIN_CHUNK = 100;
/** How often the progress line is drawn again on a terminal, and printed to a log (ms). */
export const PRODUCE_PROGRESS_TTY_MS = 200;
export const PRODUCE_PROGRESS_LOG_MS = 2_000;

// ---- Kafka source (ingest/kafka-source.ts) ----------------------------------------------------
/** How long the group waits for members to rejoin during a rebalance (ms). */
export const KAFKA_REBALANCE_TIMEOUT_MS = 60_000;
/** The group heartbeat's shortest interval (ms); it is otherwise a tenth of the session time-out. */
export const KAFKA_MIN_HEARTBEAT_INTERVAL_MS = 1_000;
/** A fetch's byte bound is at least this, however small the per-partition bound. */
export const KAFKA_FETCH_MIN_MAX_BYTES = 16 * 1024 * 1024;
/** A fetch waits up to KAFKA_FETCH_MAX_WAIT_MS for this many bytes: fewer, larger inserts suit ClickHouse. */
export const KAFKA_FETCH_MIN_BYTES = 64 * 1024;
export const KAFKA_FETCH_MAX_WAIT_MS = 250;
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
