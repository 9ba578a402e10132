// One subscriber's feed of the live hub (live-activity.ts): its bounded queue of events, the
// replayed ones first (a reconnect's), handed out as an async iterator.
import { STREAM_EVENTS_PER_TURN } from '../../../../core/limits/streams.ts';
import type { BucketSize } from '../../../analytics/presets/activity-buckets.ts';
import type { Gap, LoggedEvent } from './event-log.ts';
import { ReplayPacer } from './replay-pacer.ts';

export interface SubscribeOptions {
  /** Protocols to follow; undefined: every visible one. */
  protocols: readonly string[] | undefined;
  size: BucketSize;
  /** Most figures left over from earlier writes when the next write's arrive; past it the feed ends with onOverflow. */
  maxQueued: number;
  /** Called once when the queue overflowed; the feed has ended. */
  onOverflow(queued: number): void;
}

/** One subscriber's events (figures with their ids), as an async iterator (what a GraphQL subscribe resolver returns). */
export class Feed implements AsyncIterableIterator<LoggedEvent> {
  private readonly queue: LoggedEvent[] = [];
  /** Replayed events still at the front of the queue: they are not a backlog of a slow reader. */
  private replayLeft = 0;
  private waiting: ((r: IteratorResult<LoggedEvent>) => void) | undefined;
  private ended = false;
  private sinceYield = 0;
  readonly protocols: ReadonlySet<string> | undefined;
  /** Set when the client came back after events it can no longer be sent (event-log.ts). */
  gap: Gap | undefined;
  /** Whether the event next() last handed out was replayed (which the key pays for: replay-meter.ts). */
  replayed = false;

  constructor(
    readonly options: SubscribeOptions,
    private readonly onEnd: (feed: Feed) => void,
    /** The process's pace of replayed events (the hub's, shared by every feed). */
    private readonly pacer = new ReplayPacer(),
  ) {
    this.protocols = options.protocols === undefined ? undefined : new Set(options.protocols);
  }

  wants(protocol: string): boolean {
    return this.protocols === undefined || this.protocols.has(protocol);
  }

  /**
   * Hand over one read's figures. A read's figures are always taken whole (one write may
   * change thousands of buckets; a consumer cannot take them faster than they are pushed);
   * what bounds the queue is the backlog from earlier reads: a consumer still holding
   * `maxQueued` or more when the next read arrives is too slow, and its feed ends.
   */
  deliver(figures: readonly LoggedEvent[]): void {
    if (this.ended || figures.length === 0) return;
    if (this.queue.length - this.replayLeft >= this.options.maxQueued) {
      const queued = this.queue.length - this.replayLeft;
      this.end();
      this.options.onOverflow(queued);
      return;
    }
    for (const f of figures) {
      if (this.waiting) {
        const w = this.waiting;
        this.waiting = undefined;
        w({ value: f, done: false });
      } else this.queue.push(f);
    }
  }

  /** What the client missed, before anything live (the feed was just made: nothing is queued). */
  replay(events: readonly LoggedEvent[]): void {
    for (const e of events) if (this.wants(e.figures.protocolName) && e.figures.size === this.options.size) this.queue.push(e);
    this.replayLeft = this.queue.length;
  }

  get queued(): number {
    return this.queue.length;
  }

  next(): Promise<IteratorResult<LoggedEvent>> {
    const f = this.queue.shift();
    this.replayed = false;
    if (f !== undefined && this.replayLeft > 0) {
      this.replayLeft -= 1;
      this.replayed = true;
      // Replayed events go at the process's replay pace, shared by every stream (replay-pacer.ts).
      return this.pacer.take().then(() => (this.ended ? { value: undefined, done: true } : { value: f, done: false }));
    }
    if (f !== undefined) {
      // Events taken from a full queue resolve at once, so one stream's thousands of events
      // (a write that touched thousands of buckets), each executed and written, would chain
      // as microtasks and hold the event loop for seconds across streams: every
      // STREAM_EVENTS_PER_TURN events, the next one waits for a turn of the loop.
      if (++this.sinceYield < STREAM_EVENTS_PER_TURN) return Promise.resolve({ value: f, done: false });
      this.sinceYield = 0;
      return new Promise((resolve) => setImmediate(() => resolve({ value: f, done: false })));
    }
    this.sinceYield = 0;
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.waiting = resolve));
  }

  return(): Promise<IteratorResult<LoggedEvent>> {
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.queue.length = 0;
    this.waiting?.({ value: undefined, done: true });
    this.waiting = undefined;
    this.onEnd(this);
  }
}
