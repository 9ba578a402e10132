// Limits of the warehouse's own work: the migration runner and view repair.

// ---- Inserts begun before a new view (warehouse/earlier-inserts.ts) ----
/** How often the runner looks whether inserts begun before a new view have ended. */
export const MIGRATION_INSERT_POLL_MS = 200;
/** How long it waits for them before it stops the migration, in words (a re-run resumes it). */
export const MIGRATION_INSERT_WAIT_MS = 10 * 60_000;

// ---- One migration runner at a time (warehouse/migration-lock.ts) ----
/** How long a runner's hold on the lock lasts without renewal: a runner that died holds it no longer. */
export const MIGRATION_LOCK_LEASE_MS = 60_000;
/** How often the holder renews its lease (several times a lease, so a slow renewal cannot lose it). */
export const MIGRATION_LOCK_RENEW_MS = 10_000;
/** How often a waiting runner looks at the lock. */
export const MIGRATION_LOCK_POLL_MS = 250;

// ---- Deleting keyed rows of repaired buckets (migrations 090, 110) ----
/**
 * Keys bound to one DELETE of a keyed target's rows in the repaired buckets (tx_by_rid's ids,
 * tx_rid_by_sig's "sig_key#instruction#rid" entries with their sig_keys). The keys go as a
 * parameter (a mutation of a replicated table may not hold a subquery), and the server
 * transport sends parameters in the URL: 10,000 entries and their keys are ~700 KB of the
 * server's 1 MiB http_max_uri_size. A bucket with more keys is deleted in several statements.
 */
export const VIEW_REPAIR_DELETE_KEYS = 10_000;

// ---- Serving sessions of one embedded warehouse (warehouse/session-pool.ts) ----
/**
 * chDB sessions one EmbeddedWarehouse spreads its statements over. Each session runs its own
 * statements in turn (a failed statement's leftovers stay on its session: session-turns.ts),
 * so more sessions let statements without bound parameters run at once: a quick statement sent
 * just after a slow one took 70-84 ms on one session, 5-15 ms on 2-4 (bench/RESULTS.md, "chDB
 * sessions: correct answers without head-of-line blocking"). One more than the 2 cores: two slow
 * statements leave a session to a quick one. Opened on demand, only while all are busy.
 */
export const SERVING_SESSIONS = 3;

// ---- The server transport (warehouse/server-warehouse.ts) ----
/** How long one HTTP request to a ClickHouse server may take before the client gives up; a
 *  serving statement ends far sooner (its own max_execution_time), so this bounds migrations and repairs. */
export const SERVER_REQUEST_TIMEOUT_MS = 60_000;

// ---- Messages the warehouse words for an operator ----
/** A statement quoted in an error about it (a migration the cluster layout cannot render). */
export const QUOTED_STATEMENT_MAX_CHARS = 80;
/** A registry value quoted in an integrity finding. */
export const QUOTED_REGISTRY_VALUE_MAX_CHARS = 60;
