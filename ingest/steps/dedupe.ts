// Steps 5 and 6, de-duplicate: a record whose identity (signature, instruction_index) came
// earlier in the same batch is dropped `duplicate_in_batch`; one already in the store is
// dropped `already_stored`. Dropping is what makes replaying records change no count in the
// base table or any view; the writer runs these steps and the insert in one turn, so "which
// of these are new?" and "insert them" cannot interleave.
// Against the store, the question is asked where the data is, and the process keeps nothing
// between batches (issue 40: the Bloom filter of every stored key it replaced grew with the
// store and was read whole at each start, 51 s at 100M). Designs measured in bench/RESULTS.md
// ("Ingest at the engine's limit (issue 40)"); 'time-keys' is the default:
//  - 'time-keys': ingest_keys (migration 120) is ordered by (block_time, sig_key,
//    instruction_index); the engine reads the granules of the batch's own seconds (the newest
//    granules of the newest parts for a live batch), or for a batch spread over a long time,
//    its (block_time, sig_key) pairs as an IN set on that key prefix: whatever the store's size. Only the records it
//    matches (re-deliveries) are then compared by signature through the signature index
//    (tx_rid_by_sig, then their records in tx_by_rid: SIGNATURE_RECORDS), so a hash collision
//    can never drop a new record. The record id (migration 110) is not the key here: a record
//    sent without transaction_index gets its id only after this step (ingest/record-id.ts).
//  - 'signature-index': every batch's signatures looked up through tx_rid_by_sig (ordered by a
//    hash: the keys land in random granules of every part; kept for the benchmark).
import { signatureRecords } from '../../warehouse/signature-records.ts';
import { TABLES } from '../../warehouse/tables.ts';
import type { Warehouse } from '../../warehouse/warehouse.ts';
import { INGEST_DEDUPE_SPAN_SECONDS, INGEST_LITERAL_LOOKUP_KEYS, INGEST_LITERAL_LOOKUP_SIGNATURES, INGEST_LOOKUP_CHUNK } from '../../core/limits/ingest.ts';
import type { Accepted } from './records.ts';
import { LookupArgs } from './lookup-args.ts';
import { drop, ok, type BatchStep, type Drop, type Ok } from './step.ts';

export const DEDUPE_DESIGNS = ['time-keys', 'signature-index'] as const;
export type DedupeDesign = (typeof DEDUPE_DESIGNS)[number];

/** Where the writer's store lookup runs (INGEST_DEDUPE_LOOKUP): in its turn with bound values (as
 *  before issue 40's kafka40), in its turn with literal values, or beside the previous batch's
 *  insert (ingest/steps/dedupe-ahead.ts). */
export const DEDUPE_LOOKUPS = ['in-turn', 'in-turn-literal', 'beside-insert'] as const;
export type DedupeLookup = (typeof DEDUPE_LOOKUPS)[number];

/** How a store lookup runs: its values bound or literal (ingest/steps/lookup-args.ts), on the warehouse's own session or a side one. */
export interface LookupWay {
  literal: boolean;
  sideSession?: number;
}
const IN_TURN: LookupWay = { literal: false };

export const identity = (signature: string, index: number): string => `${signature}#${index}`;

/** Identities (signature, instruction_index), keyed by the signature string the row already
 *  holds: no "signature#index" string built per record (that allocation was a visible share of
 *  the pipeline's JavaScript time). */
export class IdentitySet {
  private readonly seen = new Map<string, number | Set<number>>();

  /** Adds the identity; false when it was already in. */
  add(signature: string, ix: number): boolean {
    const prev = this.seen.get(signature);
    if (prev === undefined) this.seen.set(signature, ix);
    else if (typeof prev === 'number') {
      if (prev === ix) return false;
      this.seen.set(signature, new Set([prev, ix]));
    } else {
      if (prev.has(ix)) return false;
      prev.add(ix);
    }
    return true;
  }

  has(signature: string, ix: number): boolean {
    const prev = this.seen.get(signature);
    return prev === undefined ? false : typeof prev === 'number' ? prev === ix : prev.has(ix);
  }
}

/** The first occurrence of an identity wins. */
export function dedupeInBatch(batch: Accepted[]): (Ok<Accepted> | Drop)[] {
  const seen = new IdentitySet();
  return batch.map((a) => (seen.add(a.signature, a.instruction_index) ? ok(a) : drop('duplicate_in_batch')));
}

/** Against the store, by one of DEDUPE_DESIGNS; nothing is kept between batches. */
export class StoreDedupe {
  constructor(
    private readonly wh: Warehouse,
    private readonly design: DedupeDesign = 'time-keys',
    /** How the writer's own lookups run (INGEST_DEDUPE_LOOKUP 'in-turn-literal': literal values). */
    private readonly way: LookupWay = IN_TURN,
  ) {}

  readonly step: BatchStep<Accepted> = async (batch) => {
    const existing = await this.stored(batch, this.way);
    if (existing.size === 0) return batch.map(ok);
    return batch.map((a) => (existing.has(identity(a.signature, a.instruction_index)) ? drop('already_stored') : ok(a)));
  };

  /** Identities (identity()) of these records that the store holds. */
  async stored(batch: readonly Accepted[], way: LookupWay = this.way): Promise<Set<string>> {
    const candidates = this.design === 'time-keys' ? await this.matchedByTime(batch, way) : batch;
    return candidates.length === 0 ? new Set() : this.storedIdentities(candidates, way);
  }

  /** The batch's records whose (block_time, sig_key, instruction_index) is in ingest_keys. */
  private async matchedByTime(batch: readonly Accepted[], way: LookupWay): Promise<Accepted[]> {
    const found = new Set<string>();
    // A server receives the bound arrays in the URL: chunks keep it under its 1 MiB URI limit.
    const chunk = way.literal ? INGEST_LITERAL_LOOKUP_KEYS : this.wh.transport === 'embedded' ? batch.length : INGEST_LOOKUP_CHUNK;
    for (let i = 0; i < batch.length; i += chunk) {
      const part = batch.slice(i, i + chunk);
      let from = Infinity;
      let to = -Infinity;
      for (const a of part) {
        from = Math.min(from, a.block_time);
        to = Math.max(to, a.block_time);
      }
      // sig_key travels as its two 32-bit halves (numbers bind on both transports; a UInt64
      // array of strings does not), joined again in the engine. Two reads, by the batch's time
      // span (bench/RESULTS.md, issue 40, 10M store): a batch within INGEST_DEDUPE_SPAN_SECONDS
      // (live records) reads its time range's rows and filters them by key first (PREWHERE), the
      // cheapest read measured (10,000 keys over a day of 2.3M rows: 75-190 ms, against 510-630
      // ms as an IN set of pairs), but it reads every row of the range; a batch spread wider (a
      // backfill of old records) asks for its (block_time, sig_key) pairs, at most a granule per
      // key and part, so its read is bounded by the batch's size, never by the store's.
      const args = new LookupArgs(way.literal);
      const h = args.uint32s(
        'h',
        part.map((a) => a.kh >>> 0),
      );
      const l = args.uint32s(
        'l',
        part.map((a) => a.kl >>> 0),
      );
      const keys = `arrayMap((h, l) -> bitOr(bitShiftLeft(toUInt64(h), 32), toUInt64(l)), ${h}, ${l})`;
      const where =
        to - from <= INGEST_DEDUPE_SPAN_SECONDS
          ? `PREWHERE sig_key IN (SELECT arrayJoin(${keys})) WHERE block_time BETWEEN toDateTime(${args.uint32('from', from)}, 'UTC') AND toDateTime(${args.uint32('to', to)}, 'UTC')`
          : `WHERE (block_time, sig_key) IN (SELECT arrayJoin(arrayZip(arrayMap(x -> toDateTime(x, 'UTC'), ${args.uint32s(
              't',
              part.map((a) => a.block_time),
            )}), ${keys})))`;
      const text = await this.wh.queryText(
        `SELECT toUInt32(block_time), bitShiftRight(sig_key, 32), bitAnd(sig_key, 4294967295), instruction_index FROM ${TABLES.ingestKeys} ${where}`,
        'TabSeparated',
        { params: args.params, sideSession: way.sideSession },
      );
      for (const line of text.split('\n')) if (line.length > 0) found.add(line);
    }
    if (found.size === 0) return [];
    return batch.filter((a) => found.has(`${a.block_time}\t${a.kh >>> 0}\t${a.kl >>> 0}\t${a.instruction_index}`));
  }

  /** Identities of these records that the store holds (tx_rid_by_sig → tx_by_rid), compared by signature. */
  private async storedIdentities(records: readonly Accepted[], way: LookupWay): Promise<Set<string>> {
    // The signature index answers by primary key (sig_key), its rids by tx_by_rid's. Signatures are compared
    // here, not in SQL: a hash collision returns a row whose own signature then matches no
    // identity. Embedded, the whole set goes in one read (issue 15: one query of 40,000
    // cost about half of eight of 5,000); a server gets 5,000 per URL (its 1 MiB limit), and a
    // literal statement INGEST_LITERAL_LOOKUP_SIGNATURES (the engine's 256 KiB query text limit).
    const signatures = [...new Set(records.map((a) => a.signature))];
    const existing = new Set<string>();
    const chunk = way.literal ? INGEST_LITERAL_LOOKUP_SIGNATURES : this.wh.transport === 'embedded' ? signatures.length : INGEST_LOOKUP_CHUNK;
    for (let i = 0; i < signatures.length; i += chunk) {
      const args = new LookupArgs(way.literal);
      const stored = await this.wh.query<{ signature: string; instruction_index: number }>(
        `SELECT signature, instruction_index FROM ${signatureRecords(args.strings('sigs', signatures.slice(i, i + chunk)))}`,
        { params: args.params, sideSession: way.sideSession },
      );
      for (const r of stored) existing.add(identity(r.signature, Number(r.instruction_index)));
    }
    return existing;
  }
}
