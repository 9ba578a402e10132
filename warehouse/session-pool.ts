// Several chDB sessions over one data directory, each running its own statements in turn.
// A failed statement's leftovers stay on its own session (bench/session-leftovers.ts: never
// another session's answer), so one session's turns keep answers correct while statements on
// other sessions run beside them: a slow statement no longer holds every quick one behind it.
// Sessions share the engine's tables and parts (an insert another session made is read once
// it ended); nothing the service runs keeps state on a session (no temporary tables, no SET).
import { Session } from 'chdb';
import { reclaimAbortSignal } from '../core/process-guard.ts';
import { SessionTurns } from './session-turns.ts';

interface Member {
  session: Session;
  turns: SessionTurns;
}

export class SessionPool {
  private readonly members: Member[] = [];

  /** `size` sessions at most; the first opens now, the others while all open ones are busy. */
  constructor(
    private readonly dataDir: string,
    private readonly size: number,
  ) {
    this.members.push(this.open());
  }

  /** The least busy session's turns (the first of equals), after opening another if all are busy and there is room. */
  turns(): SessionTurns {
    let best = this.members[0]!;
    for (const m of this.members) if (m.turns.busy < best.turns.busy) best = m;
    if (best.turns.busy > 0 && this.members.length < this.size) {
      best = this.open();
      this.members.push(best);
    }
    return best.turns;
  }

  /** Sessions open now (for tests and benches). */
  get opened(): number {
    return this.members.length;
  }

  /** Close every session once its statements have ended (SessionTurns.ended). */
  async close(): Promise<void> {
    await Promise.all(this.members.map((m) => m.turns.ended()));
    for (const m of this.members) m.session.close();
  }

  private open(): Member {
    const session = openSession(this.dataDir);
    return { session, turns: new SessionTurns(session) };
  }
}

/** A chDB session over `dataDir`. */
export function openSession(dataDir: string): Session {
  const session = new Session(dataDir);
  // Opening the engine installs its SIGABRT handler, which holds an aborting process for
  // 300 s (docs/reliability.md, "A crash ends the process"): take the signal back.
  reclaimAbortSignal();
  return session;
}
