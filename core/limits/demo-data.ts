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
