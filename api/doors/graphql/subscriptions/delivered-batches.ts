// The ingest batches the live hub has already turned into events (live-activity.ts), by id:
// its own pipeline's, told directly, and other processes', read from the ingest journal.
// Each journal read looks back STREAM_JOURNAL_LOOKBACK_MS before the newest batch seen (a
// batch committed late, with an earlier time, is still found), so with nothing ingested every
// read returns the last batches again: an id is remembered for as long as a read can still
// return its batch, and only that long, so the memory is bounded by the batches of one
// look-back. (Ids used to be forgotten 4 look-backs after they were handled, by the process
// clock, while reads kept returning them: the last write was sent again every ~24 s.)
import { STREAM_JOURNAL_UNSEEN_KEEP_MS } from '../../../../core/limits/streams.ts';

interface Entry {
  /** The batch's time in the journal (the engine's clock) once a read returned it; until then, when the pipeline told of it (this process's clock). */
  at: number;
  seen: boolean;
}

export class DeliveredBatches {
  private readonly byId = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  get size(): number {
    return this.byId.size;
  }

  /** This process's pipeline delivered the batch: its journal rows may be read later. */
  told(batchId: string): void {
    if (!this.byId.has(batchId)) this.byId.set(batchId, { at: this.now(), seen: false });
  }

  /** A batch a journal read returned: true when it is news (to be delivered now), false when it was delivered before. */
  read(batchId: string, at: number): boolean {
    const news = !this.byId.has(batchId);
    this.byId.set(batchId, { at, seen: true });
    return news;
  }

  /**
   * Forget the batches no read can return any more: those before `floor`, where every later
   * read starts (reads start a look-back before the newest batch seen, which never goes
   * back). A batch of this process's pipeline no read has returned yet (its 'done' row
   * rides on the next batch's write) is kept for STREAM_JOURNAL_UNSEEN_KEEP_MS.
   */
  prune(floor: number): void {
    const unseenBefore = this.now() - STREAM_JOURNAL_UNSEEN_KEEP_MS;
    for (const [id, e] of this.byId) if (e.seen ? e.at < floor : e.at < unseenBefore) this.byId.delete(id);
  }

  clear(): void {
    this.byId.clear();
  }
}
