// Test-only preload for test/daemons/process-exit.test.ts, loaded into the real service
// (node --import tsx --import ./test/support/crash-trigger.ts api/server/main.ts), so the service's
// own code has no crash hook. On SIGUSR2 it does what CRASH_TRIGGER names, after starting
// a long engine statement on a session of its own when CRASH_ENGINE_BUSY=1 (the engine
// working in a thread-pool thread, as while a heavy query is answered).
//  - heap:   serialise until V8's heap is exhausted (the review's JsonStringify death);
//  - throw:  an exception nobody catches;
//  - reject: a promise rejection nobody handles;
//  - stall:  a busy loop: the event loop never runs again;
//  - none:   only the engine statement.
import { Session } from 'chdb';

process.on('SIGUSR2', () => {
  if (process.env.CRASH_ENGINE_BUSY === '1') {
    // The same data directory as the service's sessions: a second session of the open engine.
    const session = new Session(process.env.DATA_DIR!);
    session.queryAsync('SELECT count() FROM numbers(10000000000000) SETTINGS max_threads = 1', { format: 'CSV' }).catch(() => undefined);
  }
  setTimeout(act, 500);
});

function act(): void {
  switch (process.env.CRASH_TRIGGER) {
    case 'heap': {
      const rows = Array.from({ length: 1000 }, (_, i) => ({ signature: `sig-${i}`.repeat(8), slot: i, success: true }));
      const kept: string[] = [];
      for (;;) kept.push(JSON.stringify(rows));
    }
    case 'throw':
      throw new Error('crash-trigger: an exception nobody catches');
    case 'reject':
      void Promise.reject(new Error('crash-trigger: a rejection nobody handles'));
      return;
    case 'stall':
      for (;;);
    default:
      return;
  }
}
