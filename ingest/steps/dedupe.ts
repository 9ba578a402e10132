// Steps 5 and 6, de-duplicate: a record whose identity (signature, instruction_index) came
// earlier in the same batch is dropped `duplicate_in_batch`; one already in the store is
// dropped `already_stored`. Dropping is what makes replaying records change no count in the
// base table or any view; the writer runs these steps and the insert in one turn, so "which
// of these are new?" and "insert them" cannot interleave.
import { SIGNATURE_RECORDS } from '../../warehouse/signature-records.ts';
import type { Warehouse } from '../../warehouse/warehouse.ts';
import { INGEST_LOOKUP_CHUNK } from '../../core/limits/ingest.ts';
import type { StoredKeys } from '../stored-keys.ts';
import type { Accepted } from './records.ts';
import { drop, ok, type BatchStep, type Drop, type Ok } from './step.ts';

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

/** Against the store: the stored-keys filter, then a read of what it cannot rule out. */
export class StoreDedupe {
  /** keys: the in-memory filter of stored keys; undefined reads the store for every batch (a cluster, or turned off). */
  constructor(
    private readonly wh: Warehouse,
    private readonly keys: StoredKeys | undefined,
  ) {}

  /** Build the filter now (one read of every stored key) rather than at the first batch. */
  async prepare(): Promise<void> {
    await this.keys?.catchUp();
  }

  readonly step: BatchStep<Accepted> = async (batch) => {
    // The signature lookup table answers by primary key (sig_key). Signatures are compared
    // here, not in SQL: a hash collision returns a row whose own signature then matches no
    // identity, and the SQL filter on 5000 strings cost as much as the lookup itself.
    // PREWHERE reads the signature column only where a key matched: for new records (nearly
    // all) the read stays on the 8-byte keys.
    // Embedded, the whole batch goes in one read (issue 15: 40,000 signatures in one query
    // cost about half of eight 5,000-signature queries). A server receives the bound
    // signatures in the URL: 5000 of them (~450 KiB) stay under its 1 MiB URI limit.
    // The stored-keys filter (ingest/stored-keys.ts, where its correctness with other writers
    // is argued) first learns every key committed since the last batch, then rules out the
    // signatures it has never seen: only the rest (re-deliveries, ~1 % false positives) are read.
    let maybeStored = batch;
    const keys = this.keys;
    if (keys !== undefined) {
      await keys.catchUp();
      maybeStored = batch.filter((a) => keys.mayContain(a.kh, a.kl));
    }
    const signatures = [...new Set(maybeStored.map((a) => a.signature))];
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
    if (existing.size === 0) return batch.map(ok);
    return batch.map((a) => (existing.has(identity(a.signature, a.instruction_index)) ? drop('already_stored') : ok(a)));
  };

  /** Records this writer stored: the filter knows them without reading them back. */
  learn(stored: readonly Accepted[]): void {
    if (this.keys === undefined) return;
    for (const a of stored) this.keys.add(a.kh, a.kl);
  }
}
