// Limits that guard the service against hostile or careless input, defined once and
// shared by every interface (docs/json-rpc.md and docs/rest-and-sql.md list them).

/** block_time is stored as DateTime (UInt32 Unix seconds): the only instants the store can hold. */
export const MIN_BLOCK_TIME = 0;
export const MAX_BLOCK_TIME = 4_294_967_295; // 2106-02-07T06:28:15Z
/** The calendar days holding those instants (UTC), for the date parameters of REST. */
export const MIN_BLOCK_DATE = '1970-01-01';
export const MAX_BLOCK_DATE = '2106-02-07';

const MiB = 1024 * 1024;

/** Largest JSON-RPC request body (bytes). */
export const RPC_BODY_LIMIT_BYTES = 1 * MiB;

/** Deepest nesting of a JSON-RPC call's params (arrays and objects). The deepest legitimate
 *  params (options.filters.blockTime.gte) are 4 levels; a bound keeps validation and error
 *  rendering, which recurse, far from the stack limit. */
export const MAX_PARAMS_DEPTH = 32;

/**
 * Byte budget of one JSON-RPC response (a single answer or a whole batch), UTF-8 as sent.
 * Results are kept in request order until the budget is used up; calls past it are
 * answered with an error instead of their result.
 */
export const RPC_RESPONSE_BUDGET_BYTES = 32 * MiB;

/** Byte budget of one REST response; a larger answer is a 400 asking for a smaller page. */
export const REST_RESPONSE_BUDGET_BYTES = 16 * MiB;

/** Bytes of a string as UTF-8, skipping the count when it cannot matter (each UTF-16 unit is at most 3 bytes). */
export function fitsBudget(text: string, budget: number): boolean {
  return text.length * 3 <= budget || Buffer.byteLength(text, 'utf8') <= budget;
}

/** "32 MiB" for a byte count that is a whole number of MiB, else "N bytes". */
export function formatBytes(bytes: number): string {
  return bytes >= MiB && bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes} bytes`;
}

/**
 * Bytes one SQL answer may carry, JSON body or CSV stream (the engine's max_result_bytes,
 * and the JSON text checked before it is parsed). Past it: 400 naming the budget.
 */
export const SQL_RESPONSE_BUDGET_BYTES = 32 * MiB;

/** Most calls one JSON-RPC batch may carry (DESIGN section 4); a larger batch is refused whole. */
export const RPC_MAX_BATCH = 100;

/**
 * Largest request line plus headers (bytes) the HTTP parser accepts; past it: 431. Node's
 * default, stated here so the 431 message and the parser's limit cannot drift apart.
 */
export const HTTP_MAX_HEADER_BYTES = 16 * 1024;

/**
 * How long an idle keep-alive connection is kept open between requests. Longer than the
 * 60 s idle time-out of common load balancers and reverse proxies, so the proxy, not this
 * service, closes an idle connection and never sends a request on one being closed.
 */
export const HTTP_KEEP_ALIVE_TIMEOUT_MS = 72_000;

// ---- SPEC "Limits": rows per answer. Every interface reads them here; docs quote them.

/** Rows per page of each list answer: the default when none is asked, and the most allowed
 *  (above it the request is refused, never silently shrunk). */
export const LIST_LIMITS = {
  /** JSON-RPC getTransactions / getTransactionsForAddress. */
  transactions: { default: 100, max: 10_000 },
  topProtocols: { default: 10, max: 100 },
  instructionTypes: { default: 100, max: 1_000 },
  failedTransactions: { default: 100, max: 1_000 },
  /** REST /api/v1/transactions `limit`. */
  restTransactions: { default: 100, max: 1_000 },
  /** GraphQL `pagination.first` (DESIGN section 4). */
  graphqlFirst: { default: 100, max: 1_000 },
} as const;

/** REST offset paging reaches this far (offset + limit); past it, narrow the date range. */
export const REST_OFFSET_WINDOW = 10_000;

/** Not in the SPEC: caps that keep one call's SQL parameters bounded. */
export const FILTER_LIST_MAX = 100;
export const SIGNATURE_LIST_MAX = 1_000;

/** Most time buckets one activity or time-series answer may hold (10,000 hours is about 14 months). */
export const MAX_ACTIVITY_BUCKETS = 10_000;

/** SQL: the largest LIMIT, the LIMIT appended when absent, the longest query text. */
export const SQL_MAX_LIMIT = 10_000;
export const SQL_DEFAULT_LIMIT = 1_000;
export const SQL_MAX_LENGTH = 100_000;
/** SQL time-out (SPEC), also the bound on any one analytics answer by default. */
export const SQL_TIMEOUT_SECONDS = 30;

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

// ---- Live GraphQL streams (/graphql/stream; docs/graphql-subscriptions.md) -------------
// Open streams per key: PLAN_STREAMS (core/plans.ts, with the other plan figures).

/** Events of earlier writes one stream may still have waiting for its client when the next write's arrive; at it the client is too slow and the stream is closed with an error event. (One write's events are always queued whole: a backfill can touch thousands of buckets at once.) */
export const STREAM_MAX_QUEUED_EVENTS = 1000;
/** A comment line this often keeps proxies and the idle-connection time-out from closing a quiet stream. */
export const STREAM_HEARTBEAT_MS = 15_000;
/** How often the keys of open streams are checked again (besides every key-change announcement): revocation closes them within 1 s. */
export const STREAM_KEY_CHECK_MS = 250;
/** After the closing error event, a client that does not read it is disconnected this much later. */
export const STREAM_CLOSE_GRACE_MS = 5000;
/** Largest subscription document (characters). */
export const STREAM_MAX_DOCUMENT_CHARS = 8 * 1024;
/** Most fields one subscription may select (aliases included): each is sent with every event. */
export const STREAM_MAX_SELECTIONS = 64;
/** Most names in protocolActivity(protocols: [...]). */
export const STREAM_MAX_PROTOCOLS = 100;

// ---- GraphQL (docs/graphql.md, "Limits") ---------------------------------------------------

/** Largest GraphQL document (the `query` text), in characters. */
export const GRAPHQL_MAX_DOCUMENT_CHARS = 16_384;
/** Most lexical tokens the parser reads before giving up (bounds parse work on hostile text). */
export const GRAPHQL_MAX_TOKENS = 4_000;
/** Deepest field nesting of an operation; introspection fields (`__schema`, `__type`) are exempt. */
export const GRAPHQL_MAX_DEPTH = 8;
/** Most aliased fields in one document (each top-level field also counts against the rate limit). */
export const GRAPHQL_MAX_ALIASES = 10;
/** Most top-level fields one operation may ask for. */
export const GRAPHQL_MAX_ROOT_FIELDS = 10;
/** `pagination.first`: default and maximum (a larger value is refused, never shrunk). */
export const GRAPHQL_DEFAULT_FIRST = 100;
export const GRAPHQL_MAX_FIRST = 1_000;
/** Longest a GraphQL request may run before it is answered with a time-out error. */
export const GRAPHQL_TIMEOUT_MS = 30_000;
/** Largest GraphQL request body (bytes). */
export const GRAPHQL_BODY_LIMIT_BYTES = 64 * 1024;
/** Longest errorPattern, in characters. */
export const GRAPHQL_MAX_PATTERN_CHARS = 200;

// ---- Process life (crash means exit; docs/reliability.md, "A crash ends the process") ----

/**
 * The main thread's event loop not running for this long means the process is stuck (a
 * fatal signal held by the engine's handler, a busy loop): a watchdog thread ends it with
 * SIGKILL so its supervisor restarts it. Far above any legitimate block (the event-loop
 * lag p99 of the soak stays under 100 ms; engine work runs off the main thread).
 */
export const PROCESS_STALL_EXIT_MS = 30_000;
