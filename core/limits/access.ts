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
/** How often the in-process rate-limit store sweeps out windows that have passed. */
export const RATE_STORE_SWEEP_MS = 1000;
/** How long a window's counter outlives its window, so that a late request still finds it. */
export const RATE_WINDOW_GRACE_MS = 5_000;
/** At most one warning this often while Redis cannot be reached (requests go on, counted locally). */
export const REDIS_WARNING_INTERVAL_MS = 10_000;
/** Random bytes of a secret the service makes (an API key, an invitation, a session, its CSRF token): 256 bits. */
export const SECRET_BYTES = 32;
/** Days the operator's x402 report covers when no range is given. */
export const OPERATOR_REPORT_DEFAULT_DAYS = 30;
/** How long /metrics reuses one freshness read, however often Prometheus scrapes. */
export const METRICS_FRESHNESS_REUSE_MS = 5000;
/** A caller's value echoed in an x402 refusal (the 402's message and its PAYMENT-REQUIRED header). */
export const X402_ECHO_MAX_CHARS = 64;
/** The facilitator's or the payment library's own message, quoted in a refusal. */
export const X402_CAUSE_MAX_CHARS = 300;
