// The source of protocolActivity: the pipeline reports the (protocol, hour) buckets each
// committed write changed; this hub reads those buckets' figures once (per bucket size
// anyone asked for), not once per subscriber, and hands each subscriber the ones it wants.
// While a read runs, further writes' buckets accumulate and are read together next, so a
// burst of writes costs one read per read-time, and 200 streams cost what one does.
// Each subscriber has a bounded queue: one whose backlog from earlier writes is still at
// its bound when the next write's figures arrive is told (onOverflow) and dropped, so a
// stalled client holds at most that bound plus one write's buckets, never an unbounded backlog.
import type { Logger } from '../../../core/logger.ts';
import type { ChangedBucket, CommittedChange, DataChangeObserver } from '../../../core/observers.ts';
import type { FinishedBatch } from '../../../warehouse/journal-reader.ts';
import type { BucketFigures, BucketKey, BucketSize } from '../../analytics/activity-buckets.ts';
import { STREAM_EVENTS_PER_TURN, STREAM_JOURNAL_LOOKBACK_MS, STREAM_REPLAY_MAX_EVENTS, STREAM_REPLAY_WINDOW_SECONDS } from '../../../core/limits.ts';
import { EventLog, type Gap, type LoggedEvent } from './event-log.ts';

/** What the hub reads through: the analytics facade's activityBuckets. */
export interface BucketReader {
  activityBuckets(keys: readonly BucketKey[], size: BucketSize): Promise<BucketFigures[]>;
}

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

  constructor(
    readonly options: SubscribeOptions,
    private readonly onEnd: (feed: Feed) => void,
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
    if (f !== undefined) {
      if (this.replayLeft > 0) this.replayLeft -= 1;
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

const HOUR = 3_600;
const DAY = 86_400;

/** Reads of the ingest journal, for writes other processes made. */
export interface JournalSource {
  clock(): Promise<number>;
  finishedSince(sinceMs: number): Promise<FinishedBatch[]>;
}


export class LiveActivity implements DataChangeObserver {
  private readonly feeds = new Set<Feed>();
  private pending = new Map<string, ChangedBucket>();
  private reading: Promise<void> | undefined;
  /** Reads made (per bucket size), for tests and the benchmark: one per write, not per subscriber. */
  reads = 0;
  /** Journal batches already handled (told by this process's pipeline, or read), with when. */
  private readonly handled = new Map<string, number>();
  private journalSince: number | undefined;
  /** Where tailing began: batches finished earlier are history, not news. */
  private journalStart = 0;
  private tailTimer: NodeJS.Timeout | undefined;
  private tailing = false;
  /** Every event made, kept for the replay window (resumable streams). */
  readonly events: EventLog;
  /** Per bucket size, when its last subscriber left: its events are still made for the window after, for it to come back to. */
  private readonly left: Record<BucketSize, number> = { hour: -Infinity, day: -Infinity };
  private readonly windowMs: number;

  constructor(
    private readonly reader: BucketReader,
    private readonly log: Logger,
    replay: { windowSeconds?: number; maxEvents?: number } = {},
    private readonly now: () => number = Date.now,
  ) {
    this.windowMs = (replay.windowSeconds ?? STREAM_REPLAY_WINDOW_SECONDS) * 1000;
    this.events = new EventLog(this.windowMs, replay.maxEvents ?? STREAM_REPLAY_MAX_EVENTS, now);
  }

  /**
   * A subscriber's feed. With `lastEventId` (a reconnect), the events after it still kept are
   * queued first, then the live ones: in one synchronous step, so none is missed or sent twice;
   * when some are no longer kept the feed carries the gap instead, and only live events follow.
   */
  subscribe(options: SubscribeOptions, lastEventId?: string): Feed {
    const feed = new Feed(options, (f) => {
      this.feeds.delete(f);
      this.left[f.options.size] = this.now();
    });
    if (lastEventId !== undefined) {
      const missed = this.events.since(lastEventId);
      if (missed.gap !== undefined) feed.gap = missed.gap;
      else feed.replay(missed.events);
    }
    this.feeds.add(feed);
    return feed;
  }

  /** Events of `size` are made: someone listens, or listened within the replay window. */
  private making(size: BucketSize): boolean {
    return this.now() - this.left[size] < this.windowMs || [...this.feeds].some((f) => f.options.size === size);
  }

  get subscribers(): number {
    return this.feeds.size;
  }

  dataChanged(change: CommittedChange): void {
    if (this.feeds.size === 0 && !this.making('hour') && !this.making('day')) return;
    if (change.batchId !== undefined) this.handled.set(change.batchId, Date.now());
    for (const b of change.buckets) this.pending.set(`${b.protocolName}#${b.hourStart}`, b);
    this.schedule();
  }

  /**
   * Also learn writes of other processes (the standalone ingest process, other replicas)
   * from the ingest journal, every `everyMs` while anyone is subscribed: one small read of
   * the journal per period, however many streams.
   */
  tailJournal(source: JournalSource, everyMs: number): void {
    this.tailTimer = setInterval(() => void this.pollJournal(source), everyMs);
    this.tailTimer.unref();
  }

  stop(): void {
    clearInterval(this.tailTimer);
  }

  async pollJournal(source: JournalSource): Promise<void> {
    if (this.tailing) return;
    if (this.feeds.size === 0 && !this.making('hour') && !this.making('day')) {
      // Nobody listens, nor will come back for replay: forget the position, so a later subscriber starts from then, not from a backlog.
      this.journalSince = undefined;
      this.handled.clear();
      return;
    }
    this.tailing = true;
    try {
      if (this.journalSince === undefined) {
        this.journalSince = this.journalStart = await source.clock();
        return;
      }
      const batches = await source.finishedSince(this.journalSince - STREAM_JOURNAL_LOOKBACK_MS);
      const buckets: ChangedBucket[] = [];
      for (const b of batches) {
        this.journalSince = Math.max(this.journalSince, b.at);
        if (b.at < this.journalStart || this.handled.has(b.batchId)) continue;
        this.handled.set(b.batchId, Date.now());
        buckets.push(...b.buckets);
      }
      const old = Date.now() - 4 * STREAM_JOURNAL_LOOKBACK_MS;
      for (const [id, at] of this.handled) if (at < old) this.handled.delete(id);
      if (buckets.length > 0) this.dataChanged({ buckets, newestBlockTimes: [], committedAt: Date.now() });
    } catch (err) {
      this.log.warn({ err }, 'reading the ingest journal for live subscriptions failed; trying again next period');
    } finally {
      this.tailing = false;
    }
  }

  /** Resolves once every change reported so far has been read and handed out (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.reading) await this.reading;
  }

  private schedule(): void {
    if (this.reading !== undefined || this.pending.size === 0) return;
    const changed = [...this.pending.values()];
    this.pending = new Map();
    this.reading = this.readAndFanOut(changed)
      // A failed read loses these updates only: the next write to a bucket sends its full totals again.
      .catch((err: unknown) => this.log.warn({ err, buckets: changed.length }, 'live activity read failed; those updates are skipped'))
      .finally(() => {
        this.reading = undefined;
        this.schedule();
      });
  }

  private async readAndFanOut(changed: readonly ChangedBucket[]): Promise<void> {
    const feeds = [...this.feeds];
    // Sizes someone listens to first: a size read only for the replay window never delays a live event.
    const sizes = (['hour', 'day'] as const).slice().sort((a, b) => Number(!feeds.some((f) => f.options.size === a)) - Number(!feeds.some((f) => f.options.size === b)));
    for (const size of sizes) {
      const takers = feeds.filter((f) => f.options.size === size);
      // Within the replay window every visible protocol's events are made (a subscriber may
      // come back for them); otherwise only what the open streams want.
      const keeping = this.now() - this.left[size] < this.windowMs;
      if (takers.length === 0 && !keeping) continue;
      const all = keeping || takers.some((f) => f.protocols === undefined);
      const wanted = new Set(takers.flatMap((f) => [...(f.protocols ?? [])]));
      const relevant = changed.filter((b) => all || wanted.has(b.protocolName));
      if (relevant.length === 0) continue;
      const keys = new Map<string, BucketKey>();
      for (const b of relevant) {
        const start = size === 'day' ? b.hourStart - (b.hourStart % DAY) : b.hourStart - (b.hourStart % HOUR);
        keys.set(`${b.protocolName}#${start}`, { protocolName: b.protocolName, start });
      }
      this.reads += 1;
      const figures = (await this.reader.activityBuckets([...keys.values()], size))
        .sort((a, b) => a.start - b.start || (a.protocolName < b.protocolName ? -1 : a.protocolName > b.protocolName ? 1 : 0));
      // Ids are given and the events kept, then handed out, in one synchronous step (subscribe's replay relies on it).
      const made = this.events.append(figures);
      for (const feed of this.feeds) {
        if (feed.options.size !== size) continue;
        feed.deliver(feed.protocols === undefined ? made : made.filter((e) => feed.wants(e.figures.protocolName)));
      }
    }
  }
}
