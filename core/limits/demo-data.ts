// Limits of the demo data generator and its CLI: part of core/limits.ts (which re-exports this file), kept
// apart so that no file of limits outgrows the house rule; every number still lives under core/limits.

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
