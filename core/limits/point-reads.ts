// Limits of the coalesced point reads of tx_by_signature_v2 (issue 25, getTransaction past
// memory; api/analytics/signature-lookup.ts): part of core/limits.ts (which re-exports this file).

// ---- Point-read batches in flight at once (bench/RESULTS.md, "Point reads: where a getTransaction's time goes") ----
/** Batches of point reads in flight at once, each on a chDB session of its own over the same
 *  data directory (embedded). One: two halve each batch, and a batch's engine CPU is mostly its
 *  per-query floor, so two in flight cost ~50 % more engine CPU per answer and answered fewer
 *  requests on 2 shared cores, in memory and under a cap of a third of the store. */
export const POINT_READ_BATCHES_IN_FLIGHT = 1;
