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
/**
 * Polls of SQL executions' states (GET /v1/query/executions/{id}) one API key may make per
 * minute, apart from its plan's request window: a poll reads only memory, so it is cheap, but
 * not free (one free key made 3,941 polls a second). 120 lets a client poll two executions
 * once a second each; past it: 429 with Retry-After.
 */
export const EXECUTION_POLLS_PER_MINUTE = 120;
