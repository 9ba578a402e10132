// Limits of open questions: part of core/limits.ts (which re-exports this file), kept apart so that no file
// of limits outgrows the house rule; every number still lives under core/limits.

// ---- Question breadth (issue 27): range filters of open questions ---------------------------
/** The largest bound each record-column range filter takes: the column's own type's maximum
 *  (slot and fee are UInt64: bounds arrive as the BigInt scalar's exact decimal text). */
export const QUESTION_RANGE_MAX = Object.freeze({
  slot: 2n ** 64n - 1n,
  fee: 2n ** 64n - 1n,
  computeUnits: 4_294_967_295n,
  accountsCount: 65_535n,
});
/** GraphQL's BigInt scalar (api/graphql/bigint-scalar.ts): the integers it takes, -2^63 (Int64's
 *  least) to 2^64-1 (UInt64's most); a field may take fewer (the range filters take no negatives). */
export const BIGINT_SCALAR_MIN = -(2n ** 63n);
export const BIGINT_SCALAR_MAX = 2n ** 64n - 1n;
/** filters.logMessage: the longest substring searched for. */
export const QUESTION_MAX_LOG_MESSAGE_CHARS = 200;
