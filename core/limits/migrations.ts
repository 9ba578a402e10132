// Limits of the migration runner (warehouse/migrate.ts): part of core/limits.ts (which
// re-exports this file).

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
