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

/**
 * Live calls in hand (from arrival until stored). A backfill call waits for none to be in hand
 * before it parses, at most maxMs: the lanes order the writer, but a replay's parse would still
 * take the one JavaScript thread from live calls (bench/RESULTS.md, issue 40); the bound keeps
 * a backfill moving under steady live traffic.
 */
export class LiveCalls {
  private inHand = 0;
  private readonly waiting = new Set<() => void>();

  enter(): void {
    this.inHand += 1;
  }

  leave(): void {
    this.inHand -= 1;
    if (this.inHand > 0) return;
    for (const wake of [...this.waiting]) wake();
  }

  /** Run a call in its lane: a live call is in hand while it runs; a backfill call first waits
   *  (at most maxMs) for no live call to be in hand. */
  async run<T>(lane: Lane, maxMs: number, call: () => Promise<T>): Promise<T> {
    if (lane === 'backfill') {
      await this.idle(maxMs);
      return call();
    }
    this.enter();
    try {
      return await call();
    } finally {
      this.leave();
    }
  }

  /** Resolves when no live call is in hand, or after maxMs. */
  idle(maxMs: number): Promise<void> {
    if (this.inHand === 0) return Promise.resolve();
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
