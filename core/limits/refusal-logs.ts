// Limits of the log lines of refused requests (api/access/refusal-log.ts): part of core/limits.ts
// (which re-exports this file), kept apart so that no file of limits outgrows the house rule.

/**
 * Seconds over which the refusals (429) of one API key, or of one address without a valid key,
 * make one log line: the first refusal is logged, the rest counted and logged as one line per
 * window while they go on. A flood of refused requests (66,054 in 20 s) made two lines each.
 */
export const REFUSAL_LOG_WINDOW_SECONDS = 10;
/** Keys and addresses whose refusals are counted at once; refusals of others past it are
 *  counted together, in one line per window. */
export const REFUSAL_LOG_MAX_SUBJECTS = 10_000;
