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
import { STREAM_EVENTS_PER_TURN, STREAM_JOURNAL_LOOKBACK_MS } from '../../../core/limits.ts';

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

/** One subscriber's figures, as an async iterator (what a GraphQL subscribe resolver returns). */
export class Feed implements AsyncIterableIterator<BucketFigures> {
  private readonly queue: BucketFigures[] = [];
  private waiting: ((r: IteratorResult<BucketFigures>) => void) | undefined;
  private ended = false;
  private sinceYield = 0;
  readonly protocols: ReadonlySet<string> | undefined;

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
  deliver(figures: readonly BucketFigures[]): void {
    if (this.ended || figures.length === 0) return;
    if (this.queue.length >= this.options.maxQueued) {
      const queued = this.queue.length;
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

  get queued(): number {
    return this.queue.length;
  }

  next(): Promise<IteratorResult<BucketFigures>> {
    const f = this.queue.shift();
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

  return(): Promise<IteratorResult<BucketFigures>> {
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

  constructor(
    private readonly reader: BucketReader,
    private readonly log: Logger,
  ) {}

  subscribe(options: SubscribeOptions): Feed {
    const feed = new Feed(options, (f) => this.feeds.delete(f));
    this.feeds.add(feed);
    return feed;
  }

  get subscribers(): number {
    return this.feeds.size;
  }

  dataChanged(change: CommittedChange): void {
    if (this.feeds.size === 0) return;
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
    if (this.feeds.size === 0) {
      // Nobody listens: forget the position, so a later subscriber starts from then, not from a backlog.
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
    const all = feeds.some((f) => f.protocols === undefined);
    const wanted = new Set(feeds.flatMap((f) => [...(f.protocols ?? [])]));
    const relevant = changed.filter((b) => all || wanted.has(b.protocolName));
    for (const size of ['hour', 'day'] as const) {
      const takers = feeds.filter((f) => f.options.size === size);
      if (takers.length === 0 || relevant.length === 0) continue;
      const keys = new Map<string, BucketKey>();
      for (const b of relevant) {
        const start = size === 'day' ? b.hourStart - (b.hourStart % DAY) : b.hourStart - (b.hourStart % HOUR);
        keys.set(`${b.protocolName}#${start}`, { protocolName: b.protocolName, start });
      }
      this.reads += 1;
      const figures = (await this.reader.activityBuckets([...keys.values()], size))
        .sort((a, b) => a.start - b.start || (a.protocolName < b.protocolName ? -1 : a.protocolName > b.protocolName ? 1 : 0));
      for (const feed of takers) feed.deliver(feed.protocols === undefined ? figures : figures.filter((f) => feed.wants(f.protocolName)));
    }
  }
}
