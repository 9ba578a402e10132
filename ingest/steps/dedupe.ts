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
import { SIGNATURE_RECORDS } from '../../warehouse/signature-records.ts';
import { TABLES } from '../../warehouse/tables.ts';
import type { Warehouse } from '../../warehouse/warehouse.ts';
import { INGEST_DEDUPE_SPAN_SECONDS, INGEST_LOOKUP_CHUNK } from '../../core/limits/ingest.ts';
import type { Accepted } from './records.ts';
import { drop, ok, type BatchStep, type Drop, type Ok } from './step.ts';

export const DEDUPE_DESIGNS = ['time-keys', 'signature-index'] as const;
export type DedupeDesign = (typeof DEDUPE_DESIGNS)[number];

const identity = (signature: string, index: number): string => `${signature}#${index}`;

/** The first occurrence of an identity wins. */
export function dedupeInBatch(batch: Accepted[]): (Ok<Accepted> | Drop)[] {
  // Keyed by the signature string the row already holds (no "signature#index" string built
  // per record: that allocation was a visible share of the pipeline's JavaScript time).
  const seen = new Map<string, number | Set<number>>();
  return batch.map((a) => {
    const { signature, instruction_index: ix } = a;
    const prev = seen.get(signature);
    if (prev === undefined) {
      seen.set(signature, ix);
    } else if (typeof prev === 'number') {
      if (prev === ix) return drop('duplicate_in_batch');
      seen.set(signature, new Set([prev, ix]));
    } else {
      if (prev.has(ix)) return drop('duplicate_in_batch');
      prev.add(ix);
    }
    return ok(a);
  });
}

/** Against the store, by one of DEDUPE_DESIGNS; nothing is kept between batches. */
export class StoreDedupe {
  constructor(
    private readonly wh: Warehouse,
    private readonly design: DedupeDesign = 'time-keys',
  ) {}

  readonly step: BatchStep<Accepted> = async (batch) => {
    const candidates = this.design === 'time-keys' ? await this.matchedByTime(batch) : batch;
    if (candidates.length === 0) return batch.map(ok);
    const existing = await this.storedIdentities(candidates);
    if (existing.size === 0) return batch.map(ok);
    return batch.map((a) => (existing.has(identity(a.signature, a.instruction_index)) ? drop('already_stored') : ok(a)));
  };

  /** The batch's records whose (block_time, sig_key, instruction_index) is in ingest_keys. */
  private async matchedByTime(batch: readonly Accepted[]): Promise<Accepted[]> {
    const found = new Set<string>();
    // A server receives the bound arrays in the URL: chunks keep it under its 1 MiB URI limit.
    const chunk = this.wh.transport === 'embedded' ? batch.length : INGEST_LOOKUP_CHUNK;
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
      const keys = 'arrayMap((h, l) -> bitOr(bitShiftLeft(toUInt64(h), 32), toUInt64(l)), {h:Array(UInt32)}, {l:Array(UInt32)})';
      const where =
        to - from <= INGEST_DEDUPE_SPAN_SECONDS
          ? `PREWHERE sig_key IN (SELECT arrayJoin(${keys})) WHERE block_time BETWEEN toDateTime({from:UInt32}, 'UTC') AND toDateTime({to:UInt32}, 'UTC')`
          : `WHERE (block_time, sig_key) IN (SELECT arrayJoin(arrayZip(arrayMap(x -> toDateTime(x, 'UTC'), {t:Array(UInt32)}), ${keys})))`;
      const text = await this.wh.queryText(
        `SELECT toUInt32(block_time), bitShiftRight(sig_key, 32), bitAnd(sig_key, 4294967295), instruction_index FROM ${TABLES.ingestKeys} ${where}`,
        'TabSeparated',
        { params: { t: part.map((a) => a.block_time), h: part.map((a) => a.kh >>> 0), l: part.map((a) => a.kl >>> 0), from, to } },
      );
      for (const line of text.split('\n')) if (line.length > 0) found.add(line);
    }
    if (found.size === 0) return [];
    return batch.filter((a) => found.has(`${a.block_time}\t${a.kh >>> 0}\t${a.kl >>> 0}\t${a.instruction_index}`));
  }

  /** Identities of these records that the store holds (tx_rid_by_sig → tx_by_rid), compared by signature. */
  private async storedIdentities(records: readonly Accepted[]): Promise<Set<string>> {
    // The signature index answers by primary key (sig_key), its rids by tx_by_rid's. Signatures are compared
    // here, not in SQL: a hash collision returns a row whose own signature then matches no
    // identity. Embedded, the whole set goes in one read (issue 15: one query of 40,000
    // cost about half of eight of 5,000); a server gets 5,000 per URL (its 1 MiB limit).
    const signatures = [...new Set(records.map((a) => a.signature))];
    const existing = new Set<string>();
    const chunk = this.wh.transport === 'embedded' ? signatures.length : INGEST_LOOKUP_CHUNK;
    for (let i = 0; i < signatures.length; i += chunk) {
      const stored = await this.wh.query<{ signature: string; instruction_index: number }>(
        `SELECT signature, instruction_index FROM ${SIGNATURE_RECORDS}
         WHERE sig_key IN (SELECT cityHash64(arrayJoin({sigs:Array(String)})))`,
        { params: { sigs: signatures.slice(i, i + chunk) } },
      );
      for (const r of stored) existing.add(identity(r.signature, Number(r.instruction_index)));
    }
    return existing;
  }
}
