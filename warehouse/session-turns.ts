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
  private waitingOrRunning = 0;

  constructor(private readonly session: Session) {}

  /** Statements given to this session and not yet ended (a drain counts with its statement): how busy it is. */
  get busy(): number {
    return this.waitingOrRunning;
  }

  /** Settles once every statement given so far (and its drain) has ended: a session closed
   *  under a running statement keeps the engine's data directory bound, and the next session
   *  over another directory cannot open. */
  ended(): Promise<void> {
    return this.tail;
  }

  /** Run `work` on the session once the statements before it ended; `signal` ends the wait, not the work. */
  run<T>(work: (session: Session) => Promise<T>, signal?: AbortSignal): Promise<T> {
    let started = false;
    this.waitingOrRunning += 1;
    const done = this.tail.then(() => {
      if (signal?.aborted) throw aborted();
      started = true;
      return work(this.session);
    });
    this.tail = done
      .then(
        () => undefined,
        async () => {
          if (started)
            await this.session.queryAsync(DRAIN, { format: 'TSV' }).then(
              () => undefined,
              () => undefined,
            );
        },
      )
      .finally(() => {
        this.waitingOrRunning -= 1;
      });
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
