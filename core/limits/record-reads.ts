// Limits of the coalesced record reads (issue 25, the hottest address's pages; branch hot-addr):
// part of core/limits.ts, which re-exports this file. Measured in bench/RESULTS.md,
// "The hottest address's page: where its time goes".

/**
 * merge_tree_coarse_index_granularity of a point read of tx_by_signature_v2: how many
 * subranges the primary-key search splits a mark range into at each step (the engine's
 * default is 8). A read of ~100 random keys spends ~3 ms of its ~11 in that search; 2 cut
 * the whole read by ~10 % for 100 keys and a little for 1 or 20 (address-page-reads.ts).
 */
export const RECORD_READ_COARSE_INDEX_GRANULARITY = 2;
