// Point reads of records by signature, coalesced: by signature (getTransaction) and by
// signature key (decimal keys a caller computed). A key's records are found through the index
// (tx_rid_by_sig → rid → tx_by_rid, migration 110). Each
// embedded query has a fixed cost of a few milliseconds whatever it reads, and random keys
// never share granules, so one query per request caps these reads at a few hundred a
// second. Reads that arrive while a query is in flight wait and go out together as one
// `sig_key IN (...)` read: under load a batch is as large as the queue, at rest a read goes
// out at once. The keys are hashed here (the engine's cityHash64, ingest/city-hash.ts) and
// written into the statement as decimal numbers: they are UInt64s this code computed (or
// checked digit by digit), so no client text reaches the SQL, and the statement has no bound
// parameter, which is what lets it run beside others: chDB runs every bound statement of the
// process one after another, whatever its session. Each batch in flight reads on a side
// session of its own (QueryOptions.sideSession), so it never waits for the serving session's
// other statements, nor they for it. Batches in flight are read at once, each smaller: two
// by default (core/limits/questions.ts; bench/RESULTS.md, "A record in one column").
import {
  POINT_READ_BATCHES_IN_FLIGHT,
  POINT_READ_COARSE_INDEX_GRANULARITY,
  POINT_READ_GATHER_TURNS,
  QUOTED_KEY_MAX_CHARS,
  RECORD_LOOKUP_MAX_KEYS,
} from '../../../core/limits/questions.ts';
import { AppError, Errors } from '../../../core/errors.ts';
import { cityHasher, type CityHasher } from '../../../ingest/city-hash.ts';
import type { Warehouse } from '../../../warehouse/warehouse.ts';
import { signatureRecordField, unpackSignatureRecord } from '../../../warehouse/signature-records.ts';
import { toTransaction, type TxRow } from './transactions.ts';
import { isUInt64Text, uint64List } from './uint64-text.ts';
import type { Transaction } from '../types.ts';
import { TABLES } from '../../../warehouse/tables.ts';

/**
 * The coalesced point read: each stored record under one of `keys`, as its JSON array
 * (migration 090: one column decoded a granule) and its signature's key. The keys go in as
 * decimal literals (see the header). By default through the index (migration 110: the ids of
 * the keys, then their records; the key is the record's own signature's hash, so a record
 * sharing an id with an asked one answers under its own key and no lookup takes it); a
 * `table` keyed by sig_key with a record column (a benchmark's probe) is read directly.
 */
export function pointReadStatement(keys: ReadonlySet<bigint>, table?: string): string {
  if (table !== undefined) return `SELECT record, toString(sig_key) AS sk FROM ${table} WHERE sig_key IN (${uint64List(keys)})`;
  return `SELECT record, toString(cityHash64(${signatureRecordField('signature')})) AS sk FROM ${TABLES.txByRid}
    WHERE rid IN (SELECT rid FROM ${TABLES.txRidBySig} WHERE sig_key IN (${uint64List(keys)}))`;
}

/**
 * The point read's settings. One thread: a batch is a few hundred small reads, and the
 * second core is better left to the HTTP side (measured: ~20% more lookups per second than
 * two threads; after 090 two threads still gained nothing in memory, "A record in one
 * column"). No condition cache: a set of random keys never repeats. No PREWHERE (the key
 * condition already picks the granules; a first pass over sig_key only adds work) and the
 * older query analyzer (plans this one-table read in less CPU): together ~10 % less engine
 * CPU a batch (bench/RESULTS.md, "Point reads: where a getTransaction's time goes"); the
 * answer is the same. A finer primary-key search step: the search is a third of a 100-key
 * read (POINT_READ_COARSE_INDEX_GRANULARITY; "The hottest address's page").
 */
export const POINT_READ_SETTINGS = Object.freeze({
  max_threads: 1,
  use_query_condition_cache: 0,
  optimize_move_to_prewhere: 0,
  allow_experimental_analyzer: 0,
  merge_tree_coarse_index_granularity: POINT_READ_COARSE_INDEX_GRANULARITY,
});

/** A stored record, with its signature key in decimal. */
export type KeyedRow = TxRow & { sk: string };

/** A lookup waiting for the next batch; `wh` is the asking request's warehouse (bound to its budget): a batch runs on its first waiter's. */
type Waiter =
  | {
      kind: 'signature';
      signature: string;
      wh: Warehouse;
      active: ReadonlySet<string>;
      resolve: (tx: Transaction | null) => void;
      reject: (err: unknown) => void;
    }
  | { kind: 'keys'; keys: readonly string[]; wh: Warehouse; resolve: (rows: KeyedRow[]) => void; reject: (err: unknown) => void };

export interface SignatureLookupOptions {
  /** Most signatures and keys in one query (its text grows with each). */
  maxBatch?: number;
  /** Batches in flight at once, each on a side session of its own. */
  maxInFlight?: number;
  /** A table keyed by sig_key with 090's record column, read directly in place of the index (a store before 110: its tests). */
  table?: string;
}

const weight = (w: Waiter): number => (w.kind === 'signature' ? 1 : w.keys.length);

export class SignatureLookup {
  private readonly queue: Waiter[] = [];
  /** Side sessions not reading a batch now. */
  private readonly idle: number[];
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private readonly table: string | undefined;
  /** This lookup's own hasher (its registers are not shared with any other caller). */
  private readonly hasher: CityHasher = cityHasher();

  constructor(options: SignatureLookupOptions = {}) {
    this.maxBatch = options.maxBatch ?? RECORD_LOOKUP_MAX_KEYS;
    this.maxInFlight = options.maxInFlight ?? POINT_READ_BATCHES_IN_FLIGHT;
    this.table = options.table;
    this.idle = Array.from({ length: this.maxInFlight }, (_, i) => i);
  }

  /** The record of lowest instruction_index for `signature` among `active` protocols, or null. */
  find(wh: Warehouse, signature: string, active: ReadonlySet<string>): Promise<Transaction | null> {
    return new Promise((resolve, reject) => {
      this.queue.push({ kind: 'signature', signature, wh, active, resolve, reject });
      this.pump();
    });
  }

  /**
   * Every record whose signature key is one of `keys` (decimal UInt64), whatever its
   * protocol: the caller matches them to its references (a key may belong to two signatures).
   */
  byKeys(wh: Warehouse, keys: readonly string[]): Promise<KeyedRow[]> {
    if (keys.length === 0) return Promise.resolve([]);
    // Decimal UInt64s, as the engine printed them in a reference row; anything else is
    // refused here, so it can neither reach the statement nor fail the batch it would join.
    const bad: string | undefined = keys.find((k: string): boolean => !isUInt64Text(k));
    if (bad !== undefined) return Promise.reject(new Error(`not a signature key: ${JSON.stringify(bad.slice(0, QUOTED_KEY_MAX_CHARS))}`));
    return new Promise((resolve, reject) => {
      this.queue.push({ kind: 'keys', keys, wh, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.idle.length > 0 && this.queue.length > 0) {
      // Whole waiters up to maxBatch keys (at least one, however large).
      let n = 0;
      let total = 0;
      while (n < this.queue.length && (n === 0 || total + weight(this.queue[n]!) <= this.maxBatch)) total += weight(this.queue[n++]!);
      const batch = this.queue.splice(0, n);
      const session = this.idle.pop()!;
      // The session is handed back a few turns of the event loop later: requests that
      // arrived while this batch was read are parsed first, so they join the next batch
      // rather than the first of them going out alone (fewer, larger batches: each query has
      // a floor of ~2 ms of engine CPU whatever it reads). One client alone waits for nothing.
      void this.run(batch, session).finally(() =>
        afterTurns(POINT_READ_GATHER_TURNS, () => {
          this.idle.push(session);
          this.pump();
        }),
      );
    }
  }

  private async run(batch: Waiter[], session: number): Promise<void> {
    const signatures = [...new Set(batch.flatMap((w) => (w.kind === 'signature' ? [w.signature] : [])))];
    const keys = [...new Set(batch.flatMap((w) => (w.kind === 'keys' ? w.keys : [])))];
    let records: { record: string; sk: string }[];
    try {
      // Every key once: each signature's, and the keys asked for (checked by byKeys). Inside
      // the try: whatever fails here fails the batch's lookups rather than leaving them waiting.
      const set = new Set<bigint>();
      for (const s of signatures) set.add(this.keyOf(s));
      for (const k of keys) set.add(BigInt(k));
      records = await batch[0]!.wh.query<{ record: string; sk: string }>(pointReadStatement(set, this.table), {
        sideSession: session,
        settings: POINT_READ_SETTINGS,
      });
    } catch (err) {
      // A batch runs on its first waiter's warehouse, so a refusal of that request's own time
      // budget is its alone: its lookups fail, the others go out again in the next batch, under
      // their own budgets. Anything else (the engine failing the read) fails every lookup.
      const mine = err instanceof AppError && err.kind === Errors.queryTimeout ? batch.filter((w) => w.wh === batch[0]!.wh) : batch;
      for (const w of mine) w.reject(err);
      if (mine.length < batch.length) this.queue.unshift(...batch.filter((w) => w.wh !== batch[0]!.wh));
      return;
    }
    // Each record on its own: one that does not decode (written by hand, damaged) fails only
    // the lookups it may answer. Its key is its own signature's hash, which it cannot tell:
    // so the lookups of the batch that found nothing fail (rather than answer "not found"
    // when the damaged record may be theirs), and those that found their records are served.
    const rows: KeyedRow[] = [];
    let broken: { error: unknown } | undefined;
    for (const { record, sk } of records) {
      try {
        rows.push({ ...unpackSignatureRecord(record), sk });
      } catch (error) {
        broken = { error };
      }
    }
    const bySignature = new Map<string, KeyedRow[]>();
    const byKey = new Map<string, KeyedRow[]>();
    for (const r of rows) {
      for (const [map, k] of [
        [bySignature, r.signature],
        [byKey, r.sk],
      ] as const) {
        const list = map.get(k);
        if (list) list.push(r);
        else map.set(k, [r]);
      }
    }
    for (const w of batch) {
      if (broken !== undefined && (w.kind === 'keys' ? w.keys.some((k) => !byKey.has(k)) : !bySignature.has(w.signature))) {
        w.reject(broken.error);
        continue;
      }
      if (w.kind === 'keys') {
        w.resolve(w.keys.flatMap((k) => byKey.get(k) ?? []));
        continue;
      }
      let best: TxRow | undefined;
      for (const r of bySignature.get(w.signature) ?? []) {
        if (w.active.has(r.protocol_name) && (best === undefined || r.instruction_index < best.instruction_index)) best = r;
      }
      w.resolve(best ? toTransaction(best) : null);
    }
  }

  /** sig_key of a signature: cityHash64 of its UTF-8 bytes, as the engine computes it. */
  private keyOf(signature: string): bigint {
    // The hasher takes bytes by their length: anything but a string here (a number has none)
    // could spin the event loop; callers check signatures first, this is the last guard.
    if (typeof signature !== 'string') throw new TypeError('a signature must be a string');
    this.hasher.hash(signature);
    return (BigInt(this.hasher.high()) << 32n) | BigInt(this.hasher.low());
  }
}

/** Run `fn` after `turns` turns of the event loop (each lets the I/O that is ready be read). */
function afterTurns(turns: number, fn: () => void): void {
  setImmediate(turns <= 1 ? fn : () => afterTurns(turns - 1, fn));
}
