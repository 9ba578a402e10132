// Per-key usage counted in memory on the request path (a map update) and written to the
// warehouse in batches off it: every flushMs and at shutdown. A failed write keeps the
// rows for the next flush, up to a bound, so a warehouse hiccup loses nothing.
import type { Logger } from '../../../core/logger.ts';
import type { UsageRow, UsageStore } from '../../../warehouse/usage-store.ts';

/** What a counted request spent. */
export interface UsageSpent {
  cost: number;
  rowsRead: number;
  bytesRead: number;
}

const NOTHING_SPENT: UsageSpent = Object.freeze({ cost: 0, rowsRead: 0, bytesRead: 0 });

export class UsageRecorder {
  private pending = new Map<string, UsageRow>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: UsageStore,
    flushMs: number,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
    private readonly onFlushFailure: () => void = () => {},
    // About a minute of distinct (key, interface, method) triples under heavy load.
    private readonly maxPending = 100_000,
  ) {
    this.timer = setInterval(() => void this.flush(), flushMs);
    // The timer must not keep a finished process alive; close() does the last flush.
    this.timer.unref();
  }

  /** `spent`: the answer's cost in the plan's units and what it read (api/services/access/answer-stats.ts). */
  record(keyId: string, iface: string, method: string, outcome: { error: boolean; rateLimited: boolean }, units = 1, spent: UsageSpent = NOTHING_SPENT): void {
    const at = this.now();
    const minute = Math.floor(at / 60_000) * 60_000;
    const id = `${keyId}\u0000${minute}\u0000${iface}\u0000${method}`;
    let row = this.pending.get(id);
    if (!row) {
      if (this.pending.size >= this.maxPending) return;
      row = { keyId, minute, interface: iface, method, requests: 0, errors: 0, rateLimited: 0, cost: 0, rowsRead: 0, bytesRead: 0, lastUsedAt: at };
      this.pending.set(id, row);
    }
    row.requests += units;
    if (outcome.error) row.errors += units;
    if (outcome.rateLimited) row.rateLimited += units;
    row.cost += spent.cost;
    row.rowsRead += spent.rowsRead;
    row.bytesRead += spent.bytesRead;
    row.lastUsedAt = Math.max(row.lastUsedAt, at);
  }

  /** Write everything counted so far; resolves when it is stored (or kept for a retry). */
  flush(): Promise<void> {
    // One flush at a time: a slow insert must not be overtaken by the next one.
    this.flushing = this.flushing.then(() => this.flushOnce());
    return this.flushing;
  }

  private async flushOnce(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.store.insert([...batch.values()]);
    } catch (err) {
      this.onFlushFailure();
      this.log.error({ err, rows: batch.size }, 'usage flush failed; keeping rows for the next flush');
      for (const [id, row] of batch) {
        const now = this.pending.get(id);
        if (now) {
          now.requests += row.requests;
          now.errors += row.errors;
          now.rateLimited += row.rateLimited;
          now.cost += row.cost;
          now.rowsRead += row.rowsRead;
          now.bytesRead += row.bytesRead;
          now.lastUsedAt = Math.max(now.lastUsedAt, row.lastUsedAt);
        } else if (this.pending.size < this.maxPending) {
          this.pending.set(id, row);
        }
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
