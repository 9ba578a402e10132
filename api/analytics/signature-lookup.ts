// Point lookups by signature, coalesced. Each embedded query has a fixed cost of a few
// milliseconds whatever it reads, and random signatures never share granules, so one
// query per request caps getTransaction at a few hundred a second. Lookups that arrive
// while a query is in flight wait and go out together as one `sig_key IN (...)` read:
// under load a batch is as large as the queue, at rest a lookup goes out at once.
import type { Warehouse } from '../../warehouse/warehouse.ts';
import { toTransaction, TX_COLUMNS, type TxRow } from './transactions.ts';
import type { Transaction } from './types.ts';
import { TABLES } from '../../warehouse/tables.ts';

interface Waiter {
  signature: string;
  /** The asking request's warehouse (bound to its budget): a batch runs on its first waiter's. */
  wh: Warehouse;
  active: ReadonlySet<string>;
  resolve: (tx: Transaction | null) => void;
  reject: (err: unknown) => void;
}

export interface SignatureLookupOptions {
  /** Most signatures in one query (its text grows with each). */
  maxBatch?: number;
  /** Queries in flight at once: concurrent embedded queries contend, so one by default. */
  maxInFlight?: number;
}

export class SignatureLookup {
  private readonly queue: Waiter[] = [];
  private inFlight = 0;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;

  constructor(options: SignatureLookupOptions = {}) {
    this.maxBatch = options.maxBatch ?? 200;
    this.maxInFlight = options.maxInFlight ?? 1;
  }

  /** The record of lowest instruction_index for `signature` among `active` protocols, or null. */
  find(wh: Warehouse, signature: string, active: ReadonlySet<string>): Promise<Transaction | null> {
    return new Promise((resolve, reject) => {
      this.queue.push({ signature, wh, active, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight += 1;
      void this.run(batch).finally(() => {
        this.inFlight -= 1;
        this.pump();
      });
    }
  }

  private async run(batch: Waiter[]): Promise<void> {
    const unique = [...new Set(batch.map((w) => w.signature))];
    const params: Record<string, string> = {};
    // One bound parameter per signature: the hashes fold to constants, so the primary
    // key is used (an array parameter mapped through cityHash64 is not).
    const keys = unique.map((s, i) => {
      params[`s${i}`] = s;
      return `cityHash64({s${i}:String})`;
    });
    let rows: TxRow[];
    try {
      rows = await batch[0]!.wh.query<TxRow>(
        `SELECT ${TX_COLUMNS} FROM ${TABLES.txBySignature} WHERE sig_key IN (${keys.join(', ')})`,
        // One thread: a batch is a few hundred small reads, and the second core is better
        // left to the HTTP side (measured: ~20% more lookups per second than two threads).
        // No condition cache: a set of random keys never repeats.
        { params, settings: { max_threads: 1, use_query_condition_cache: 0 } },
      );
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    const bySignature = new Map<string, TxRow[]>();
    for (const r of rows) {
      const list = bySignature.get(r.signature);
      if (list) list.push(r);
      else bySignature.set(r.signature, [r]);
    }
    for (const w of batch) {
      let best: TxRow | undefined;
      for (const r of bySignature.get(w.signature) ?? []) {
        if (w.active.has(r.protocol_name) && (best === undefined || r.instruction_index < best.instruction_index)) best = r;
      }
      w.resolve(best ? toTransaction(best) : null);
    }
  }
}
