// Limits of access control: operator tokens, request slots, operator key names, refusal logs.

/** Wrong operator or metrics tokens allowed per client address per one-minute window. */
export const OPERATOR_TOKEN_FAILURES_PER_MINUTE = 20;
/** A request admitted with an in-flight slot is released this long after its client went
 *  away even if its answer was never produced: a path that skips onSend (none is known)
 *  must not hold a slot for good. Answers normally end long before. */
export const ABANDONED_SLOT_RELEASE_MS = 5 * 60_000;
/** A key's name as the operator API takes it (characters); the dashboard's is KEY_NAME_MAX_LENGTH. */
export const OPERATOR_KEY_NAME_MAX_LENGTH = 200;

/**
 * Seconds over which the refusals (429) of one API key, or of one address without a valid key,
 * make one log line: the first refusal is logged, the rest counted and logged as one line per
 * window while they go on. A flood of refused requests (66,054 in 20 s) made two lines each.
 */
export const REFUSAL_LOG_WINDOW_SECONDS = 10;
/** Keys and addresses whose refusals are counted at once; refusals of others past it are
 *  counted together, in one line per window. */
export const REFUSAL_LOG_MAX_SUBJECTS = 10_000;
