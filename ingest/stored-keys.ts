// An in-memory filter of the sig_keys stored in tx_rid_by_sig, so that de-duplication
// reads the store only for signatures that may already be there (issue 15: the read per
// batch cost about as much as the insert; with the filter it covers the few records the
// filter cannot rule out, i.e. real re-deliveries and ~1% false positives).
//
// Why it never lets a duplicate through, with other writers too:
//  - A Bloom filter has no false negatives for keys it was given. The danger is a key that
//    reached the store without this process hearing of it: another IngestPipeline, another
//    process on the same server, a view repair, a seed.
//  - Every key reaches tx_rid_by_sig by an INSERT (its view or a repair's INSERT ...
//    SELECT), and every INSERT commits as new parts that take a block number from the table's
//    counter at the moment they become visible (under the table's parts lock: a part with a
//    higher number is never visible before one with a lower number). Merges and mutations
//    keep the block range of what they combine, in the part's name
//    (partition_minblock_maxblock_level[_mutation]).
//  - So before each batch's check, catchUp() reads the keys of every part whose max block is
//    above the highest block already read (the watermark), in one query: the engine keeps
//    only those parts (a filter on the _part virtual column), and they are read in one
//    snapshot, so nothing committed before that query is missed. A merged part that took in
//    an unread block is read whole: more keys than needed, never fewer.
//  - What the de-duplication promised before still holds: everything committed before the
//    check is seen. Two writers racing on the same identity at the same moment were never
//    covered (docs/kafka.md, "Limits").
//  - If the counter went backwards (the table was dropped and made again, or truncated and the
//    server restarted), the watermark is meaningless: seeing the table's newest block below
//    it, the filter is rebuilt from scratch.
//  - A cluster (Replicated tables) allocates block numbers before the part is visible, and
//    per shard: there the filter is not used (storedKeysFor returns undefined) and every
//    batch reads the store, as before.
// False positives only cost a read: the exact check compares signatures in the store.
import { blockNumbersFollowCommits, type Warehouse } from '../warehouse/warehouse.ts';
import { STORED_KEYS_BITS_PER_KEY, STORED_KEYS_MIN_CAPACITY, STORED_KEYS_PROBES, STORED_KEYS_READ_SLICE } from '../core/limits/ingest.ts';
import { TABLES } from '../warehouse/tables.ts';

/** Bits of one word of a layer: bit b is in word b >>> 5, at place b & (WORD_BITS - 1). */
const WORD_BITS = 2 ** 5;
/** The character code of '0': a decimal digit's value is its code less this. */
const DIGIT_ZERO = '0'.charCodeAt(0);

/** One Bloom filter layer, probes derived from the key's two 32-bit halves (Kirsch-Mitzenmacher). */
class Layer {
  readonly bits: Uint32Array;
  private readonly mask: number;
  count = 0;
  constructor(readonly capacity: number) {
    // A power of two of bits, at least capacity * STORED_KEYS_BITS_PER_KEY.
    let n = WORD_BITS;
    while (n < capacity * STORED_KEYS_BITS_PER_KEY) n *= 2;
    this.bits = new Uint32Array(n / WORD_BITS);
    this.mask = n - 1;
  }

  add(hi: number, lo: number): void {
    const bits = this.bits;
    const step = hi | 1;
    let h = lo;
    for (let i = 0; i < STORED_KEYS_PROBES; i++) {
      const b = (h & this.mask) >>> 0;
      bits[b >>> 5]! |= 1 << (b & (WORD_BITS - 1));
      h = (h + step) | 0;
    }
    this.count += 1;
  }

  has(hi: number, lo: number): boolean {
    const bits = this.bits;
    const step = hi | 1;
    let h = lo;
    for (let i = 0; i < STORED_KEYS_PROBES; i++) {
      const b = (h & this.mask) >>> 0;
      if ((bits[b >>> 5]! & (1 << (b & (WORD_BITS - 1)))) === 0) return false;
      h = (h + step) | 0;
    }
    return true;
  }
}

export class StoredKeys {
  private layers: Layer[] = [];
  /** Highest block number whose parts' keys are all in the filter; -1: nothing read yet. */
  private watermark = -1;
  private running: Promise<void> | undefined;
  /** Keys read from the store by the last catchUp (for tests and the benchmark). */
  lastRead = 0;

  constructor(private readonly wh: Warehouse) {}

  /** Whether the key may be stored; false means certainly not (as of the last catchUp). */
  mayContain(hi: number, lo: number): boolean {
    for (const l of this.layers) if (l.has(hi, lo)) return true;
    return false;
  }

  /** Keys known to be stored now (a batch just inserted); catchUp would read them anyway. */
  add(hi: number, lo: number): void {
    let top = this.layers[this.layers.length - 1];
    if (top === undefined || top.count >= top.capacity) {
      // A full layer keeps its rate; a new one twice the size takes what follows.
      const total = this.layers.reduce((n, l) => n + l.count, 0);
      top = new Layer(Math.max(STORED_KEYS_MIN_CAPACITY, 2 * total));
      this.layers.push(top);
    }
    top.add(hi, lo);
  }

  get size(): number {
    return this.layers.reduce((n, l) => n + l.count, 0);
  }

  /**
   * Read the keys of every part committed since the last call. Concurrent callers share one
   * read; a caller arriving during a read waits for it and then reads again, so its own
   * check sees everything committed before it called.
   */
  async catchUp(): Promise<void> {
    while (this.running !== undefined) await this.running.catch(() => undefined);
    const run = this.read();
    this.running = run;
    try {
      await run;
    } finally {
      if (this.running === run) this.running = undefined;
    }
  }

  private async read(): Promise<void> {
    // The newest block first: every part committed up to it is visible to the reads below,
    // whole or inside a merged part, so once they are done the watermark can move to it.
    const [top] = await this.wh.query<{ b: string; n: string }>(
      `SELECT max(max_block_number) AS b, sum(rows) AS n FROM system.parts
       WHERE database = currentDatabase() AND table = {t:String} AND active`,
      { params: { t: TABLES.txRidBySig } },
    );
    const newest = Number(top?.b ?? 0);
    if (newest < this.watermark) {
      // The counter went backwards (the table was made again): start over.
      this.layers = [];
      this.watermark = -1;
    }
    if (newest === this.watermark) return;
    let ranges = 1;
    if (this.layers.length === 0) {
      // Sized for the store as it is, so the first layer holds it at the designed rate; read
      // in slices of the key space so that no answer is one huge string.
      const rows = Number(top?.n ?? 0);
      this.layers.push(new Layer(Math.max(STORED_KEYS_MIN_CAPACITY, 2 * rows)));
      ranges = Math.max(1, Math.ceil(rows / STORED_KEYS_READ_SLICE));
    }
    let n = 0;
    const width = 2n ** 64n / BigInt(ranges);
    for (let r = 0; r < ranges; r++) {
      const lo = BigInt(r) * width;
      const hi = r === ranges - 1 ? 2n ** 64n - 1n : BigInt(r + 1) * width - 1n;
      // Only parts holding a block above the watermark are read (the engine selects parts by
      // their name before reading any column).
      const text = await this.wh.queryText(
        `SELECT bitShiftRight(sig_key, 32), bitAnd(sig_key, 4294967295) FROM ${TABLES.txRidBySig}
         WHERE toUInt64(splitByChar('_', _part)[3]) > {w:Int64} AND sig_key BETWEEN {lo:UInt64} AND {hi:UInt64}`,
        'TabSeparated',
        { params: { w: this.watermark, lo: lo.toString(), hi: hi.toString() } },
      );
      n += this.addText(text);
    }
    this.watermark = newest;
    this.lastRead = n;
  }

  /** Add "high TAB low NEWLINE" rows; returns how many. */
  private addText(text: string): number {
    let n = 0;
    let hi = 0;
    let v = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 9) {
        hi = v;
        v = 0;
      } else if (c === 10) {
        this.add(hi, v);
        n += 1;
        v = 0;
      } else {
        v = v * 10 + (c - DIGIT_ZERO);
      }
    }
    return n;
  }
}

/** A filter for one pipeline over wh (each learns from the store, so none needs another's);
 *  undefined where block numbers do not follow commits (a cluster). */
export function storedKeysFor(wh: Warehouse): StoredKeys | undefined {
  return blockNumbersFollowCommits(wh) ? new StoredKeys(wh) : undefined;
}
