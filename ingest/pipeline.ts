// The one ingest pipeline every source feeds (Kafka, HTTP NDJSON, files, demo records).
// Each step returns a result rather than throwing: a bad record is rejected with its reason
// and sent to the dead-letter sink; it never stops the stream. Writes are serialised per
// process so that "which of these are new?" and "insert them" cannot interleave, which is
// what makes replaying records change no count in the base table or any view.
import { AppError, Errors } from '../core/errors.ts';
import type { DataChangeObserver, IngestObserver } from '../core/observers.ts';
import type { Logger } from '../core/logger.ts';
import type { DataVersion } from '../warehouse/data-version.ts';
import type { ProtocolRegistry } from '../warehouse/protocol-registry.ts';
import { isStorageFull, type Warehouse } from '../warehouse/warehouse.ts';
import { IngestJournal } from './ingest-journal.ts';
import { storedKeysFor, type StoredKeys } from './stored-keys.ts';
import { positionText, type Position, type Rejection, type RejectionCode } from './rejection.ts';
import { normaliseRecord, protocolLookup, type IngestRecord } from './record-schema.ts';
import { cityHasher } from './city-hash.ts';
import { parseRecord, recordText, type RecordContext } from './parse-record.ts';
import { DEAD, OK_ROW, ParsePool, type ParseReply, type ParseTask } from './parse-pool.ts';
import { BASE_COLUMNS, TABLES, type BaseRow } from '../warehouse/tables.ts';
import { WarehouseError } from '../warehouse/warehouse.ts';
import type { Bucket } from '../warehouse/view-repair.ts';

export interface RawRecord {
  /** The record as received: bytes/text to parse, or an already-parsed value. */
  value: string | Uint8Array | object;
  /** Where it came from, for error reports and the dead-letter sink. */
  position: Position;
}

export type { Rejection };

export interface IngestReport {
  /** Records newly stored by this call (DESIGN.md section 4: `accepted` = newly stored). */
  accepted: number;
  /** Valid records that were already stored, or repeated earlier in the same call; they
   *  change nothing. Valid records = accepted + duplicates. */
  duplicates: number;
  rejected: Rejection[];
}

/** Told what each ingest call did, for metrics; the pipeline works the same without one. */
export interface PipelineOptions {
  maxRecordBytes: number;
  batchRows: number;
  observer?: IngestObserver;
  /** Names this writer in the ingest journal; unfinished inserts are repaired per writer. */
  writerId?: string;
  /**
   * Hand records that need no normalising to the engine as received (default true).
   * false re-serialises every record from its normalised row: the path before issue 15,
   * kept for the benchmark's comparison and as the retry of a batch the engine refused.
   */
  rawInsert?: boolean;
  /** Rule out never-stored records with the in-memory filter of stored keys (default true);
   *  false reads the store for every batch, as before issue 15 (the benchmark's comparison). */
  storedKeysFilter?: boolean;
  /** Worker threads that parse and check records beside the engine's insert (ingest/parse-pool.ts;
   *  INGEST_PARSE_WORKERS). 0 (the default here) parses on the calling thread. */
  parseWorkers?: number;
  /** The workers' module (tests: one that fails); default ingest/parse-worker.ts. */
  parseWorkerEntry?: URL;
}

type ChangeListener = DataChangeObserver['dataChanged'];

/**
 * A valid record: what de-duplication, routing and the journal read (identity, protocol,
 * block time), its normalised row, and, when the record as received needs no normalising,
 * its original JSON text, which goes to the engine as it came. A record parsed on a worker
 * comes without its row when it has a line: rowOf rebuilds the row from the line if a
 * re-serialised insert ever needs it (the same text parses to the same row).
 */
interface Accepted {
  signature: string;
  instruction_index: number;
  protocol_name: string;
  block_time: number;
  row?: BaseRow;
  line?: string | Buffer;
  /** sig_key = cityHash64(signature), high and low halves: what the stored-keys filter takes. */
  kh: number;
  kl: number;
  /** Set once this row was inserted (not a duplicate). */
  stored?: boolean;
}
/** One ingest call as the write queue sees it: its first failure stops the rest of it. */
interface Call {
  failure: { err: unknown } | undefined;
}
interface Queued {
  rows: Accepted[];
  call: Call;
  resolve: (duplicates: number) => void;
  reject: (err: unknown) => void;
}
type Step = { kind: 'ok'; accepted: Accepted } | { kind: 'dead-letter'; code: RejectionCode; detail: string };
type Dead = Rejection & { payload: string };

// How records reach the engine (issue 15; figures in bench/RESULTS.md, "Ingest at the
// engine's speed", from `npx tsx bench/ingest-paths.ts`). Three paths were measured on the
// same records into the same migrated store, against the engine's own insert of the same
// NDJSON bytes:
//  - JSONEachRow of the record's original text, built into one buffer (this one): the
//    engine parses exactly the bytes it would parse on its own; building the buffer is a
//    copy. Records that need normalising (a log_messages array, a missing accounts_count,
//    a slot number past 2^53, an object handed in by a caller) are re-serialised from their
//    normalised row, one by one, in the same buffer.
//  - RowBinary built in JS: the engine's parse is cheaper, but encoding ~600 bytes of
//    strings a record in JS costs more than the engine saves (and it needs every record
//    normalised into an object first).
//  - a staged file read by the engine (INSERT ... SELECT FROM file()): the same parse plus a
//    write and a read of the whole batch, and a temporary file to clean up after a crash.
// The engine's JSON reader is stricter than JSON.parse in two ways a valid record can hit:
// a number written 1e3 or 5000.0 and a key given twice. An insert it refuses for its input
// (INSERT_FORMAT_ERRORS) is repaired like any failed insert and the batch goes again with
// every record re-serialised (JSON.stringify writes canonical numbers, one key each), so
// such a record costs speed, never correctness.
const NL = Buffer.from('\n');
/** Engine errors of reading the input itself (CANNOT_PARSE_*, INCORRECT_DATA, ...). */
const INSERT_FORMAT_ERRORS = new Set([6, 26, 27, 32, 38, 41, 69, 70, 72, 117, 130, 131]);
/** The insert's settings: views in parallel; fields the base table does not take (a
 *  producer's extra keys, a `date` it has no say over) are skipped, as the named column
 *  list already skips them when rows are objects. */
const INSERT_SETTINGS = { parallel_view_processing: 1, input_format_skip_unknown_fields: 1 } as const;

class FormatRefused extends Error {}

const identity = (signature: string, index: number): string => `${signature}#${index}`;
const LOOKUP_CHUNK = 5000;
/** Records parsed between two yields to the event loop while a batch is being stored. */
const SLICE = 500;
/** Parsed rows handed to the write queue at a time (the writer groups them up to batchRows). */
const HAND_ROWS = 5000;
/** Records per chunk sent to a parse worker, and chunks in flight per ready worker. */
const PARSE_CHUNK = 2000;
const CHUNKS_PER_WORKER = 2;

export class IngestPipeline {
  private writeTurn: Promise<unknown> = Promise.resolve();
  private readonly journal: IngestJournal;
  /** Unfinished inserts (of a crashed earlier process, or a failed insert) still to repair. */
  private recovered = false;
  private pendingRepairs: { id: string; buckets: Bucket[] }[] = [];
  private readonly changeListeners = new Set<ChangeListener>();
  /** Write turns waiting behind the running one. */
  private queued = 0;
  /** Parsed rows waiting for the writer, and whether a writer turn is scheduled or running. */
  private readonly queue: Queued[] = [];
  private draining = false;
  /** A stored batch whose journal 'done' row rides on the next batch's 'begin' (one
   *  journal write per batch while batches queue; written alone when none follows). */
  private pendingDone: string | undefined;
  /** Keys stored in the warehouse, shared by the process's pipelines over it; unset in a cluster. */
  private readonly storedKeys: StoredKeys | undefined;
  /** Parse workers (options.parseWorkers > 0); the main thread parses while none is ready. */
  private readonly pool: ParsePool | undefined;
  /** Records a parse worker answered for (tests and benchmarks check the workers were used). */
  recordsParsedOnWorkers = 0;
  /** This pipeline's sig_key hasher (records parsed on this thread). */
  private readonly hasher = cityHasher();

  constructor(
    private readonly wh: Warehouse,
    private readonly registry: ProtocolRegistry,
    private readonly dataVersion: DataVersion,
    private readonly log: Logger,
    private readonly options: PipelineOptions,
  ) {
    this.journal = new IngestJournal(wh, options.writerId ?? 'default', log);
    this.storedKeys = options.storedKeysFilter === false ? undefined : storedKeysFor(wh);
    const workers = options.parseWorkers ?? 0;
    this.pool = workers > 0 ? new ParsePool(workers, log, options.parseWorkerEntry) : undefined;
  }

  /** Parse workers ready to take records (0 while they start, or when none could start). */
  get parseWorkersReady(): number {
    return this.pool?.readyWorkers ?? 0;
  }

  /** Stop the parse workers (they never keep a process alive; this frees them sooner). */
  async close(): Promise<void> {
    await this.pool?.close();
  }

  /**
   * Be told what each committed write changed (live subscriptions, the freshness watermark).
   * Listeners run synchronously on the write path: they must only record and schedule.
   */
  observeChanges(observer: DataChangeObserver): () => void {
    const listener: ChangeListener = (c) => observer.dataChanged(c);
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  private reportChange(batchId: string, buckets: readonly Bucket[], rows: readonly Accepted[]): void {
    if (this.changeListeners.size === 0) return;
    const newest = new Map<string, number>();
    for (const r of rows) newest.set(r.protocol_name, Math.max(newest.get(r.protocol_name) ?? 0, r.block_time));
    const change = {
      buckets: buckets.map((b) => ({ protocolName: b.protocol_name, hourStart: b.hour_start })),
      newestBlockTimes: [...newest].map(([protocolName, blockTime]) => ({ protocolName, blockTime })),
      committedAt: Date.now(),
      batchId,
    };
    for (const l of this.changeListeners) {
      try {
        l(change);
      } catch (err) {
        // A listener's failure must not fail a write that is already committed.
        this.log.error({ err }, 'data-change listener failed');
      }
    }
  }

  /**
   * Do now what the first write would otherwise do first: repair unfinished inserts and
   * build the stored-keys filter (one read of every stored key); start the parse workers. Optional; a service calls it
   * at start so that its first batch does not wait for the filter.
   */
  async prepare(): Promise<void> {
    this.pool?.start();
    await this.serialised(async () => {
      await this.repairUnfinished();
      await this.storedKeys?.catchUp();
    });
  }

  /** Validate, de-duplicate and store records; resolves once stored rows are queryable. */
  async ingest(records: readonly RawRecord[], source: string): Promise<IngestReport> {
    const entries = await this.registry.list();
    const ctx: RecordContext = { maxRecordBytes: this.options.maxRecordBytes, known: protocolLookup(entries), hasher: this.hasher };
    const dead: Dead[] = [];
    const call: Call = { failure: undefined };
    const handed: Promise<number>[] = [];
    let valid = 0;
    // Records are parsed and checked while earlier ones are being stored: the engine inserts
    // off the event loop (chDB runs it on a worker thread), so JavaScript's share (JSON.parse,
    // validation, hashing) overlaps the engine's instead of adding to it. Parsed rows are
    // handed to the write queue every HAND_ROWS; the writer takes everything queued (this
    // call's and other calls') as one insert. Parsing yields to the event loop every SLICE
    // records while there is a write in hand, so the writer's steps run without waiting for
    // the whole call to be parsed. With parse workers, chunks of PARSE_CHUNK records are
    // parsed on them, CHUNKS_PER_WORKER per worker ahead, and taken back in order: the main
    // thread's share shrinks to assembling the answers, and the rest runs on another core.
    let chunk: Accepted[] = [];
    const take = (a: Accepted): void => {
      chunk.push(a);
      valid += 1;
      if (chunk.length >= Math.min(HAND_ROWS, this.options.batchRows)) {
        handed.push(this.enqueue(chunk, call));
        chunk = [];
      }
    };
    const refuse = (rec: RawRecord, code: RejectionCode, detail: string): void => {
      dead.push({ code, detail, position: rec.position, payload: payloadOf(rec.value, code) });
    };
    const inThread = async (from: number, to: number): Promise<void> => {
      for (let i = from; i < to; i++) {
        if (call.failure !== undefined) break;
        const rec = records[i]!;
        const step = this.parseAndCheck(rec, ctx);
        if (step.kind === 'ok') take(step.accepted);
        else refuse(rec, step.code, step.detail);
        if (i % SLICE === SLICE - 1 && handed.length > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      }
    };
    const pool = this.pool;
    if (records.length >= PARSE_CHUNK) pool?.start();
    const workers = pool?.readyWorkers ?? 0;
    if (pool === undefined || workers === 0 || records.length < PARSE_CHUNK) {
      await inThread(0, records.length);
    } else {
      const pairs: [string, string][] = entries.map((e) => [e.protocolName, e.programId]);
      const chunks = Math.ceil(records.length / PARSE_CHUNK);
      const ahead: Promise<ParseReply | undefined>[] = [];
      const send = (c: number): Promise<ParseReply | undefined> => {
        const task = parseTask(records, c * PARSE_CHUNK, Math.min(records.length, (c + 1) * PARSE_CHUNK));
        // A chunk a worker cannot take (mixed or parsed values) or could not parse (it failed)
        // is parsed here instead: the same function, the same answers.
        if (task === undefined) return Promise.resolve(undefined);
        return pool.parse({ ...task, known: pairs, maxRecordBytes: this.options.maxRecordBytes }).catch(() => undefined);
      };
      let sent = 0;
      while (sent < chunks && sent < workers * CHUNKS_PER_WORKER) ahead.push(send(sent++));
      for (let c = 0; c < chunks; c++) {
        if (call.failure !== undefined) break;
        const reply = await ahead[c]!;
        if (sent < chunks) ahead.push(send(sent++));
        const from = c * PARSE_CHUNK;
        const to = Math.min(records.length, from + PARSE_CHUNK);
        if (reply === undefined) {
          await inThread(from, to);
          continue;
        }
        this.recordsParsedOnWorkers += to - from;
        let s = 0;
        let r = 0;
        let d = 0;
        for (let i = from; i < to; i++) {
          const k = i - from;
          const rec = records[i]!;
          const status = reply.status[k]!;
          if (status === DEAD) {
            refuse(rec, reply.dead[d]! as RejectionCode, reply.dead[d + 1]!);
            d += 2;
            continue;
          }
          const signature = reply.sigs[s++]!;
          if (status === OK_ROW) {
            const row = reply.rows[r++]!;
            take({ signature, instruction_index: row.instruction_index, protocol_name: row.protocol_name, block_time: row.block_time, row, kh: reply.kh[k]!, kl: reply.kl[k]! });
          } else {
            take({
              signature, instruction_index: reply.ix[k]!, protocol_name: pairs[reply.proto[k]!]![0], block_time: reply.bt[k]!,
              line: rawLine(rec.value as string | Uint8Array), kh: reply.kh[k]!, kl: reply.kl[k]!,
            });
          }
        }
      }
      // A call stopped by a failure leaves its chunks in flight to finish unobserved (send
      // catches their failures).
    }
    if (chunk.length > 0 && call.failure === undefined) handed.push(this.enqueue(chunk, call));
    const outcomes = await Promise.allSettled(handed);
    if (call.failure !== undefined) {
      const { err } = call.failure;
      // A full disk is the operator's to fix, not a bug: said as such, with what was kept.
      if (isStorageFull(err)) {
        throw new AppError(Errors.storageFull, 'the store is out of disk space: this write was not completed (earlier batches of it stay stored, '
          + 'and the views are repaired before the next write); send it again once space is freed', { cause: err, retryAfterSeconds: 60 });
      }
      throw err;
    }
    let duplicates = 0;
    for (const o of outcomes) if (o.status === 'fulfilled') duplicates += o.value;
    if (dead.length > 0) await this.deadLetter(source, dead);
    const accepted = valid - duplicates;
    this.options.observer?.observeIngest(source, accepted, dead.length, duplicates);
    return { accepted, duplicates, rejected: dead.map(({ code, detail, position }) => ({ code, detail, position })) };
  }

  /**
   * Queue rows for the writer; resolves with how many of them were duplicates. Group commit:
   * the writer takes every queued chunk (up to batchRows rows) as one batch, i.e. one
   * de-duplication check, one journal write, one insert, whichever calls they came from
   * (Kafka's concurrent partitions). If that insert fails, every call with rows in it fails
   * (and is retried by its source; de-duplication makes the retry safe), and the call's
   * chunks still queued are dropped: a call stops at its first failure, as before.
   */
  private enqueue(rows: Accepted[], call: Call): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.queue.push({ rows, call, resolve, reject });
      if (!this.draining) {
        this.draining = true;
        this.serialised(() => this.drain()).catch((err: unknown) => this.log.error({ err }, 'ingest writer failed'));
      }
    });
  }

  /** The writer: stores queued chunks, grouped, until the queue is empty. */
  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const group: Queued[] = [];
        let n = 0;
        while (this.queue.length > 0) {
          const next = this.queue[0]!;
          if (next.call.failure !== undefined) {
            this.queue.shift();
            next.reject(next.call.failure.err);
            continue;
          }
          if (group.length > 0 && n + next.rows.length > this.options.batchRows) break;
          this.queue.shift();
          group.push(next);
          n += next.rows.length;
        }
        if (group.length === 0) continue;
        const rows = group.length === 1 ? group[0]!.rows : group.flatMap((g) => g.rows);
        try {
          try {
            await this.storeBatch(rows, this.options.rawInsert ?? true);
          } catch (err) {
            if (!(err instanceof FormatRefused)) throw err;
            this.log.warn({ err: err.cause }, 'the engine refused a batch as received; storing it re-serialised');
            await this.storeBatch(rows, false);
          }
        } catch (err) {
          for (const g of group) {
            g.call.failure ??= { err };
            g.reject(err);
          }
          continue;
        }
        for (const g of group) {
          let stored = 0;
          for (const a of g.rows) if (a.stored === true) stored += 1;
          g.resolve(g.rows.length - stored);
        }
      }
    } finally {
      this.draining = false;
    }
  }

  private parseAndCheck(rec: RawRecord, ctx: RecordContext): Step {
    const result = parseRecord(rec.value, ctx);
    if (result.kind !== 'ok') return { kind: 'dead-letter', code: result.code, detail: result.reason };
    const p = result.value;
    const { row } = p;
    const line = p.asReceived ? rawLine(rec.value as string | Uint8Array) : undefined;
    return { kind: 'ok', accepted: { signature: row.signature, instruction_index: row.instruction_index, protocol_name: row.protocol_name, block_time: row.block_time, row, line, kh: p.kh, kl: p.kl } };
  }

  private serialised<T>(fn: () => Promise<T>): Promise<T> {
    this.queued += 1;
    const turn = (): Promise<T> => {
      this.queued -= 1;
      return fn();
    };
    const run = this.writeTurn.then(turn, turn);
    this.writeTurn = run.catch(() => undefined);
    return run;
  }

  /** Write the 'done' row that was waiting for a next batch, when none will carry it. */
  private async flushDone(): Promise<void> {
    const id = this.pendingDone;
    if (id === undefined) return;
    this.pendingDone = undefined;
    await this.journal.done(id);
  }

  /**
   * Make the views agree with the base table where an insert did not finish, before any
   * de-duplication relies on them. Runs once per process (for a crashed predecessor) and
   * after any failed insert; throws while the warehouse cannot do it, so no batch is
   * stored on top of an inconsistent state.
   */
  private async repairUnfinished(): Promise<void> {
    if (!this.recovered) {
      if ((await this.journal.recover()) > 0) this.dataVersion.bump();
      this.recovered = true;
    }
    while (this.pendingRepairs.length > 0) {
      const next = this.pendingRepairs[0]!;
      await this.journal.repair(next.id, next.buckets);
      this.pendingRepairs.shift();
      this.dataVersion.bump();
      this.reportChange(next.id, next.buckets, []);
    }
  }

  /** Insert the rows not already stored; returns how many were duplicates. */
  private async storeBatch(batch: Accepted[], raw: boolean): Promise<number> {
    try {
      return await this.storeBatchOnce(batch, raw);
    } finally {
      // Nothing queued behind to carry a deferred 'done' (or this batch failed): write it now.
      if ((this.queued === 0 && this.queue.length === 0) || this.pendingRepairs.length > 0) await this.flushDone().catch((err) => this.log.error({ err }, 'journal done write failed'));
    }
  }

  private async storeBatchOnce(batch: Accepted[], raw: boolean): Promise<number> {
    await this.repairUnfinished();
    // Within the batch: first occurrence of an identity wins. Keyed by the signature string
    // the row already holds (no "signature#index" string built per record: that allocation
    // was a visible share of the pipeline's JavaScript time).
    const seen = new Map<string, number | Set<number>>();
    const unique: Accepted[] = [];
    for (const a of batch) {
      const { signature, instruction_index: ix } = a;
      const prev = seen.get(signature);
      if (prev === undefined) {
        seen.set(signature, ix);
      } else if (typeof prev === 'number') {
        if (prev === ix) continue;
        seen.set(signature, new Set([prev, ix]));
      } else {
        if (prev.has(ix)) continue;
        prev.add(ix);
      }
      unique.push(a);
    }
    // Against the store: the signature lookup table answers by primary key (sig_key).
    // Signatures are compared here, not in SQL: a hash collision returns a row whose own
    // signature then matches no identity, and the SQL filter on 5000 strings cost as much
    // as the lookup itself. PREWHERE reads the signature column only where a key matched:
    // for new records (nearly all) the read stays on the 8-byte keys.
    // Embedded, the whole batch goes in one read (issue 15: 40,000 signatures in one query
    // cost about half of eight 5,000-signature queries). A server receives the bound
    // signatures in the URL: 5000 of them (~450 KiB) stay under its 1 MiB URI limit.
    // The stored-keys filter (ingest/stored-keys.ts, where its correctness with other writers
    // is argued) first learns every key committed since the last batch, then rules out the
    // signatures it has never seen: only the rest (re-deliveries, ~1 % false positives) are read.
    let maybeStored: Accepted[] = unique;
    if (this.storedKeys !== undefined) {
      await this.storedKeys.catchUp();
      const keys = this.storedKeys;
      maybeStored = unique.filter((a) => keys.mayContain(a.kh, a.kl));
    }
    const signatures = [...new Set(maybeStored.map((a) => a.signature))];
    const existing = new Set<string>();
    const chunk = this.wh.transport === 'embedded' ? signatures.length : LOOKUP_CHUNK;
    for (let i = 0; i < signatures.length; i += chunk) {
      const stored = await this.wh.query<{ signature: string; instruction_index: number }>(
        `SELECT signature, instruction_index FROM ${TABLES.txBySignature}
         PREWHERE sig_key IN (SELECT cityHash64(arrayJoin({sigs:Array(String)})))`,
        { params: { sigs: signatures.slice(i, i + chunk) } },
      );
      for (const r of stored) existing.add(identity(r.signature, Number(r.instruction_index)));
    }
    const fresh = existing.size === 0 ? unique : unique.filter((a) => !existing.has(identity(a.signature, a.instruction_index)));
    if (fresh.length > 0) {
      const payload = insertPayload(fresh, raw);
      // An INSERT into a table with views is not atomic across them: journal it so an
      // insert that stops part-way (crash, failing view) is repaired before the next one.
      // The previous batch's 'done' rides on this 'begin' when it was deferred.
      const carried = this.pendingDone;
      this.pendingDone = undefined;
      const entry = await this.journal.begin(fresh, carried);
      try {
        await this.wh.insertBytes(TABLES.transactions, payload.bytes, 'JSONEachRow', { columns: BASE_COLUMNS, settings: INSERT_SETTINGS });
      } catch (err) {
        this.pendingRepairs.push(entry);
        if (payload.raw > 0 && err instanceof WarehouseError && err.clickhouseCode !== undefined && INSERT_FORMAT_ERRORS.has(err.clickhouseCode)) {
          throw new FormatRefused('insert refused for its input', { cause: err });
        }
        throw err;
      }
      // While another batch waits its turn, its 'begin' carries this 'done' (one journal
      // write per batch); otherwise storeBatch writes it before returning.
      this.pendingDone = entry.id;
      for (const a of fresh) {
        a.stored = true;
        this.storedKeys?.add(a.kh, a.kl);
      }
      this.options.observer?.observeBatch(fresh.length);
      this.dataVersion.bump();
      this.reportChange(entry.id, entry.buckets, fresh);
    }
    return batch.length - fresh.length;
  }

  private async deadLetter(source: string, dead: Dead[]): Promise<void> {
    try {
      await this.wh.insert(TABLES.deadLetters, dead.map((d) => ({ source, position: positionText(d.position), code: d.code, reason: d.detail, payload: d.payload })), {
        columns: ['source', 'position', 'code', 'reason', 'payload'],
      });
    } catch (err) {
      // The rejection is still reported to the caller; losing the copy is logged loudly.
      this.log.error({ err, count: dead.length, source }, 'dead-letter write failed');
    }
  }
}

/** The record's own text without a byte-order mark: the received buffer itself when there is one. */
function rawLine(value: string | Uint8Array): string | Buffer {
  if (typeof value === 'string') return value.charCodeAt(0) === 0xfeff ? value.slice(1) : value;
  const b = Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? b.subarray(3) : b;
}

/** The normalised row; rebuilt from the line for a record a worker parsed (same text, same row). */
function rowOf(a: Accepted): BaseRow {
  a.row ??= normaliseRecord(JSON.parse(typeof a.line === 'string' ? a.line : a.line!.toString('utf8')) as IngestRecord);
  return a.row;
}

/** What the dead-letter table keeps of a refused record: its text (the first 4 KiB of an oversized one). */
function payloadOf(value: RawRecord['value'], code: RejectionCode): string {
  if (typeof value === 'string' || value instanceof Uint8Array) {
    const text = recordText(value);
    return code === 'oversized' ? text.slice(0, 4096) : text;
  }
  return JSON.stringify(value);
}

/** A worker's task for records [from, to): all texts, or all bytes packed into one transferred buffer; otherwise none. */
function parseTask(records: readonly RawRecord[], from: number, to: number): Pick<ParseTask, 'texts' | 'packed'> | undefined {
  const first = records[from]!.value;
  if (typeof first === 'string') {
    const texts: string[] = [];
    for (let i = from; i < to; i++) {
      const v = records[i]!.value;
      if (typeof v !== 'string') return undefined;
      texts.push(v);
    }
    return { texts };
  }
  if (!(first instanceof Uint8Array)) return undefined;
  let total = 0;
  for (let i = from; i < to; i++) {
    const v = records[i]!.value;
    if (!(v instanceof Uint8Array)) return undefined;
    total += v.byteLength;
  }
  const bytes = new Uint8Array(total);
  const ends = new Uint32Array(to - from);
  let off = 0;
  for (let i = from; i < to; i++) {
    const v = records[i]!.value as Uint8Array;
    bytes.set(v, off);
    off += v.byteLength;
    ends[i - from] = off;
  }
  return { packed: { bytes, ends } };
}

/** One JSONEachRow buffer for the batch: original lines as received, the rest re-serialised. */
function insertPayload(rows: readonly Accepted[], raw: boolean): { bytes: Buffer; raw: number } {
  const parts: Buffer[] = [];
  let text = '';
  let rawCount = 0;
  const flushText = (): void => {
    if (text.length > 0) parts.push(Buffer.from(text));
    text = '';
  };
  for (const a of rows) {
    const line = raw ? a.line : undefined;
    if (line === undefined) {
      text += `${JSON.stringify(rowOf(a))}\n`;
    } else if (typeof line === 'string') {
      rawCount += 1;
      text += `${line}\n`;
    } else {
      // A received buffer (Kafka): copied once, into the batch's buffer, never decoded.
      rawCount += 1;
      flushText();
      parts.push(line, NL);
    }
  }
  flushText();
  return { bytes: parts.length === 1 ? parts[0]! : Buffer.concat(parts), raw: rawCount };
}
