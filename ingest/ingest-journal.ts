// Marks each insert into the base table as begun and finished (table ingest_journal), and
// on start-up repairs the view buckets of inserts that never finished. This is what keeps
// "a replay changes no count" true after a crash in the middle of an insert: without it
// the base table may hold a batch whose view rows are missing, the de-duplication (which
// reads tx_rid_by_sig and tx_by_rid, view targets) would call the replayed records new, and the base
// table would get them twice.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../core/logger.ts';
import { rebuildViewBuckets, type Bucket } from '../warehouse/view-repair.ts';
import type { Warehouse } from '../warehouse/warehouse.ts';
import { TABLES } from '../warehouse/tables.ts';

export class IngestJournal {
  constructor(
    private readonly wh: Warehouse,
    /** Who writes: recovery repairs only this writer's unfinished inserts. */
    private readonly writer: string,
    private readonly log: Logger,
  ) {}

  /**
   * Journal an insert about to start. `finishing` names an earlier insert of this writer
   * that has finished: its 'done' row goes in the same write (one journal write per batch).
   */
  async begin(rows: readonly { protocol_name: string; block_time: number }[], finishing?: string): Promise<{ id: string; buckets: Bucket[] }> {
    const seen = new Map<string, Bucket>();
    for (const r of rows) {
      const hour = r.block_time - (r.block_time % 3600);
      seen.set(`${r.protocol_name}#${hour}`, { protocol_name: r.protocol_name, hour_start: hour });
    }
    const buckets = [...seen.values()];
    const id = randomUUID();
    const entries: { batch_id: string; writer: string; state: string; buckets: Bucket[] }[] = [{ batch_id: id, writer: this.writer, state: 'begin', buckets }];
    if (finishing !== undefined) entries.unshift({ batch_id: finishing, writer: this.writer, state: 'done', buckets: [] });
    await this.wh.insert(TABLES.ingestJournal, entries, {
      columns: ['batch_id', 'writer', 'state', 'buckets'],
    });
    return { id, buckets };
  }

  async done(id: string): Promise<void> {
    await this.wh.insert(TABLES.ingestJournal, [{ batch_id: id, writer: this.writer, state: 'done', buckets: [] }], {
      columns: ['batch_id', 'writer', 'state', 'buckets'],
    });
  }

  /** Rebuild the views of one insert that failed part-way, then mark it finished. */
  async repair(id: string, buckets: readonly Bucket[]): Promise<void> {
    await rebuildViewBuckets(this.wh, buckets);
    await this.done(id);
  }

  /** Repair every unfinished insert of this writer; returns how many there were. */
  async recover(): Promise<number> {
    const open = await this.wh.query<{ batch_id: string; buckets: [string, number][] }>(
      `SELECT batch_id, anyIf(arrayMap(b -> (b.1, toUInt32(b.2)), buckets), state = 'begin') AS buckets
       FROM ${TABLES.ingestJournal} WHERE writer = {writer:String}
       GROUP BY batch_id HAVING countIf(state = 'done') = 0`,
      { params: { writer: this.writer } },
    );
    if (open.length === 0) return 0;
    const all = new Map<string, Bucket>();
    for (const entry of open) {
      for (const [protocol_name, hour] of entry.buckets) all.set(`${protocol_name}#${hour}`, { protocol_name, hour_start: Number(hour) });
    }
    this.log.warn({ inserts: open.length, buckets: all.size }, 'unfinished inserts found: rebuilding their view buckets from the base table');
    await rebuildViewBuckets(this.wh, [...all.values()]);
    for (const entry of open) await this.done(entry.batch_id);
    return open.length;
  }
}
