// Step 9, notify: after a committed write (an insert, or a repair of one), tell who watches:
// the data version (caches), the ingest observer (metrics), and change listeners (live
// subscriptions, the freshness watermark).
import type { DataChangeObserver, IngestObserver } from '../../core/observers.ts';
import type { Logger } from '../../core/logger.ts';
import type { DataVersion } from '../../warehouse/data-version.ts';
import type { Bucket } from '../../warehouse/view-repair.ts';

type ChangeListener = DataChangeObserver['dataChanged'];

/** What a change notice reads of a stored row: its protocol and block time. */
type Newest = { protocol_name: string; block_time: number };

export class ChangeNotifier {
  private readonly listeners = new Set<ChangeListener>();

  constructor(
    private readonly dataVersion: DataVersion,
    private readonly log: Logger,
    private readonly observer: IngestObserver | undefined,
  ) {}

  /** Listeners run synchronously on the write path: they must only record and schedule. */
  observe(observer: DataChangeObserver): () => void {
    const listener: ChangeListener = (c) => observer.dataChanged(c);
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A batch of new rows was stored (`count` of them: rows may be one per bucket, each with its newest block time). */
  stored(batchId: string, buckets: readonly Bucket[], rows: readonly Newest[], count = rows.length): void {
    this.observer?.observeBatch(count);
    this.changed(batchId, buckets, rows);
  }

  /** The data changed: rows stored, or view buckets rebuilt (rows empty). */
  changed(batchId: string, buckets: readonly Bucket[], rows: readonly Newest[]): void {
    this.dataVersion.bump();
    if (this.listeners.size === 0) return;
    const newest = new Map<string, number>();
    for (const r of rows) newest.set(r.protocol_name, Math.max(newest.get(r.protocol_name) ?? 0, r.block_time));
    const change = {
      buckets: buckets.map((b) => ({ protocolName: b.protocol_name, hourStart: b.hour_start })),
      newestBlockTimes: [...newest].map(([protocolName, blockTime]) => ({ protocolName, blockTime })),
      committedAt: Date.now(),
      batchId,
    };
    for (const l of this.listeners) {
      try {
        l(change);
      } catch (err) {
        // A listener's failure must not fail a write that is already committed.
        this.log.error({ err }, 'data-change listener failed');
      }
    }
  }

  /** A crashed predecessor's inserts were repaired: caches are stale, no batch to name. */
  recovered(): void {
    this.dataVersion.bump();
  }
}
