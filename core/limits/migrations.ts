// Limits of the migration runner (warehouse/migrate.ts): part of core/limits.ts (which
// re-exports this file).

// ---- Inserts begun before a new view (warehouse/earlier-inserts.ts) ----
/** How often the runner looks whether inserts begun before a new view have ended. */
export const MIGRATION_INSERT_POLL_MS = 200;
/** How long it waits for them before it stops the migration, in words (a re-run resumes it). */
export const MIGRATION_INSERT_WAIT_MS = 10 * 60_000;
