// Limits of browser clients (CORS, compression, answer caching): part of core/limits.ts (which
// re-exports this file), kept apart so that no file of limits outgrows the house rule.

// ---- Browser clients: CORS, compression, answer caching (docs/browser-clients.md) ----------
/** How long a browser may reuse a CORS preflight answer before asking again (seconds). */
export const CORS_PREFLIGHT_MAX_AGE_SECONDS = 600;
/** How long a cached aggregate stays valid without new data in this process: the bound on how
 *  stale an answer can be after another process wrote (api/analytics/result-cache.ts). */
export const RESULT_CACHE_TTL_MS = 2000;
/** Cache-Control max-age of a GET answer: the result cache's own staleness bound, no longer. */
export const ANSWER_MAX_AGE_SECONDS = Math.ceil(RESULT_CACHE_TTL_MS / 1000);
/** Answers shorter than this are sent uncompressed: the coding's framing costs more than it saves. */
export const COMPRESS_MIN_BYTES = 1024;
/** zlib level of gzip answers (6 is zlib's default: most of level 9's saving at a fraction of its CPU). */
export const COMPRESS_GZIP_LEVEL = 6;
/** Brotli quality of answers: 4 compresses JSON about as well as gzip 6 at lower CPU; 11 is far too slow for live answers. */
export const COMPRESS_BROTLI_QUALITY = 4;
