// Limits of the serving path's own memory (issue 23, serving speed): part of core/limits.ts (which
// re-exports this file), kept apart so that no file of limits outgrows the house rule.

// ---- Compiled questions kept with their cache keys (api/analytics/analytics.ts) ----
/** Questions whose compiled statement and result-cache key are kept, so that a cached answer
 *  compiles nothing. Compiling depends only on the question (not on data), so entries never go
 *  stale; the bound only stops callers choosing keys (every distinct range is one) from filling
 *  memory. Past it the memo is emptied and fills again. */
export const COMPILED_QUESTIONS_KEPT = 2_000;
