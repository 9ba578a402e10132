// De-duplication beside the insert (INGEST_DEDUPE_LOOKUP=beside-insert; issue 40, bench/RESULTS.md
// "De-duplication beside the insert"). The writer stores one batch at a time; while batch N is
// being inserted, the store lookup of the chunks queued for the next batch, and of those queued
// while it runs (StoreDedupe.stored:
// ingest_keys, then the signature index) runs on a side session of its own, with its values
// written in as literals (ingest/steps/lookup-args.ts: a bound statement would wait for the
// insert). At that batch's turn its records are dropped when the lookup found them, or when they
// are in a batch whose insert had not ended when the lookup started (kept here: N, and any after
// it). Exactly once, because:
//  - A batch whose insert ended before a lookup started is whole in what the lookup reads (an
//    insert resolves once its part and its views' parts are committed; the writer is one turn at a
//    time, so every batch before N had ended when N's insert, and the lookups beside it, started).
//    A batch whose insert had not ended (N, or one after it before the checked batch's turn) is
//    in `inFlight`, whatever the lookup saw of it. So a record stored by this writer is caught by
//    one or the other; two batches with the same record store it once.
//  - Only the writer writes these tables (one writer per store for the record id, docs/
//    ingest-record-id.md), and its every write goes through the write turn: Kafka and NDJSON
//    chunks share the queue and this log. A write this class does not see (the engine path's
//    turn, checks in the engine) resets it first, as any batch that fails does: a failed insert
//    may have stored part of a batch and is repaired (its views rebuilt) before the next write, so
//    no lookahead that may have read across it or across the repair is used (those records are
//    looked up again in their turn, as before this design), and none starts until the next insert,
//    which comes after the writer's repairs.
//  - Redelivery and restarts: nothing here outlives the process. After a restart or a SIGKILL the
//    journal repairs unfinished inserts in the first turn, before the first insert; a redelivered
//    record is found by a lookup or is in flight.
// Memory: the rows of batches in flight since the oldest unused lookahead started (a few batches),
// whatever the store's size.
import { INGEST_DEDUPE_SIDE_SESSION } from '../../core/limits/ingest.ts';
import type { Warehouse } from '../../warehouse/warehouse.ts';
import type { Accepted } from './records.ts';
import { drop, ok, type BatchStep } from './step.ts';
import { IdentitySet, identity, StoreDedupe, type DedupeDesign, type DedupeLookup } from './dedupe.ts';

/** The writer's store step for `lookup` (default 'in-turn'), and its lookaheads when it runs beside the insert (embedded only:
 *  a server runs statements side by side anyway, and the literal statements were measured embedded). */
export function storeDedupeStep(wh: Warehouse, design?: DedupeDesign, lookup: DedupeLookup = 'in-turn'): { step: BatchStep<Accepted>; ahead?: DedupeAhead } {
  const store = new StoreDedupe(wh, design, { literal: lookup === 'in-turn-literal' });
  if (lookup !== 'beside-insert' || wh.transport !== 'embedded') return { step: store.step };
  const ahead = new DedupeAhead(store, INGEST_DEDUPE_SIDE_SESSION);
  return { step: ahead.step, ahead };
}

interface Lookahead {
  /** Valid while it equals DedupeAhead.generation (a reset ends every lookahead). */
  generation: number;
  /** The first batch (its sequence number) whose insert had not ended when the lookup started. */
  since: number;
  /** What the store held of the chunk; undefined when the lookup failed (looked up again in turn). */
  stored: Promise<Set<string> | undefined>;
}

export class DedupeAhead {
  private generation = 0;
  /** The last batch whose insert started, and whether it is running. */
  private seq = 0;
  private insertingNow = false;
  /** Lookups may start: from the first insert after a reset (which comes after the writer's repairs) on. */
  private active = false;
  /** Batches whose insert started since the oldest lookahead still to be used started. */
  private readonly inFlight: { seq: number; rows: readonly Accepted[] }[] = [];
  /** The lookahead of each queued record that has one. */
  private readonly looks = new Map<Accepted, Lookahead>();
  private readonly outstanding = new Set<Lookahead>();
  /** Records checked by a lookahead, not in their turn (tests and benchmarks check the design was used). */
  checkedAhead = 0;

  constructor(
    private readonly store: StoreDedupe,
    private readonly sideSession: number,
  ) {}

  /**
   * Batch `rows` is about to be inserted: it is in flight from now until a reset; look up
   * the queued chunks (in the order the writer takes them) that will make the next batch, up
   * to `batchRows` rows.
   */
  inserting(rows: readonly Accepted[], queued: readonly (readonly Accepted[])[], batchRows: number): void {
    this.inFlight.push({ seq: ++this.seq, rows });
    this.insertingNow = true;
    this.active = true;
    this.queued(queued, batchRows);
  }

  /** The insert ended: whole in what any lookup starting from now reads. */
  inserted(): void {
    this.insertingNow = false;
  }

  /** A chunk was queued (or an insert starts): the next batch's chunks not yet looked up are, now. */
  queued(queued: readonly (readonly Accepted[])[], batchRows: number): void {
    if (!this.active) return;
    // The batch being inserted may be half visible to the lookup: it is checked in memory. When
    // none is, every batch before is whole in what the lookup reads, and every later one in memory.
    const since = this.insertingNow ? this.seq : this.seq + 1;
    let n = 0;
    for (const chunk of queued) {
      if (n >= batchRows) break;
      n += chunk.length;
      if (chunk.length === 0 || this.valid(this.looks.get(chunk[0]!))) continue;
      const look: Lookahead = {
        generation: this.generation,
        since,
        stored: this.store.stored(chunk, { literal: true, sideSession: this.sideSession }).catch(() => undefined),
      };
      this.outstanding.add(look);
      for (const a of chunk) this.looks.set(a, look);
    }
    this.prune();
  }

  /** Forget every lookahead and batch in flight, and start none until the next insert: a batch failed
   *  (it is repaired before the next), or a write this class does not see (the engine path's) begins. */
  reset(): void {
    this.generation += 1;
    this.insertingNow = false;
    this.active = false;
    this.looks.clear();
    this.outstanding.clear();
    this.inFlight.length = 0;
  }

  /** The writer's store step: by each record's lookahead when it has a valid one, else looked up now. */
  readonly step: BatchStep<Accepted> = async (batch) => {
    const byLook = new Map<Lookahead | undefined, Accepted[]>();
    for (const a of batch) {
      const look = this.looks.get(a);
      this.looks.delete(a);
      const key = this.valid(look) ? look : undefined;
      const rows = byLook.get(key);
      if (rows === undefined) byLook.set(key, [a]);
      else rows.push(a);
    }
    const stored = new Set<Accepted>();
    for (const [look, rows] of byLook) {
      if (look !== undefined) this.outstanding.delete(look);
      const found = look === undefined ? undefined : await look.stored;
      if (look === undefined || found === undefined) {
        const now = await this.store.stored(rows);
        for (const a of rows) if (now.has(identity(a.signature, a.instruction_index))) stored.add(a);
        continue;
      }
      this.checkedAhead += rows.length;
      const recent = this.since(look.since);
      for (const a of rows) if (found.has(identity(a.signature, a.instruction_index)) || recent.has(a.signature, a.instruction_index)) stored.add(a);
    }
    this.prune();
    return batch.map((a) => (stored.has(a) ? drop('already_stored') : ok(a)));
  };

  private valid(look: Lookahead | undefined): look is Lookahead {
    return look !== undefined && look.generation === this.generation;
  }

  /** Identities of the batches in flight from `seq` on. */
  private since(seq: number): IdentitySet {
    const set = new IdentitySet();
    for (const b of this.inFlight) if (b.seq >= seq) for (const a of b.rows) set.add(a.signature, a.instruction_index);
    return set;
  }

  /** Batches older than every lookahead still to be used (and than the one being inserted) are whole in what those read. */
  private prune(): void {
    let oldest = this.insertingNow ? this.seq : Infinity;
    for (const look of this.outstanding) oldest = Math.min(oldest, look.since);
    while (this.inFlight.length > 0 && this.inFlight[0]!.seq < oldest) this.inFlight.shift();
  }
}
