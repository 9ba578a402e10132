// Limits of the coalesced point reads of tx_by_signature_v3 by signature or signature key
// (issue 25: getTransaction and the records of address pages past memory;
// api/analytics/signature-lookup.ts): part of core/limits.ts (which re-exports this file).

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
