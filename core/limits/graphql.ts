// Limits of GraphQL requests and answers (docs/graphql.md, "Limits").

import { LIST_LIMITS } from './questions.ts';

const MiB = 1024 * 1024;

// ---- GraphQL (docs/graphql.md, "Limits") ---------------------------------------------------
/** Largest GraphQL document (the `query` text), in characters. */
export const GRAPHQL_MAX_DOCUMENT_CHARS = 16_384;
/** Most lexical tokens the parser reads before giving up (bounds parse work on hostile text). */
export const GRAPHQL_MAX_TOKENS = 4_000;
/** Characters of an unknown GraphiQL asset's name quoted back in its 404. */
export const GRAPHIQL_QUOTED_NAME_MAX_CHARS = 100;
/** Variable coercion errors reported before giving up on a document's variables. */
export const GRAPHQL_MAX_VARIABLE_ERRORS = 20;
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
export const GRAPHQL_ANSWER_CACHE_BYTES = 64 * MiB;
/** How long a remembered answer may be served again; a timer drops expired ones. */
export const GRAPHQL_ANSWER_CACHE_TTL_MS = 2000;
/** Items (records, groups, points) up to which a GraphQL answer is serialised in one piece
 *  rather than streamed in chunks: a few milliseconds of the event loop, and the common
 *  answer (stats, a page of groups) skips the stream's turns. */
export const GRAPHQL_ONE_PIECE_ANSWER_ITEMS = 2_000;

/** GraphQL: bytes kept back for `errors` and `extensions` when fields are measured against the answer budget. */
export const GRAPHQL_ANSWER_TAIL_RESERVE_BYTES = 16 * 1024;
/** GraphQL: entries of the parsed-document cache; the oldest goes past it. */
export const GRAPHQL_DOCUMENT_CACHE_ENTRIES = 500;
/** Tokens read of a document that is only priced (x402): a longer one stops the read early,
 *  so pricing costs no more than this; execution applies GRAPHQL_MAX_TOKENS in its own words. */
export const GRAPHQL_SCAN_MAX_TOKENS = 10_000;

/** GraphQL's Int is a signed 32-bit integer: a whole number that may pass this is a Float in the SDL (exact to 2^53). */
export const GRAPHQL_INT_MAX = 2 ** 31 - 1;
