// One statement at a time on a chDB session, each answer its own. chDB leaves what a failed
// statement wrote (a timeout, a result over its limit) on the session, and hands it to the
// session's next statement as the start of that one's answer: a usage query answered the rows
// of an abandoned listing that had timed out. So a session's statements run in turn (the
// engine runs them one at a time anyway), each until the engine ends it (an abort only stops
// the caller's wait), and after a failure a throw-away statement takes the leftovers.
import type { Session } from 'chdb';

/** What takes a failed statement's leftovers: its answer is thrown away. */
const DRAIN = 'SELECT 1';

export class SessionTurns {
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly session: Session) {}

  /** Run `work` on the session once the statements before it ended; `signal` ends the wait, not the work. */
  run<T>(work: (session: Session) => Promise<T>, signal?: AbortSignal): Promise<T> {
    let started = false;
    const done = this.tail.then(() => {
      if (signal?.aborted) throw aborted();
      started = true;
      return work(this.session);
    });
    this.tail = done.then(
      () => undefined,
      async () => {
        if (started)
          await this.session.queryAsync(DRAIN, { format: 'TSV' }).then(
            () => undefined,
            () => undefined,
          );
      },
    );
    return signal === undefined ? done : untilAborted(done, signal);
  }
}

/** As chDB words an aborted wait. */
const aborted = (): Error =>
  Object.assign(new Error('Query aborted (the underlying computation may still run to completion in the background)'), { name: 'ChdbAbortError' });

/** `work`'s outcome, or a rejection once `signal` aborts first (the work runs on). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(aborted());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      work.catch(() => undefined);
      reject(aborted());
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
