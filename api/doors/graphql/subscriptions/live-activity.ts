// The source of protocolActivity: the pipeline reports the (protocol, hour) buckets each
// committed write changed; this hub reads those buckets' figures once (per bucket size
// anyone asked for), not once per subscriber, and hands each subscriber the ones it wants.
// While a read runs, further writes' buckets accumulate and are read together next, so a
// burst of writes costs one read per read-time, and 200 streams cost what one does.
// Each subscriber has a bounded queue: one whose backlog from earlier writes is still at
// its bound when the next write's figures arrive is told (onOverflow) and dropped, so a
// stalled client holds at most that bound plus one write's buckets, never an unbounded backlog.
import type { Logger } from '../../../../core/logger.ts';
import type { ChangedBucket, CommittedChange, DataChangeObserver } from '../../../../core/observers.ts';
import type { FinishedBatch } from '../../../../warehouse/journal-reader.ts';
import type { BucketFigures, BucketKey, BucketSize } from '../../../analytics/presets/activity-buckets.ts';
import { STREAM_JOURNAL_LOOKBACK_MS, STREAM_REPLAY_MAX_EVENTS, STREAM_REPLAY_WINDOW_SECONDS } from '../../../../core/limits/streams.ts';
import { DeliveredBatches } from './delivered-batches.ts';
import { EventLog } from './event-log.ts';
import { Feed, type SubscribeOptions } from './feed.ts';
import { ReplayPacer } from './replay-pacer.ts';

/** What the hub reads through: the analytics facade's activityBuckets. */
export interface BucketReader {
  activityBuckets(keys: readonly BucketKey[], size: BucketSize): Promise<BucketFigures[]>;
}

const HOUR = 3_600;
const DAY = 86_400;

export interface LiveOptions {
  /** The replay window (STREAM_REPLAY_WINDOW_SECONDS by default) and its bound of events. */
  windowSeconds?: number;
  maxEvents?: number;
  /** How far back each journal read looks again (STREAM_JOURNAL_LOOKBACK_MS; tests shrink it). */
  journalLookbackMs?: number;
}

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
  /** Journal batches already turned into events (told by this process's pipeline, or read). */
  private readonly delivered: DeliveredBatches;
  private readonly journalLookbackMs: number;
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
  /** One pace for every feed's replayed events. */
  private readonly pacer = new ReplayPacer();

  constructor(
    private readonly reader: BucketReader,
    private readonly log: Logger,
    options: LiveOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.windowMs = (options.windowSeconds ?? STREAM_REPLAY_WINDOW_SECONDS) * 1000;
    this.events = new EventLog(this.windowMs, options.maxEvents ?? STREAM_REPLAY_MAX_EVENTS, now);
    this.journalLookbackMs = options.journalLookbackMs ?? STREAM_JOURNAL_LOOKBACK_MS;
    this.delivered = new DeliveredBatches(now);
  }

  /**
   * A subscriber's feed. With `lastEventId` (a reconnect), the events after it still kept are
   * queued first, then the live ones: in one synchronous step, so none is missed or sent twice;
   * when some are no longer kept the feed carries the gap instead, and only live events follow.
   */
  subscribe(options: SubscribeOptions, lastEventId?: string): Feed {
    const feed = new Feed(
      options,
      (f) => {
        this.feeds.delete(f);
        this.left[f.options.size] = this.now();
      },
      this.pacer,
    );
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
    if (change.batchId !== undefined) this.delivered.told(change.batchId);
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
      this.delivered.clear();
      return;
    }
    this.tailing = true;
    try {
      if (this.journalSince === undefined) {
        this.journalSince = this.journalStart = await source.clock();
        return;
      }
      const batches = await source.finishedSince(this.journalSince - this.journalLookbackMs);
      const buckets: ChangedBucket[] = [];
      for (const b of batches) {
        this.journalSince = Math.max(this.journalSince, b.at);
        if (b.at < this.journalStart) continue;
        // A batch delivered before (each read looks back over the last ones again) is not sent twice.
        if (this.delivered.read(b.batchId, b.at)) buckets.push(...b.buckets);
      }
      this.delivered.prune(this.journalSince - this.journalLookbackMs);
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
    const sizes = (['hour', 'day'] as const)
      .slice()
      .sort((a, b) => Number(!feeds.some((f) => f.options.size === a)) - Number(!feeds.some((f) => f.options.size === b)));
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
      const figures = (await this.reader.activityBuckets([...keys.values()], size)).sort(
        (a, b) => a.start - b.start || (a.protocolName < b.protocolName ? -1 : a.protocolName > b.protocolName ? 1 : 0),
      );
      // Ids are given and the events kept, then handed out, in one synchronous step (subscribe's replay relies on it).
      const made = this.events.append(figures);
      for (const feed of this.feeds) {
        if (feed.options.size !== size) continue;
        feed.deliver(feed.protocols === undefined ? made : made.filter((e) => feed.wants(e.figures.protocolName)));
      }
    }
  }
}
