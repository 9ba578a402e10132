// Limits of the process's life (crash means exit; docs/reliability.md, "A crash ends the process").

// ---- Process life (crash means exit; docs/reliability.md, "A crash ends the process") ----
/**
 * The main thread's event loop not running for this long means the process is stuck (a
 * fatal signal held by the engine's handler, a busy loop): a watchdog thread ends it with
 * SIGKILL so its supervisor restarts it. Far above any legitimate block (the event-loop
 * lag p99 of the soak stays under 100 ms; engine work runs off the main thread).
 */
export const PROCESS_STALL_EXIT_MS = 30_000;
