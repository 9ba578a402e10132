// Limits of client SQL (POST /v1/query, executions): query text, rows, time-out, join pricing,
// the guard's parse, and asynchronous executions.

const MiB = 1024 * 1024;

/** SQL: the largest LIMIT, the LIMIT appended when absent, the longest query text. */
export const SQL_MAX_LIMIT = 10_000;
export const SQL_DEFAULT_LIMIT = 1_000;
export const SQL_MAX_LENGTH = 100_000;
/** Characters of a query's first word quoted when it is not SELECT or WITH. */
export const SQL_QUOTED_WORD_MAX_CHARS = 40;
/** SQL time-out (SPEC), also the bound on any one analytics answer by default, and on each
 *  statement of an export job (a job runs many; none may run longer than a client query). */
export const SQL_TIMEOUT_SECONDS = 30;

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

/** SQL: the longest engine message a client is shown; real ones are a few hundred characters
 *  (a 20 MB value quoted whole made a 20 MB error body). */
export const ENGINE_MESSAGE_MAX_CHARS = 1_000;
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

// ---- SQL executions (issue 26: POST /v1/query/executions; api/services/exports/executions.ts) ----------

/** Rows one results page may carry (and the page size when none is asked). */
export const EXECUTION_PAGE_MAX_ROWS = 10_000;
/** Hours an execution's results are kept after it finishes; then EXPIRED and its files deleted. */
export const EXECUTION_RESULT_TTL_HOURS = 24;
/** How often finished executions are checked for expiry (also checked whenever one is read). */
export const EXECUTION_SWEEP_MS = 60_000;
/** Longest results cursor or execution id read (a longer one is refused before it is decoded). */
export const EXECUTION_TOKEN_MAX_CHARS = 512;
/**
 * Polls of SQL executions' states (GET /v1/query/executions/{id}) one API key may make per
 * minute, apart from its plan's request window: a poll reads only memory, so it is cheap, but
 * not free (one free key made 3,941 polls a second). 120 lets a client poll two executions
 * once a second each; past it: 429 with Retry-After.
 */
export const EXECUTION_POLLS_PER_MINUTE = 120;
/** Characters at the end of an engine message searched for its error code. */
export const ENGINE_MESSAGE_TAIL_CHARS = 200;
/** How long the names of the engine's tables are reused (they change only with migrations). */
export const REAL_TABLES_REUSE_MS = 60_000;
/** The engine's own bounds on a client query's parse tree and subqueries while it runs. */
export const SQL_RUN_AST_LIMITS = Object.freeze({ maxAstDepth: 500, maxAstElements: 100_000, maxExpandedAstElements: 500_000, maxSubqueryDepth: 50 });
/** Characters looked at for a dollar-quote tag ($tag$). */
export const DOLLAR_TAG_MAX_CHARS = 64;
