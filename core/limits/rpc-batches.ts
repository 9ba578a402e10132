// Limits of JSON-RPC batches: part of core/limits.ts (which re-exports this file), kept apart so that no
// file of limits outgrows the house rule; every number still lives under core/limits.

// ---- JSON-RPC batches (api/rpc/json-rpc.ts) -------------------------------------------------
/** Calls of one batch run at most this many at a time, so one batch cannot hog the engine. */
export const RPC_BATCH_CONCURRENCY = 4;
