// Limits of the dashboard's accounts (docs/dashboard.md), stated to the user where they apply.

// ---- Dashboard accounts (docs/dashboard.md). Stated to the user where they apply.
/** Password length, in characters: at least 12 (the rule the sign-up page states), at most
 *  256 (a bound on what is hashed; scrypt's cost does not grow with length, the body's does). */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;
/** The longest email address (RFC 5321's path limit). */
export const EMAIL_MAX_LENGTH = 254;
/** A key's name and free-text environment label, in characters. */
export const KEY_NAME_MAX_LENGTH = 100;
export const KEY_ENVIRONMENT_MAX_LENGTH = 32;
/** Keys one account may hold, revoked ones included (a revoked key stays listed). */
export const KEYS_PER_ACCOUNT_MAX = 50;
/** Largest body of a dashboard JSON call (sign-up, sign-in, key creation). */
export const DASHBOARD_BODY_LIMIT_BYTES = 16 * 1024;
/** How long an operator's invitation can be accepted. */
export const INVITE_TTL_MS = 7 * 86_400_000;
/** Window of the sign-in attempt limits (per account, per client address). */
export const SIGNIN_WINDOW_MS = 15 * 60_000;
/** How long a claim on an email holds while its dashboard account is being created. */
export const EMAIL_CLAIM_MS = 60_000;
/** What the dashboard's usage page shows per granularity: bucket size and how far back it looks. */
export const USAGE_VIEWS = Object.freeze({
  minute: { bucketMs: 60_000, spanMs: 60 * 60_000 },
  hour: { bucketMs: 3_600_000, spanMs: 48 * 3_600_000 },
  day: { bucketMs: 86_400_000, spanMs: 30 * 86_400_000 },
} as const);
/** Cookies of one Cookie header read; the CSRF header's longest value. */
export const COOKIES_READ_MAX = 200;
export const CSRF_TOKEN_MAX_CHARS = 200;
/** How long the usage page reuses the last flush of usage counts. */
export const USAGE_FLUSH_REUSE_MS = 1000;
/** Methods the usage page lists (busiest, costliest). */
export const USAGE_TOP_METHODS = 20;
/** How far past now an operator's usage range ends when none is given (a clock a little ahead). */
export const USAGE_RANGE_END_SLACK_MS = 60_000;
/** scrypt's cost parameters and key length: the stored hash's format, which verifyPassword bounds itself. */
export const SCRYPT_PARAMS = Object.freeze({ N: 2 ** 15, r: 8, p: 1, keyLength: 64, saltBytes: 16 });
/** The stored scrypt parameters a sign-in still runs (weaker ones within reason): a stored value
 *  cannot make a sign-in allocate more than maxMemoryBytes or run for minutes. maxmem: scrypt
 *  needs 128 * N * r bytes; headroom gives it twice that (Node's 32 MiB default is exactly it). */
export const SCRYPT_BOUNDS = Object.freeze({ maxN: 2 ** 20, maxR: 32, maxP: 16, bytesPerNr: 128, maxMemoryBytes: 64 * 1024 * 1024, headroom: 2 });
