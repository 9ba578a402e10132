// Step 7, journal: an INSERT into a table with views is not atomic across them, so each
// insert is journalled ('begin', the insert, 'done'; ingest/ingest-journal.ts) and one that
// stops part-way (crash, failing view) is repaired before the next write. A batch's 'done'
// rides on the next batch's 'begin' while batches queue (one journal write per batch), and
// is written alone when none follows.
import type { Logger } from '../../core/logger.ts';
import type { Bucket } from '../../warehouse/view-repair.ts';
import type { Warehouse } from '../../warehouse/warehouse.ts';
import { IngestJournal } from '../ingest-journal.ts';

export interface JournalEntry {
  id: string;
  buckets: Bucket[];
}

export class WriteJournal {
  private readonly journal: IngestJournal;
  /** Whether a crashed predecessor's unfinished inserts were looked for (before the first write). */
  private recovered = false;
  /** Failed inserts still to repair, oldest first. */
  private readonly pendingRepairs: JournalEntry[] = [];
  /** A stored batch whose 'done' row waits to ride on the next 'begin'. */
  private pendingDone: string | undefined;

  constructor(
    wh: Warehouse,
    writerId: string,
    private readonly log: Logger,
  ) {
    this.journal = new IngestJournal(wh, writerId, log);
  }

  get repairsPending(): boolean {
    return this.pendingRepairs.length > 0;
  }

  /**
   * Make the views agree with the base table where an insert did not finish, before any
   * de-duplication relies on them. Throws while the warehouse cannot do it, so no batch is
   * stored on top of an inconsistent state. `repaired` hears of each repair: the data
   * changed (recovered: a predecessor's inserts; otherwise one failed insert's buckets).
   */
  async repairUnfinished(repaired: (entry: JournalEntry | 'recovered') => void): Promise<void> {
    if (!this.recovered) {
      if ((await this.journal.recover()) > 0) repaired('recovered');
      this.recovered = true;
    }
    while (this.pendingRepairs.length > 0) {
      const next = this.pendingRepairs[0]!;
      await this.journal.repair(next.id, next.buckets);
      this.pendingRepairs.shift();
      repaired(next);
    }
  }

  /** Journal an insert of these rows about to start (carrying the deferred 'done'). */
  begin(rows: readonly { protocol_name: string; block_time: number }[]): Promise<JournalEntry> {
    const carried = this.pendingDone;
    this.pendingDone = undefined;
    return this.journal.begin(rows, carried);
  }

  /** The insert failed: repaired before the next write. */
  failed(entry: JournalEntry): void {
    this.pendingRepairs.push(entry);
  }

  /** The insert finished: its 'done' waits for the next batch's 'begin' (or flushDone). */
  finished(entry: JournalEntry): void {
    this.pendingDone = entry.id;
  }

  /** Write the 'done' row that was waiting for a next batch, when none will carry it. */
  async flushDone(): Promise<void> {
    const id = this.pendingDone;
    if (id === undefined) return;
    this.pendingDone = undefined;
    await this.journal.done(id).catch((err: unknown) => this.log.error({ err }, 'journal done write failed'));
  }
}
