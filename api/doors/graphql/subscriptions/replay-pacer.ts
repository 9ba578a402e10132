// The pace of replays (a reconnect's events, sent from the replay log): one allowance of
// STREAM_REPLAY_EVENTS_PER_TURN events per turn of the event loop for all the process's
// streams together, handed out in the order streams asked. A replay's events are all queued
// at once, so without it every replaying stream took its own STREAM_EVENTS_PER_TURN each
// turn: 32 replays from 16 free keys held each turn of the loop for ~1,000 events, and another
// key's /health waited 1.45 s (p99). With it, a turn costs what 32 events cost however many
// replays run, and one replay alone still goes at that pace.
import { STREAM_REPLAY_EVENTS_PER_TURN } from '../../../../core/limits/streams.ts';

export class ReplayPacer {
  private left: number;
  private readonly waiting: (() => void)[] = [];
  private armed = false;

  constructor(private readonly perTurn = STREAM_REPLAY_EVENTS_PER_TURN) {
    this.left = perTurn;
  }

  /** Resolves when one more replayed event may be handed out: at once while this turn's allowance lasts, else in a later turn, behind those already waiting. */
  take(): Promise<void> {
    this.arm();
    if (this.left > 0 && this.waiting.length === 0) {
      this.left -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** The allowance is renewed by an immediate: after the loop's I/O, once per turn. */
  private arm(): void {
    if (this.armed) return;
    this.armed = true;
    setImmediate(() => this.turn());
  }

  private turn(): void {
    this.armed = false;
    this.left = this.perTurn;
    while (this.left > 0 && this.waiting.length > 0) {
      this.left -= 1;
      this.waiting.shift()!();
    }
    if (this.waiting.length > 0) this.arm();
  }
}
