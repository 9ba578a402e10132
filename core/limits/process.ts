// Limits of the process's life (crash means exit; docs/reliability.md, "A crash ends the process").

// ---- Process life (crash means exit; docs/reliability.md, "A crash ends the process") ----
/**
 * The main thread's event loop not running for this long means the process is stuck (a
 * fatal signal held by the engine's handler, a busy loop): a watchdog thread ends it with
 * SIGKILL so its supervisor restarts it. Far above any legitimate block (the event-loop
 * lag p99 of the soak stays under 100 ms; engine work runs off the main thread).
 */
export const PROCESS_STALL_EXIT_MS = 30_000;
/** A watchdog's check interval: a quarter of the period it watches, between these bounds
 *  (often enough to act within the period, seldom enough to cost nothing). */
export const CHECK_INTERVAL_MIN_MS = 50;
export const CHECK_INTERVAL_MAX_MS = 1000;
export const checkIntervalOf = (periodMs: number): number => Math.max(CHECK_INTERVAL_MIN_MS, Math.min(CHECK_INTERVAL_MAX_MS, Math.floor(periodMs / 4)));
/** The engine's lowest thread priority (nice 19): client SQL and exports yield the CPU to serving. */
export const ENGINE_LOWEST_PRIORITY = 19;
