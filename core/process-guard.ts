// Crash means exit (docs/reliability.md, "A crash ends the process"): a process that can no
// longer serve must die, promptly and visibly, so its supervisor restarts it.
//
// Three things stood in the way, all measured:
//  - the embedded engine (chDB) installs ClickHouse's fault handlers for SIGABRT, SIGSEGV,
//    SIGBUS, SIGILL, SIGFPE and SIGSYS when its first session opens. Its handler waits up to
//    300 + 3 s for a log thread that chDB does not run, then re-raises. V8 ends a heap
//    exhaustion with abort(), so an out-of-memory process sat 304 s on its port, deaf to
//    everything, SIGTERM included;
//  - process.exit() joins libuv's thread pool, where chDB runs its queries: it waits for a
//    running engine statement to finish (a forced exit waited minutes, measured);
//  - a main thread stuck for any other reason (a busy loop, a fault in native code) answers
//    no signal listener, so neither the shutdown deadline nor SIGTERM can end it.
import { writeSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { checkIntervalOf } from './limits/process.ts';
import { PINO_FATAL } from './logger.ts';

export interface ProcessGuardOptions {
  /** The main thread's event loop silent this long means stuck: SIGKILL (0 = no watchdog). */
  stallExitMs: number;
}

export interface ProcessGuard {
  /** Watch the event loop from a worker thread from now on (once serving: start-up may
   *  block the loop for long in the engine's synchronous open of a large store). */
  watchEventLoop(): void;
  /** Log why, then end the process at once: no wait for engine work, no cleanup. */
  exitNow(reason: string, err?: unknown): never;
}

/**
 * The last log line, pino's shape, written synchronously to stderr: the service's logger
 * writes asynchronously through the thread pool (the engine's statements may hold it), and
 * what is still queued dies with the process.
 */
function lastWords(fields: Record<string, unknown>, msg: string): void {
  try {
    writeSync(2, `${JSON.stringify({ level: PINO_FATAL, time: Date.now(), pid: process.pid, ...fields, msg })}\n`);
  } catch {
    // Nothing more can be said; dying matters more than saying so.
  }
}

/**
 * SIGKILL, not process.exit(1): exit waits for the engine's running statements (see the
 * top of this file), and no handler (the engine's included) can delay SIGKILL.
 */
function killNow(reason: string, err?: unknown): never {
  const error = err instanceof Error ? { type: err.name, message: err.message, stack: err.stack } : err;
  lastWords({ reason, err: error }, `fatal: ${reason}; the process ends now (SIGKILL)`);
  process.kill(process.pid, 'SIGKILL');
  // Not reached: SIGKILL to oneself is delivered before kill() returns.
  throw new Error('unreachable');
}

// An external SIGABRT while the loop runs: die of it as a process without the engine would.
// Removing the last listener gives the signal back its default action (libuv sets SIG_DFL).
function onAbortSignal(): void {
  lastWords({ signal: 'SIGABRT' }, 'fatal: SIGABRT received; the process ends now');
  process.removeListener('SIGABRT', onAbortSignal);
  process.kill(process.pid, 'SIGABRT');
}

/**
 * Take SIGABRT back from the engine; call after every engine session opens (chDB installs
 * its handlers then, and again when it reopens after all sessions closed). With a listener,
 * libuv's handler owns the signal: it only notes it and returns, and abort() (V8 out of
 * memory) then ends the process with the default action, as it would without the engine.
 * A no-op unless an entry point installed the guard.
 */
export function reclaimAbortSignal(): void {
  // Installed = the guard's listener is on the process (the signal is the process's, so is the mark).
  if (!process.listeners('SIGABRT').includes(onAbortSignal)) return;
  // Off and on again: libuv only calls sigaction when a signal's first listener starts.
  process.removeListener('SIGABRT', onAbortSignal);
  process.on('SIGABRT', onAbortSignal);
}

// The watchdog: a worker thread (its own event loop, alive while the main one is stuck)
// reads a counter the main thread bumps from a timer; unchanged for stallExitMs = stuck.
// Its source is evaluated on its own: what it needs comes in workerData, never by name.
const WATCHDOG_SOURCE = `
const { workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
const beats = new Int32Array(workerData.beats);
let seen = Atomics.load(beats, 0);
let since = Date.now();
setInterval(() => {
  const now = Date.now();
  const beat = Atomics.load(beats, 0);
  if (beat !== seen) { seen = beat; since = now; return; }
  if (now - since < workerData.stallExitMs) return;
  try {
    writeSync(2, JSON.stringify({ level: workerData.level, time: now, pid: workerData.pid, stalledMs: now - since,
      msg: 'fatal: the event loop has not run for ' + (now - since) + ' ms (PROCESS_STALL_EXIT_MS); the process ends now (SIGKILL)' }) + '\\n');
  } catch {}
  process.kill(workerData.pid, 'SIGKILL');
}, workerData.checkMs);
`;

/**
 * Install once, first thing in an entry point: fatal JavaScript errors end the process, and
 * SIGABRT is the process's own again after each engine session opens.
 */
export function installProcessGuard(options: ProcessGuardOptions): ProcessGuard {
  const { stallExitMs } = options;
  // An error nobody handled leaves state nobody knows: log it and end.
  process.on('uncaughtException', (err) => killNow('uncaught exception', err));
  process.on('unhandledRejection', (reason) => killNow('unhandled promise rejection', reason));
  process.on('SIGABRT', onAbortSignal);

  let watching = false;
  return {
    watchEventLoop() {
      if (watching || stallExitMs === 0) return;
      watching = true;
      const beats = new Int32Array(new SharedArrayBuffer(4));
      const checkMs = checkIntervalOf(stallExitMs);
      setInterval(() => Atomics.add(beats, 0, 1), checkMs).unref();
      const worker = new Worker(WATCHDOG_SOURCE, {
        eval: true,
        workerData: { beats: beats.buffer, stallExitMs, checkMs, pid: process.pid, level: PINO_FATAL },
      });
      // The watchdog must never be what keeps a finished process alive.
      worker.unref();
      worker.on('error', (err) => lastWords({ err: err.message }, 'the event-loop watchdog failed; a stuck process will not be ended'));
    },
    exitNow: (reason, err) => killNow(reason, err),
  };
}
