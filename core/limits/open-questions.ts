// Limits of open questions: part of core/limits.ts (which re-exports this file), kept apart so that no file
// of limits outgrows the house rule; every number still lives under core/limits.

// ---- Question breadth (issue 27): range filters of open questions ---------------------------
/** The largest bound each record-column range filter takes: the column's own type's maximum
 *  (slot and fee are UInt64 but clients send JSON numbers: bounds stay safe integers). */
export const QUESTION_RANGE_MAX = Object.freeze({
  slot: Number.MAX_SAFE_INTEGER,
  fee: Number.MAX_SAFE_INTEGER,
  computeUnits: 4_294_967_295,
  accountsCount: 65_535,
});
/** filters.logMessage: the longest substring searched for. */
export const QUESTION_MAX_LOG_MESSAGE_CHARS = 200;
