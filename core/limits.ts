// Limits that guard the service against hostile or careless input, defined once and
// shared by every interface (docs/json-rpc.md and docs/rest-and-sql.md list them).

import { MCP_CARRY_FACTOR } from './limits/mcp-and-user-metrics.ts';

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

/** Longest page token or cursor any interface accepts (JSON-RPC paginationToken, GraphQL
 *  pagination.after), in characters. Tokens this service writes are far shorter; a group
 *  cursor carries its group's keys (an error message among them), hence the headroom. */
export const PAGE_TOKEN_MAX_CHARS = 1024;

/** Not in the SPEC: caps that keep one call's SQL parameters bounded. */
export const FILTER_LIST_MAX = 100;
export const SIGNATURE_LIST_MAX = 1_000;

/** Most time buckets one activity or time-series answer may hold (10,000 hours is about 14 months). */
export const MAX_ACTIVITY_BUCKETS = 10_000;
/** Hourly buckets per day of a time series' range (its bucket count is days x this). */
export const HOURS_PER_DAY = 24;
/** Most points of one time-series answer (buckets x series x metrics); each series has at
 *  most MAX_ACTIVITY_BUCKETS buckets, like every activity answer. */
export const MAX_SERIES_POINTS = 100_000;


/** SQL: the largest LIMIT, the LIMIT appended when absent, the longest query text. */
export const SQL_MAX_LIMIT = 10_000;
export const SQL_DEFAULT_LIMIT = 1_000;
export const SQL_MAX_LENGTH = 100_000;
/** SQL time-out (SPEC), also the bound on any one analytics answer by default, and on each
 *  statement of an export job (a job runs many; none may run longer than a client query). */
export const SQL_TIMEOUT_SECONDS = 30;

/**
 * Bytes of the disk holding export files that exports leave free (EXPORT_INGEST_RESERVE_BYTES):
 * export files together stay below the disk's free space minus this, so ingest (often on
 * the same disk) and the engine's merges keep room however full the export budget is.
 */
export const EXPORT_INGEST_RESERVE_BYTES = 2 * 1024 * MiB;

// ---- SQL join pricing (docs/rest-and-sql.md, "Cost model"): what a join produces is
// estimated before it runs, from key statistics measured on the engine.

/** Rows read per table to measure a join key (the most rows sharing one value) or an array column's longest array. */
export const SQL_JOIN_SAMPLE_ROWS = 1_000_000;
/** How long one measurement is reused before it is taken again (data grows; its shape changes slowly). */
export const SQL_JOIN_STATS_TTL_MS = 10 * 60_000;
/** New measurements one query may cause (each a bounded read on the client's own slot); past them a key is priced at the worst case. */
export const SQL_JOIN_MEASUREMENTS_PER_QUERY = 4;
/**
 * A key that identifies rows or nearly (signature: the instructions of one transaction) keeps
 * the sample's most-repeated count as the table grows: its distinct values are at least
 * SQL_JOIN_DISTINCT_KEY_SHARE of the sample and no value repeats more than
 * SQL_JOIN_LOCAL_REPEAT_MAX times. Any other key (success, protocol_name, a fee many records
 * share) has its most common value's share of the sample scaled to the table's rows.
 */
export const SQL_JOIN_DISTINCT_KEY_SHARE = 0.1;
export const SQL_JOIN_LOCAL_REPEAT_MAX = 64;
/** Most measurements kept at once (a few numbers each); past it the oldest goes. */
export const SQL_JOIN_STATS_MAX_ENTRIES = 1_000;
// Rows of the right side one join may hold in memory: PLAN_JOIN_ROWS (core/plans.ts), per plan.

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
/** Events one stream takes from its queue before it lets the event loop turn (I/O, other streams, /health run between). */
export const STREAM_EVENTS_PER_TURN = 32;
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
/** `pagination.first`: default and maximum (a larger value is refused, never shrunk); the
 *  figures are LIST_LIMITS.graphqlFirst, named here for the modules that import them so. */
export const GRAPHQL_DEFAULT_FIRST = LIST_LIMITS.graphqlFirst.default;
export const GRAPHQL_MAX_FIRST = LIST_LIMITS.graphqlFirst.max;
/** Longest a GraphQL request may run before it is answered with a time-out error. */
export const GRAPHQL_TIMEOUT_MS = 30_000;
/** Largest GraphQL request body (bytes). */
export const GRAPHQL_BODY_LIMIT_BYTES = 64 * 1024;
/** Longest errorPattern, in characters. */
export const GRAPHQL_MAX_PATTERN_CHARS = 200;

// ---- GraphQL answer budget (docs/graphql.md, "Limits") ------------------------------------

/**
 * Byte budget of one GraphQL answer, UTF-8 as sent. A top-level field whose part would take
 * the answer past it answers null with a QUERY_TOO_COMPLEX error at its path (the fields
 * before it keep theirs), as JSON-RPC answers the calls of a batch past its budget.
 */
export const GRAPHQL_RESPONSE_BUDGET_BYTES = 16 * MiB;
/**
 * Most items one document may ask for over all its top-level fields (aliases included):
 * records or groups of a page (pagination.first), time-series points (buckets x metrics x
 * series), protocolStats entries. Checked before execution from what the arguments say;
 * where the series count is known only once the data is read, the points are counted as
 * each field answers. Bounds the answer's size and the time graphql-js spends completing it
 * (one block of the event loop): 50,000 points took about 100 ms.
 */
export const GRAPHQL_MAX_DOCUMENT_POINTS = 50_000;
/**
 * Most field selections in one document, counting each fragment spread as the fields it
 * brings (so a fragment spread twice counts twice): GraphiQL's introspection query is about
 * 470. Checked right after parsing, before validation, with the next limit.
 */
export const GRAPHQL_MAX_SELECTIONS = 1_000;
/**
 * Most times one response name may be selected in one selection set (its fragments
 * included). graphql-js's overlapping-fields rule compares every pair of them: 1,500
 * identical fields held the event loop 70-260 ms before it gave up with "Validation aborted".
 */
export const GRAPHQL_MAX_SAME_NAME = 10;
/** Bytes of the remembered answers of identical GraphQL queries, all keys together (the oldest go first). */
export const GRAPHQL_MEMO_BUDGET_BYTES = 64 * MiB;
/** How long a remembered answer may be served again; a timer drops expired ones. */
export const GRAPHQL_MEMO_TTL_MS = 2000;
/** Items (records, groups, points) up to which a GraphQL answer is serialised in one piece
 *  rather than streamed in chunks: a few milliseconds of the event loop, and the common
 *  answer (stats, a page of groups) skips the stream's turns. */
export const GRAPHQL_ONE_PIECE_ANSWER_ITEMS = 2_000;
/** Bytes serialised between two turns of the event loop when an answer is written out. */
export const ANSWER_CHUNK_BYTES = 64 * 1024;
// ---- One request budget (core/budget.ts): what differs by door ------------------------------
// Plan figures (rows read, join rows, memory) are in core/plans.ts; these are per door.

/** The doors a request can come through; each has its answer budget and wall time. */
export const DOORS = ['rpc', 'rest', 'sql', 'graphql', 'mcp', 'stream', 'export', 'download', 'operator'] as const;
export type Door = (typeof DOORS)[number];

/**
 * Bytes one answer may carry, per door. Streams (one event at a time, bounded by
 * STREAM_MAX_QUEUED_EVENTS), export jobs (files, bounded by their quotas), file downloads
 * (the file as written) and operator calls have no answer budget of this kind.
 */
export const ANSWER_BUDGET_BYTES: Readonly<Record<Door, number>> = Object.freeze({
  rpc: RPC_RESPONSE_BUDGET_BYTES,
  rest: REST_RESPONSE_BUDGET_BYTES,
  sql: SQL_RESPONSE_BUDGET_BYTES,
  graphql: GRAPHQL_RESPONSE_BUDGET_BYTES,
  // An MCP tool call answers what its JSON-RPC method (or run_sql, what /v1/query) answers,
  // carried as a JSON string: its content has JSON-RPC's budget, its bytes on the wire up to
  // MCP_CARRY_FACTOR times that.
  mcp: MCP_CARRY_FACTOR * Math.max(RPC_RESPONSE_BUDGET_BYTES, SQL_RESPONSE_BUDGET_BYTES),
  stream: Infinity,
  export: Infinity,
  download: Infinity,
  operator: Infinity,
});

/**
 * Wall time of one whole request, per door (ms): no statement of the request starts or runs
 * past it (each also stops at SQL_TIMEOUT_SECONDS). SQL allows a wait for a session
 * (up to the time-out) before its run; a JSON-RPC batch runs up to RPC_MAX_BATCH calls.
 * Streams and export jobs are long-lived: their statements are bounded one by one.
 */
export const DOOR_WALL_MS: Readonly<Record<Door, number>> = Object.freeze({
  rpc: 60_000,
  rest: 30_000,
  sql: 2 * SQL_TIMEOUT_SECONDS * 1000,
  graphql: GRAPHQL_TIMEOUT_MS,
  mcp: 2 * SQL_TIMEOUT_SECONDS * 1000,
  stream: Infinity,
  export: Infinity,
  download: Infinity,
  operator: Infinity,
});

// ---- Process life (crash means exit; docs/reliability.md, "A crash ends the process") ----

/**
 * The main thread's event loop not running for this long means the process is stuck (a
 * fatal signal held by the engine's handler, a busy loop): a watchdog thread ends it with
 * SIGKILL so its supervisor restarts it. Far above any legitimate block (the event-loop
 * lag p99 of the soak stays under 100 ms; engine work runs off the main thread).
 */
export const PROCESS_STALL_EXIT_MS = 30_000;

// ---- Service internals: figures that bound work or memory but no client asks about ------
// (test/house-rules.test.ts keeps every such number here or in core/plans.ts).

/** Wrong operator or metrics tokens allowed per client address per one-minute window. */
export const OPERATOR_TOKEN_FAILURES_PER_MINUTE = 20;
/** A request admitted with an in-flight slot is released this long after its client went
 *  away even if its answer was never produced: a path that skips onSend (none is known)
 *  must not hold a slot for good. Answers normally end long before. */
export const ABANDONED_SLOT_RELEASE_MS = 5 * 60_000;
/** A key's name as the operator API takes it (characters); the dashboard's is KEY_NAME_MAX_LENGTH. */
export const OPERATOR_KEY_NAME_MAX_LENGTH = 200;
/** Rejected lines POST /admin/ingest lists one by one; the rest are counted, and all are in the
 *  dead-letter table with their reasons (a million listed errors were 46 MB of answer). */
export const INGEST_MAX_LISTED_ERRORS = 1000;
/** How long a claim on an email holds while its dashboard account is being created. */
export const EMAIL_CLAIM_MS = 60_000;
/** What the dashboard's usage page shows per granularity: bucket size and how far back it looks. */
export const USAGE_VIEWS = Object.freeze({
  minute: { bucketMs: 60_000, spanMs: 60 * 60_000 },
  hour: { bucketMs: 3_600_000, spanMs: 48 * 3_600_000 },
  day: { bucketMs: 86_400_000, spanMs: 30 * 86_400_000 },
} as const);

/** Export jobs: a job interrupted by this many restarts is failed instead of started again. */
export const EXPORT_MAX_ATTEMPTS = 3;
/** Export jobs per page of a listing, by default and at most. */
export const EXPORT_LIST_DEFAULT = 20;
export const EXPORT_LIST_MAX = 100;
/** Rows read to estimate a filter export's bytes per row before its first chunk. */
export const EXPORT_SAMPLE_ROWS = 1000;

// ---- Export ML options: stratified sampling and preprocessing (issue 27) ----------------
/** STRATIFIED sampling: distinct values of the stratum column one export may have (a free-text
 *  column with more is refused: stratification is for categories). */
export const EXPORT_STRATA_MAX = 1000;
/** STRATIFIED sampling: hash buckets per stratum of the first pass that finds each stratum's
 *  threshold (2^12: the second pass reads one bucket, about 1/4096 of a stratum's rows). */
export const EXPORT_STRATUM_BUCKET_BITS = 12;
/** oneHotEncode: distinct values a column may have in one export (one indicator column each). */
export const EXPORT_ONE_HOT_MAX_CATEGORIES = 64;
/** oneHotEncode: longest indicator column name (`protocol_name_jupiter_v6`), characters. */
export const EXPORT_ONE_HOT_NAME_MAX_CHARS = 64;

/** GraphQL: bytes kept back for `errors` and `extensions` when fields are measured against the answer budget. */
export const GRAPHQL_ANSWER_TAIL_RESERVE_BYTES = 16 * 1024;
/** GraphQL: entries of the parsed-document cache; the oldest goes past it. */
export const GRAPHQL_DOCUMENT_CACHE_ENTRIES = 500;
/** Live streams: how far back each ingest-journal read looks again, so that a batch committed
 *  late, with an earlier time than one already read, is still found. */
export const STREAM_JOURNAL_LOOKBACK_MS = 5_000;

/** SQL: the longest engine message a client is shown; real ones are a few hundred characters
 *  (a 20 MB value quoted whole made a 20 MB error body). */
export const ENGINE_MESSAGE_MAX_CHARS = 1_000;
/** A JSON body refused for a "__proto__" key: the longest path to it its message names (the tail of a deeper one). */
export const JSON_KEY_PATH_MAX_CHARS = 200;
/** A request still unanswered this long after its door's wall time (DOOR_WALL_MS) is answered
 *  with the time-out error, whatever its handler is waiting for (a promise that never settles). */
export const REQUEST_DEADLINE_GRACE_MS = 5_000;
/** Ingest: signatures per store lookup of the de-duplication step over a server (embedded reads them all at once). */
export const INGEST_LOOKUP_CHUNK = 5000;
/** Ingest: records parsed between two yields to the event loop while a batch is being stored. */
export const INGEST_PARSE_SLICE = 500;
/** Ingest: records per chunk sent to a parse worker, and chunks in flight per ready worker. */
export const INGEST_PARSE_CHUNK = 2000;
export const INGEST_CHUNKS_PER_WORKER = 2;
/** SQL: whole seconds a caller refused a session should wait (about one query's share). */
export const SQL_RETRY_AFTER_SECONDS = 2;
/** SQL: bytes per budgeted row for max_bytes_to_read (wide rows, accounts and logs, are ~600 bytes). */
export const SQL_BYTES_PER_BUDGET_ROW = 1024;
/** SQL: the engine's own limits while it parses a client query for the guard (EXPLAIN AST). */
export const SQL_PARSE_LIMITS = Object.freeze({ maxParserDepth: 300, maxAstDepth: 300, maxAstElements: 100_000, seconds: 5 });
/** SQL: the largest parse-tree dump read back (a 100000-character query of ordinary shape stays far below). */
export const SQL_MAX_AST_DUMP_BYTES = 4 * MiB;
/** SQL join pricing: longest one key measurement runs (seconds); past it, it keeps what it read. */
export const SQL_JOIN_MEASURE_SECONDS = 2;
/** SQL join pricing: rows one key measurement may read before it stops and keeps what it read (twice the sample). */
export const SQL_JOIN_MEASURE_MAX_ROWS = 2 * SQL_JOIN_SAMPLE_ROWS;

// Limits of newer features, each in a file of its own under core/limits/.
export * from './limits/open-questions.ts';
export * from './limits/sql-executions.ts';
export * from './limits/stream-replay.ts';
export * from './limits/analytics-reads.ts';
export * from './limits/answer-batches.ts';
export * from './limits/demo-data.ts';
export * from './limits/ingest-pipeline.ts';
export * from './limits/mcp-and-user-metrics.ts';
export * from './limits/browser-clients.ts';
export * from './limits/serving-speed.ts';
export * from './limits/point-reads.ts';
export * from './limits/view-repair.ts';
export * from './limits/migrations.ts';
export * from './limits/refusal-logs.ts';
export * from './limits/http-parameters.ts';
export * from './limits/record-id.ts';
