// Limits of view repair (warehouse/view-repair.ts): part of core/limits.ts (which
// re-exports this file).

// ---- Deleting the records by signature of repaired buckets (migration 090) ----
/**
 * Signature keys bound to one DELETE of tx_by_signature_v3's rows in the repaired buckets.
 * The keys go as a parameter (a mutation of a replicated table may not hold a subquery),
 * and the server transport sends parameters in the URL: 10,000 keys are ~210 KB of the
 * server's 1 MiB http_max_uri_size. A bucket with more keys is deleted in several statements.
 */
export const VIEW_REPAIR_DELETE_KEYS = 10_000;
