// The pipeline's write queue, in two lanes (issue 40): 'live' (a topic's new messages, POST
// /admin/ingest) and 'backfill' (a file or a topic replayed from its beginning). The writer
// inserts one batch at a time; it takes every queued live chunk first (group commit, up to
// batchRows), and backfill only when no live chunk waits, in batches of at most backfillRows.
// So a live record that arrives while a backfill batch is being stored waits for that one
// insert, never for the backfill's queue: a replay of millions of records cannot push live
// freshness past one short insert.
import type { Accepted } from './steps/records.ts';

export const LANES = ['live', 'backfill'] as const;
export type Lane = (typeof LANES)[number];

/** One ingest call as the write queue sees it: its first failure stops the rest of it. */
export interface Call {
  failure: { err: unknown } | undefined;
  lane: Lane;
  /** performance.now() when the call reached the pipeline: the start of its freshness. */
  receivedAt: number;
  /** Told the rows of each of its chunks once stored (a backfill's progress). */
  onStored?: (rows: number) => void;
}

export interface Queued {
  rows: Accepted[];
  call: Call;
  resolve: (duplicates: number) => void;
  reject: (err: unknown) => void;
}

export class WriteQueue {
  private readonly lanes: Record<Lane, Queued[]> = { live: [], backfill: [] };

  push(q: Queued): void {
    this.lanes[q.call.lane].push(q);
  }

  get empty(): boolean {
    return this.lanes.live.length === 0 && this.lanes.backfill.length === 0;
  }

  /** Rows waiting for the writer, per lane (the admin status answer, metrics). */
  queuedRows(): Record<Lane, number> {
    const rows = (qs: Queued[]): number => qs.reduce((n, q) => n + q.rows.length, 0);
    return { live: rows(this.lanes.live), backfill: rows(this.lanes.backfill) };
  }

  /**
   * The next batch: queued live chunks up to batchRows, or else backfill chunks up to
   * backfillRows (always at least one chunk). Chunks of a call that already failed are
   * rejected with its failure, not written. Empty when nothing is queued.
   */
  next(batchRows: number, backfillRows: number): { lane: Lane; group: Queued[] } {
    for (const lane of LANES) {
      const queue = this.lanes[lane];
      const cap = lane === 'live' ? batchRows : Math.min(batchRows, backfillRows);
      const group: Queued[] = [];
      let n = 0;
      while (queue.length > 0) {
        const next = queue[0]!;
        if (next.call.failure !== undefined) {
          queue.shift();
          next.reject(next.call.failure.err);
          continue;
        }
        if (group.length > 0 && n + next.rows.length > cap) break;
        queue.shift();
        group.push(next);
        n += next.rows.length;
      }
      if (group.length > 0) return { lane, group };
    }
    return { lane: 'live', group: [] };
  }
}

/** How long a backfill call may wait for live calls (ms): while live is fresh, and while it is behind. */
export interface BackfillYield {
  freshMs: number;
  /** A live call slower than this (arrival to stored, ms) means live is behind. */
  lagMs: number;
  laggingMs: number;
}

/**
 * Live calls in hand (from arrival until stored). A backfill call waits for none to be in hand
 * before it parses, at most `freshMs`, the lanes ordering the writer but not the machine's cores
 * (a replay's parse and insert take them from live calls). While live is behind (its last call,
 * ended within `laggingMs`, took longer than `lagMs`) a backfill call waits for live to be both
 * idle and fresh again, at most `laggingMs`: beside live at 80 % of its maximum, a backfill
 * admitted at every gap between live calls saturated the 2-core machine (bench/RESULTS.md,
 * issue 40). The bounds keep a backfill moving under steady live traffic.
 */
export class LiveCalls {
  private inHand = 0;
  /** The last live call: how long it took (ms, arrival to stored), and when it ended. */
  private last = { tookMs: 0, endedAt: -Infinity };
  private readonly waiting = new Set<() => void>();

  constructor(
    private readonly bounds: BackfillYield,
    private readonly now: () => number = () => performance.now(),
  ) {}

  enter(): void {
    this.inHand += 1;
  }

  leave(): void {
    this.inHand -= 1;
    if (!this.ready) return;
    for (const wake of [...this.waiting]) wake();
  }

  /** Whether live is behind: its last call, ended recently, took longer than the lag bound. */
  get lagging(): boolean {
    return this.last.tookMs > this.bounds.lagMs && this.now() - this.last.endedAt < this.bounds.laggingMs;
  }

  /** Whether a backfill call may start now: no live call in hand, and live not behind. */
  private get ready(): boolean {
    return this.inHand === 0 && !this.lagging;
  }

  /** Run a call in its lane: a live call is in hand while it runs; a backfill call first waits
   *  until it may start (at most the bound for live's state). */
  async run<T>(lane: Lane, call: () => Promise<T>): Promise<T> {
    if (lane === 'backfill') {
      if (!this.ready) await this.idle(this.lagging ? this.bounds.laggingMs : this.bounds.freshMs);
      return call();
    }
    const started = this.now();
    this.enter();
    try {
      return await call();
    } finally {
      const endedAt = this.now();
      this.last = { tookMs: endedAt - started, endedAt };
      this.leave();
    }
  }

  /** Resolves when a backfill call may start, or after maxMs. */
  private idle(maxMs: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.waiting.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, maxMs);
      this.waiting.add(wake);
    });
  }
}
