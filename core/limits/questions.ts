// Limits of questions and their answers' shape: the instants the store holds, rows per page and
// paging windows, lists in one call, time buckets and series points, open questions' filters, the
// cost of reads, and coalesced point reads (SPEC "Limits"; docs/json-rpc.md, docs/rest-and-sql.md).

/** block_time is stored as DateTime (UInt32 Unix seconds): the only instants the store can hold. */
export const MIN_BLOCK_TIME = 0;
export const MAX_BLOCK_TIME = 4_294_967_295; // 2106-02-07T06:28:15Z
/** The calendar days holding those instants (UTC), for the date parameters of REST. */
export const MIN_BLOCK_DATE = '1970-01-01';
export const MAX_BLOCK_DATE = '2106-02-07';

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

// ---- Answer cost (api/analytics/cost/analytics-cost.ts): the fixed part of every answer's score ----
/** Row-equivalents charged per statement whatever it reads (an engine round trip). */
export const ANSWER_COST_PER_STATEMENT = 1_000;
/** Row-equivalents charged per percentile metric (merging t-digest states). */
export const ANSWER_COST_PER_PERCENTILE = 1_000;

// ---- Activity bucket reads (api/analytics/presets/activity-buckets.ts; live streams' changed buckets) ----
/** Bucket keys per statement: bound parameters travel in the URL to a server (1 MiB limit), and a
 *  backfill can touch tens of thousands of buckets between two reads. */
export const ACTIVITY_KEYS_PER_READ = 5000;

// ---- Question breadth (issue 27): range filters of open questions ---------------------------
/** The largest bound each record-column range filter takes: the column's own type's maximum
 *  (slot and fee are UInt64: bounds arrive as the BigInt scalar's exact decimal text). */
export const QUESTION_RANGE_MAX = Object.freeze({
  slot: 2n ** 64n - 1n,
  fee: 2n ** 64n - 1n,
  computeUnits: 4_294_967_295n,
  accountsCount: 65_535n,
});
/** GraphQL's BigInt scalar (api/doors/graphql/bigint-scalar.ts): the integers it takes, -2^63 (Int64's
 *  least) to 2^64-1 (UInt64's most); a field may take fewer (the range filters take no negatives). */
export const BIGINT_SCALAR_MIN = -(2n ** 63n);
export const BIGINT_SCALAR_MAX = 2n ** 64n - 1n;
/** filters.logMessage: the longest substring searched for. */
export const QUESTION_MAX_LOG_MESSAGE_CHARS = 200;

// ---- Batch size (bench/RESULTS.md, "Storage diet") ----
/** Signatures or signature keys in one coalesced read (the query text grows with each). */
export const RECORD_LOOKUP_MAX_KEYS = 1000;

// ---- Point-read batches in flight at once (bench/RESULTS.md, "A record in one column") ----
/** Batches of point reads in flight at once, each on a chDB session of its own over the same
 *  data directory (embedded). Two since migration 090: with a record in one column a key
 *  costs the engine about half what it did, so a second batch keeps the second core busy
 *  while the first waits, rather than doubling the per-query floors. Interleaved runs at 50
 *  connections: at 100M (3 parts) 0.29-0.45 of bare against 0.18-0.32 with one; at 10M
 *  0.39-0.44 against 0.34-0.42. (Before 090 one batch did as well or better on these cores.) */
export const POINT_READ_BATCHES_IN_FLIGHT = 2;

// ---- Gathering the next batch (bench/RESULTS.md, "Point reads: where a getTransaction's time goes") ----
/** Turns of the event loop a session waits, after its batch is read, before it takes the
 *  next: requests already received are parsed in those turns and join that batch. At 50
 *  connections: 1 turn ~190, 2 turns ~170 µs of engine CPU per answer (none: ~230); a
 *  bounded wait for the queue to refill (≤ 2 ms) gained nothing. */
export const POINT_READ_GATHER_TURNS = 2;

// ---- The primary-key search (bench/RESULTS.md, "The hottest address's page: where its time goes") ----
/**
 * merge_tree_coarse_index_granularity of a point read: how many subranges the primary-key
 * search splits a mark range into at each step (the engine's default is 8). A read of ~100
 * random keys spends ~3 ms of its ~11 in that search; 2 cut the whole read by ~10 % for 100
 * keys and a little for 1 or 20 (bench/address-page-reads.ts).
 */
export const POINT_READ_COARSE_INDEX_GRANULARITY = 2;
/** Rates are percentages (SPEC: successRate 0-100): a ratio measure's scale. */
export const PERCENT = 100;
// ---- The signed tokens of listings ----
/** Base64url characters of a listing's fingerprint (72 bits) and of a page token's MAC (132 bits). */
export const LISTING_FINGERPRINT_CHARS = 12;
export const PAGE_TOKEN_MAC_CHARS = 22;
/** Characters of a bad signature key quoted in its error. */
export const QUOTED_KEY_MAX_CHARS = 40;
/** Characters of a refused number's text quoted back (an inexact JSON number, a BigInt out of range). */
export const QUOTED_NUMBER_MAX_CHARS = 40;
/** Characters of a refused list-filter value (a protocol, program id, signature, instruction type) quoted back. */
export const QUOTED_FILTER_VALUE_MAX_CHARS = 100;
/** Longest instruction type, in characters. */
export const INSTRUCTION_TYPE_MAX_CHARS = 128;
/** Characters of a refused parameter value quoted back in its error (JSON-RPC, MCP, declared requests). */
export const QUOTED_PARAM_VALUE_MAX_CHARS = 80;
/** Characters of a protocol name quoted back when no such protocol is known: a hostile name is not echoed whole. */
export const QUOTED_PROTOCOL_MAX_CHARS = 100;
