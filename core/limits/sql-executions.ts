// Limits of SQL executions: part of core/limits.ts (which re-exports this file), kept apart so that no file
// of limits outgrows the house rule; every number still lives under core/limits.

// ---- SQL executions (issue 26: POST /v1/query/executions; api/exports/executions.ts) ----------

/** Rows one results page may carry (and the page size when none is asked). */
export const EXECUTION_PAGE_MAX_ROWS = 10_000;
/** Hours an execution's results are kept after it finishes; then EXPIRED and its files deleted. */
export const EXECUTION_RESULT_TTL_HOURS = 24;
/** How often finished executions are checked for expiry (also checked whenever one is read). */
export const EXECUTION_SWEEP_MS = 60_000;
/** Longest results cursor or execution id read (a longer one is refused before it is decoded). */
export const EXECUTION_TOKEN_MAX_CHARS = 512;
