// Limits of batches of calls in one request, whatever the door (JSON-RPC and MCP batches).

/** Most calls one JSON-RPC batch may carry (DESIGN section 4); a larger batch is refused whole. */
export const RPC_MAX_BATCH = 100;

// ---- Batches of calls in one request (api/services/answers/answer-batch.ts) ---------------------------

/** Members of one batch run at most this many at a time, so one batch cannot hog the engine. */
export const BATCH_CONCURRENCY = 4;

/**
 * Bytes reserved for a member before it runs, when the batch has that much left: its statements'
 * results are capped at it (the engine's max_result_bytes) and its answer must fit it. A member
 * whose answer is larger is run again, once, with what the batch has left once the members
 * before it are done. 1 MiB holds a default page of records (about 40 KB) many times over, so
 * only the largest pages pay a second run, and a plan's answer memory (PLAN_ANSWER_MEMORY_BYTES)
 * holds dozens of members in flight.
 */
export const BATCH_MEMBER_FIRST_BYTES = 1024 * 1024;

/**
 * Bytes of the door's answer budget set aside for each member's envelope or refusal (the error
 * text a member gets when the budget is spent, its id and separators), so that a batch answer
 * whose members' answers fill the budget still fits it with every refusal.
 */
export const BATCH_MEMBER_ENVELOPE_BYTES = 512;
