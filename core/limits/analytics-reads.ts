// Limits of the analytics layer's reads and their cost: part of core/limits.ts (which re-exports this
// file), kept apart so that no file of limits outgrows the house rule; every number still lives under core/limits.

// ---- Answer cost (api/analytics/analytics-cost.ts): the fixed part of every answer's score ----
/** Row-equivalents charged per statement whatever it reads (an engine round trip). */
export const ANSWER_COST_PER_STATEMENT = 1_000;
/** Row-equivalents charged per percentile metric (merging t-digest states). */
export const ANSWER_COST_PER_PERCENTILE = 1_000;

// ---- Activity bucket reads (api/analytics/activity-buckets.ts; live streams' changed buckets) ----
/** Bucket keys per statement: bound parameters travel in the URL to a server (1 MiB limit), and a
 *  backfill can touch tens of thousands of buckets between two reads. */
export const ACTIVITY_KEYS_PER_READ = 5000;
