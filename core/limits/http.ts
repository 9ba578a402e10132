// Limits of HTTP requests as they arrive: bodies, headers, URIs, path parameters, JSON nesting,
// deadlines, and browser clients (CORS, compression, caching).

const MiB = 1024 * 1024;

/** Largest request body of a route that sets none of its own (bytes). */
export const HTTP_BODY_LIMIT_BYTES = 1 * MiB;
/** Largest JSON-RPC request body (bytes). */
export const RPC_BODY_LIMIT_BYTES = 1 * MiB;

/** Deepest nesting of a JSON-RPC call's params (arrays and objects). The deepest legitimate
 *  params (options.filters.blockTime.gte) are 4 levels; a bound keeps validation and error
 *  rendering, which recurse, far from the stack limit. */
export const MAX_PARAMS_DEPTH = 32;

/**
 * Largest request line plus headers (bytes) the HTTP parser accepts; past it: 431 (414 when
 * the request line alone fills it, see HTTP_MAX_URI_BYTES). Node's
 * default, stated here so the 431 message and the parser's limit cannot drift apart.
 */
export const HTTP_MAX_HEADER_BYTES = 16 * 1024;
/** ANONYMOUS_RATE_LIMIT of a service under a contract fuzz run (scripts/fuzz/): schemathesis
 *  repeats authenticated requests without the key, which must be answered 401, not 429. */
export const FUZZ_ANONYMOUS_RATE_LIMIT = 1_000_000;
/** Longest request URI (path and query string) answered; longer ones get 414. */
export const HTTP_MAX_URI_BYTES = 8 * 1024;

/**
 * How long an idle keep-alive connection is kept open between requests. Longer than the
 * 60 s idle time-out of common load balancers and reverse proxies, so the proxy, not this
 * service, closes an idle connection and never sends a request on one being closed.
 */
export const HTTP_KEEP_ALIVE_TIMEOUT_MS = 72_000;
/** A JSON body refused for a "__proto__" key: the longest path to it its message names (the tail of a deeper one). */
export const JSON_KEY_PATH_MAX_CHARS = 200;
/** A request still unanswered this long after its door's wall time (DOOR_WALL_MS) is answered
 *  with the time-out error, whatever its handler is waiting for (a promise that never settles). */
export const REQUEST_DEADLINE_GRACE_MS = 5_000;

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

/**
 * Longest path parameter, in characters as JSON Schema's maxLength counts them (Unicode code
 * points): longer is 414. Every path parameter of the OpenAPI document declares it as maxLength.
 */
export const HTTP_MAX_PATH_PARAM_CHARS = 100;
/**
 * The router's own bound on a path parameter, in UTF-16 code units (how JavaScript strings count):
 * a code point takes at most two, so no parameter within HTTP_MAX_PATH_PARAM_CHARS is refused by
 * the router; one past that is refused by code points (api/services/access/http-protocol.ts).
 */
export const HTTP_MAX_PATH_PARAM_UTF16_UNITS = 2 * HTTP_MAX_PATH_PARAM_CHARS;
// ---- Client text quoted back in a message, and digests in headers ----
/** Characters of a request's path quoted in a 405's message. */
export const QUOTED_PATH_MAX_CHARS = 200;
/** Characters of a refused Content-Type quoted in its 415. */
export const QUOTED_HEADER_MAX_CHARS = 100;
/** Codings of one Accept-Encoding header read (a longer list is cut, not refused). */
export const ACCEPT_ENCODING_MAX_ITEMS = 20;
/** Base64url characters of a sha256 digest kept in an ETag (27: 162 bits). */
export const ETAG_DIGEST_CHARS = 27;
/** Bytes of a refused request's start read to tell a request line from garbage. */
export const REQUEST_LINE_PEEK_BYTES = 16;
/** Characters of a refused Content-Encoding or query parameter quoted in its message. */
export const QUOTED_TOKEN_MAX_CHARS = 50;
/** Characters of a bad query-parameter value quoted in its 400 (users' Prometheus door). */
export const QUOTED_VALUE_MAX_CHARS = 80;
/** Characters of an unknown query parameter's name quoted in its 400 (users' Prometheus door). */
export const QUOTED_PARAM_MAX_CHARS = 60;

/** The longest Host header a name could be: a DNS name (253 characters) plus `:` and a port. */
export const HOST_HEADER_MAX_CHARS = 253 + 6;
