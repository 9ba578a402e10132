// Limits of export jobs (docs/exports.md, "Limits"): disk reserve, attempts, listings, samples,
// and the ML options (stratified sampling, one-hot encoding).

const MiB = 1024 * 1024;

/**
 * Bytes of the disk holding export files that exports leave free (EXPORT_INGEST_RESERVE_BYTES):
 * export files together stay below the disk's free space minus this, so ingest (often on
 * the same disk) and the engine's merges keep room however full the export budget is.
 */
export const EXPORT_INGEST_RESERVE_BYTES = 2 * 1024 * MiB;

/** Seconds a key at its plan's cap of queued and running export jobs is asked to wait (about a small job's run). */
export const EXPORT_CAP_RETRY_AFTER_SECONDS = 30;
/** Export jobs: a job interrupted by this many restarts is failed instead of started again. */
export const EXPORT_MAX_ATTEMPTS = 3;
/** Seeds are 32-bit unsigned integers (cityHash64's seed argument, and exact in every JSON). */
export const MAX_SEED = 2 ** 32 - 1;
/** Export jobs per page of a listing, by default and at most. */
export const EXPORT_LIST_DEFAULT = 20;
export const EXPORT_LIST_MAX = 100;
/** Rows read to estimate a filter export's bytes per row before its first chunk. */
export const EXPORT_SAMPLE_ROWS = 1000;

// ---- Export ML options: stratified sampling and preprocessing (issue 27) ----------------
/** STRATIFIED sampling: distinct values of the stratum column one export may have (a free-text
 *  column with more is refused: stratification is for categories). */
export const EXPORT_STRATA_MAX = 1000;
/** STRATIFIED sampling: hash buckets per stratum of the first pass that finds each stratum's
 *  threshold (2^12: the second pass reads one bucket, about 1/4096 of a stratum's rows). */
export const EXPORT_STRATUM_BUCKET_BITS = 12;
/** oneHotEncode: distinct values a column may have in one export (one indicator column each). */
export const EXPORT_ONE_HOT_MAX_CATEGORIES = 64;
/** oneHotEncode: longest indicator column name (`protocol_name_jupiter_v6`), characters. */
export const EXPORT_ONE_HOT_NAME_MAX_CHARS = 64;
/** Characters of an unknown field's name quoted in its 400. */
export const QUOTED_FIELD_MAX_CHARS = 50;
/** Retry-After of a key whose export files fill its quota when none of them expires. */
export const EXPORT_QUOTA_RETRY_AFTER_SECONDS = 60;
/** Characters of the engine's message kept in a failed export's error. */
export const EXPORT_ENGINE_MESSAGE_MAX_CHARS = 500;
/** A job's progress is a percentage. */
export const PROGRESS_MAX_PERCENT = 100;
/** How often expired export files and jobs are swept out. */
export const EXPORT_SWEEP_MS = 60_000;
/** Random bytes of an export job's id. */
export const EXPORT_ID_BYTES = 12;
