// The one ingest pipeline every source feeds (Kafka, HTTP NDJSON, files, demo records): an
// orchestrator of named steps (ingest/steps/), each of one concern, each answering ok, drop
// (with a code, counted) or dead-letter (with a code and a reason, sent to the dead-letter
// sink) rather than throwing for a record's sake, so a bad record never stops the stream.
//   record steps (ingest/parse-record.ts, on this thread or the parse workers):
//     parse -> validate -> resolve-protocol -> normalise (and the sig_key hash)
//   writer steps (one batch at a time, this file's drain):
//     dedupe in batch -> dedupe against the store -> counted positions (record-id.ts)
//     -> journal -> insert -> notify
// Writes are serialised per process so that "which of these are new?" and "insert them"
// cannot interleave, which is what makes replaying records change no count in the base
// table or any view.
import { AppError, Errors } from '../core/errors.ts';
import { INGEST_BACKFILL_BATCH_ROWS, INGEST_BACKFILL_YIELD, INGEST_HAND_ROWS, INGEST_STORAGE_FULL_RETRY_AFTER_SECONDS } from '../core/limits/ingest.ts';
import type { DataChangeObserver, IngestObserver, IngestStage } from '../core/observers.ts';
import type { Logger } from '../core/logger.ts';
import type { DataVersion } from '../warehouse/data-version.ts';
import type { ProtocolRegistry } from '../warehouse/protocol-registry.ts';
import { isStorageFull, type Warehouse } from '../warehouse/warehouse.ts';
import { cityHasher } from './city-hash.ts';
import { ParsePool } from './parse-pool.ts';
import type { RecordContext } from './parse-record.ts';
import type { Rejection } from './rejection.ts';
import { protocolLookup } from './steps/resolve-protocol.ts';
import { DeadLetters } from './steps/dead-letter.ts';
import { dedupeInBatch, StoreDedupe, type DedupeDesign } from './steps/dedupe.ts';
import { countedPositions } from './record-id.ts';
import { FormatRefused, insertRows } from './steps/insert.ts';
import { WriteJournal } from './steps/journal.ts';
import { ChangeNotifier } from './steps/notify.ts';
import { parseCall } from './steps/parse-call.ts';
import type { Accepted, RawRecord } from './steps/records.ts';
import { runBatchSteps, type BatchStep, type StepSink } from './steps/step.ts';
import { LiveCalls, WriteQueue, type Call, type Lane } from './write-queue.ts';
import { Backfills, type BackfillProgress } from './backfills.ts';
import { EngineIngest, recordsBody, type RecordsBody } from './engine-ingest.ts';
import { lineCount } from './engine-checks.ts';
import { ndjsonRecords } from './ndjson.ts';

export type { RawRecord } from './steps/records.ts';
export type { Lane } from './write-queue.ts';
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
  /** How records are checked against the store (ingest/steps/dedupe.ts; default 'time-keys');
   *  the other design is kept for the benchmark's comparison. */
  dedupe?: DedupeDesign;
  /** Where NDJSON bodies' and Kafka batches' records are checked (INGEST_CHECKS; ingest/engine-ingest.ts): 'engine'
   *  or, the default here, 'javascript' (record by record, this file). */
  checks?: 'engine' | 'javascript';
  /** With checks 'engine', the fewest records of a call checked there (INGEST_ENGINE_MIN_RECORDS); default 1. */
  engineMinRecords?: number;
  /** Worker threads that parse and check records beside the engine's insert (ingest/parse-pool.ts;
   *  INGEST_PARSE_WORKERS). 0 (the default here) parses on the calling thread. */
  parseWorkers?: number;
  /** The workers' module (tests: one that fails); default ingest/parse-worker.ts. */
  parseWorkerEntry?: URL;
}

/** How a source hands records in. */
export interface IngestOptions {
  /** 'live' (default) or 'backfill': backfill batches wait while live ones are queued (ingest/write-queue.ts). */
  lane?: Lane;
  /** Where the call's records done (stored, duplicate, rejected) are counted, as they are. */
  progress?: BackfillProgress;
}

/** A writer step's drop: marked on the record, counted by its call as a duplicate. */
const markDropped: Pick<StepSink<Accepted>, 'drop'> = { drop: (a, code) => void (a.dropped = code) };

export class IngestPipeline {
  private writeTurn: Promise<unknown> = Promise.resolve();
  /** Write turns waiting behind the running one. */
  private queued = 0;
  /** Parsed rows waiting for the writer, by lane, and whether a writer turn is scheduled or running. */
  private readonly queue = new WriteQueue();
  /** Live calls in hand: a backfill call's parse waits for them (bounded). */
  private readonly liveCalls = new LiveCalls(INGEST_BACKFILL_YIELD);
  private draining = false;
  private readonly journal: WriteJournal;
  private readonly notifier: ChangeNotifier;
  /** The writer's steps before the journal and the insert, in order: a new one goes here. */
  private readonly batchSteps: readonly BatchStep<Accepted>[];
  /** This pipeline's sig_key hasher (the record steps on this thread). */
  private readonly hasher = cityHasher();
  /** Parse workers (options.parseWorkers > 0); the main thread parses while none is ready. */
  private readonly pool: ParsePool | undefined;
  /** Backfills through this pipeline, running and recently finished (ingest/backfills.ts). */
  readonly backfills: Backfills;
  /** The engine's checks of NDJSON bodies (options.checks 'engine'). */
  private readonly inEngine: EngineIngest | undefined;
  /** Records a parse worker answered for (tests and benchmarks check the workers were used). */
  recordsParsedOnWorkers = 0;

  constructor(
    private readonly wh: Warehouse,
    private readonly registry: ProtocolRegistry,
    dataVersion: DataVersion,
    private readonly log: Logger,
    private readonly options: PipelineOptions,
  ) {
    this.journal = new WriteJournal(wh, options.writerId ?? 'default', log);
    this.notifier = new ChangeNotifier(dataVersion, log, options.observer);
    this.backfills = new Backfills(options.observer);
    this.batchSteps = [dedupeInBatch, new StoreDedupe(wh, options.dedupe).step, countedPositions(wh)];
    const workers = options.parseWorkers ?? 0;
    this.pool = workers > 0 ? new ParsePool(workers, log, options.parseWorkerEntry) : undefined;
    this.inEngine =
      options.checks === 'engine'
        ? new EngineIngest(wh, registry, options.maxRecordBytes, {
            writerTurn: (fn) => this.serialised(() => this.engineTurn(fn)),
            journal: this.journal,
            notifier: this.notifier,
            observer: options.observer,
            stageTimer: () => this.stageTimer(),
          })
        : undefined;
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
    return this.notifier.observe(observer);
  }

  /**
   * Do now what the first write would otherwise do first: repair unfinished inserts; start
   * the parse workers. Optional. Nothing is read whole: de-duplication asks the store per
   * batch (ingest/steps/dedupe.ts), so a start costs the same at any store size.
   */
  async prepare(): Promise<void> {
    this.pool?.start();
    await this.serialised(() => this.repairUnfinished());
  }

  /** Rows waiting for the writer, per lane (the admin status answer). */
  queuedRows(): Record<Lane, number> {
    return this.queue.queuedRows();
  }

  /**
   * Validate, de-duplicate and store records; resolves once stored rows are queryable. With the
   * checks in the engine (options.checks 'engine'), records received as text (Kafka messages)
   * go there one a line, as an NDJSON body's lines do (one code path for both sources), when
   * there are at least engineMinRecords of them.
   */
  async ingest(records: readonly RawRecord[], source: string, options: IngestOptions = {}): Promise<IngestReport> {
    const engine = this.inEngine === undefined || records.length < (this.options.engineMinRecords ?? 1) ? undefined : recordsBody(records);
    return this.liveCalls.run(options.lane ?? 'live', () =>
      engine === undefined || engine.lines.length === 0 ? this.ingestCall(records, source, options) : this.engineCall(engine.body, source, options, engine),
    );
  }

  /** An NDJSON body: checked in the engine (options.checks 'engine') or here, record by record. */
  async ingestNdjson(body: Buffer, source: string, options: IngestOptions = {}): Promise<IngestReport> {
    const lane = options.lane ?? 'live';
    if (this.inEngine === undefined || lineCount(body) < (this.options.engineMinRecords ?? 1)) return this.ingest(ndjsonRecords(body), source, options);
    return this.liveCalls.run(lane, () => this.engineCall(body, source, options));
  }

  /** A body through the engine's checks; what it defers (and `records.others`) through the JavaScript steps. */
  private async engineCall(body: Uint8Array, source: string, options: IngestOptions, records?: RecordsBody): Promise<IngestReport> {
    const receivedAt = performance.now();
    const lane = options.lane ?? 'live';
    // A backfill goes in pieces of its batch size, so live calls' turns go between them; its
    // progress counts each piece's lines as they are done, the deferred ones at the end.
    const progress = options.progress;
    const report = await this.inEngine!.ingest(body, source, (deferred) => this.ingestCall(deferred, source, options), {
      pieceLines: lane === 'live' ? undefined : INGEST_BACKFILL_BATCH_ROWS,
      done: progress && ((n) => progress.add(n)),
      from: records,
    }).catch(callFailed);
    // Received by the pipeline -> queryable, as the JavaScript writer reports it per batch.
    this.options.observer?.observeFreshness(lane, (performance.now() - receivedAt) / 1000);
    return report;
  }

  private async ingestCall(records: readonly RawRecord[], source: string, options: IngestOptions): Promise<IngestReport> {
    const receivedAt = performance.now();
    const entries = await this.registry.list();
    const ctx: RecordContext = { maxRecordBytes: this.options.maxRecordBytes, known: protocolLookup(entries), hasher: this.hasher };
    const dead = new DeadLetters();
    const lane = options.lane ?? 'live';
    const call: Call = { failure: undefined, lane, receivedAt, onStored: options.progress && ((n) => options.progress!.add(n)) };
    // A backfill's chunks are its batches (the writer never groups backfill past that size).
    const hand = Math.min(INGEST_HAND_ROWS, this.options.batchRows, lane === 'backfill' ? INGEST_BACKFILL_BATCH_ROWS : Infinity);
    const handed: Promise<number>[] = [];
    let valid = 0;
    // Records are parsed and checked while earlier ones are being stored: the engine inserts
    // off the event loop (chDB runs it on a worker thread), so JavaScript's share (JSON.parse,
    // validation, hashing) overlaps the engine's instead of adding to it. Parsed rows are
    // handed to the write queue every INGEST_HAND_ROWS; the writer takes everything queued (this
    // call's and other calls') as one insert.
    let chunk: Accepted[] = [];
    await parseCall(records, ctx, entries, this.pool, {
      ok: (a) => {
        chunk.push(a);
        valid += 1;
        if (chunk.length >= hand) {
          handed.push(this.enqueue(chunk, call));
          chunk = [];
        }
      },
      deadLetter: (rec, code, reason) => dead.deadLetter(rec, code, reason),
      stopped: () => call.failure !== undefined,
      writing: () => handed.length > 0,
      parsedOnWorkers: (n) => void (this.recordsParsedOnWorkers += n),
    });
    if (chunk.length > 0 && call.failure === undefined) handed.push(this.enqueue(chunk, call));
    this.options.observer?.observeStage('parse', (performance.now() - receivedAt) / 1000);
    const outcomes = await Promise.allSettled(handed);
    if (call.failure !== undefined) callFailed(call.failure.err);
    let duplicates = 0;
    for (const o of outcomes) if (o.status === 'fulfilled') duplicates += o.value;
    await dead.write(this.wh, source, this.log);
    const accepted = valid - duplicates;
    this.options.observer?.observeIngest(source, accepted, dead.count, duplicates);
    for (const [code, n] of dead.countsByCode()) this.options.observer?.observeDeadLetters(source, code, n);
    options.progress?.add(dead.count);
    return { accepted, duplicates, rejected: dead.rejections() };
  }

  /**
   * Queue rows for the writer; resolves with how many of them were dropped (duplicates).
   * Group commit: the writer takes every queued chunk (up to batchRows rows) as one batch,
   * i.e. one de-duplication check, one journal write, one insert, whichever calls they came
   * from (Kafka's concurrent partitions). If that insert fails, every call with rows in it
   * fails (and is retried by its source; de-duplication makes the retry safe), and the
   * call's chunks still queued are dropped: a call stops at its first failure, as before.
   */
  private enqueue(rows: Accepted[], call: Call): Promise<number> {
    const handed = new Promise<number>((resolve, reject) => {
      this.queue.push({ rows, call, resolve, reject });
      if (!this.draining) {
        this.draining = true;
        this.serialised(() => this.drain()).catch((err: unknown) => this.log.error({ err }, 'ingest writer failed'));
      }
    });
    // The call reads every outcome once parsing ends (Promise.allSettled); a chunk whose insert
    // fails before then (a full disk mid-call) must not count as an unhandled rejection, which
    // ends the process (core/process-guard.ts).
    handed.catch(() => undefined);
    return handed;
  }

  /** The writer: stores queued chunks, grouped per lane (live first), until the queue is empty. */
  private async drain(): Promise<void> {
    try {
      while (!this.queue.empty) {
        const { lane, group } = this.queue.next(this.options.batchRows, INGEST_BACKFILL_BATCH_ROWS);
        if (group.length === 0) continue;
        const rows = group.length === 1 ? group[0]!.rows : group.flatMap((g) => g.rows);
        const startedAt = performance.now();
        for (const g of group) this.options.observer?.observeStage('queue', (startedAt - g.call.receivedAt) / 1000);
        try {
          try {
            await this.storeBatch(rows, this.options.rawInsert ?? true);
          } catch (err) {
            if (!(err instanceof FormatRefused)) throw err;
            this.log.warn({ err: err.cause }, 'the engine refused a batch as received; storing it re-serialised');
            // The retry runs every step again: what it drops is what counts.
            for (const a of rows) a.dropped = undefined;
            await this.storeBatch(rows, false);
          }
        } catch (err) {
          for (const g of group) {
            g.call.failure ??= { err };
            g.reject(err);
          }
          continue;
        }
        const storedAt = performance.now();
        for (const g of group) {
          let dropped = 0;
          for (const a of g.rows) if (a.dropped !== undefined) dropped += 1;
          // Received by the pipeline -> queryable: the freshness the pipeline itself adds.
          this.options.observer?.observeFreshness(lane, (storedAt - g.call.receivedAt) / 1000);
          g.call.onStored?.(g.rows.length);
          g.resolve(dropped);
        }
      }
    } finally {
      this.draining = false;
    }
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

  /** Runs before the first write (for a crashed predecessor) and after any failed insert. */
  private repairUnfinished(): Promise<void> {
    return this.journal.repairUnfinished((entry) => {
      if (entry === 'recovered') this.notifier.recovered();
      else this.notifier.changed(entry.id, entry.buckets, []);
    });
  }

  /** One batch through the writer's steps. */
  private async storeBatch(batch: Accepted[], raw: boolean): Promise<void> {
    const stage = this.stageTimer();
    try {
      await this.repairUnfinished();
      const fresh = await runBatchSteps(batch, this.batchSteps, markDropped);
      stage('dedupe');
      if (fresh.length === 0) return;
      const entry = await this.journal.begin(fresh);
      stage('journal');
      try {
        await insertRows(this.wh, fresh, raw);
        stage('insert');
      } catch (err) {
        this.journal.failed(entry);
        throw err;
      }
      // While another batch waits its turn, its 'begin' carries this 'done' (one journal
      // write per batch); otherwise it is written below before returning.
      this.journal.finished(entry);
      this.notifier.stored(entry.id, entry.buckets, fresh);
      stage('notify');
    } finally {
      // Nothing queued behind to carry a deferred 'done' (or this batch failed): write it now.
      if ((this.queued === 0 && this.queue.empty) || this.journal.repairsPending) await this.journal.flushDone();
    }
  }

  /** The engine path's writer turn: as a batch's (storeBatch), repaired first, its 'done' written when nothing follows. */
  private async engineTurn<T>(fn: () => Promise<T>): Promise<T> {
    try {
      await this.repairUnfinished();
      return await fn();
    } finally {
      if ((this.queued === 0 && this.queue.empty) || this.journal.repairsPending) await this.journal.flushDone();
    }
  }

  /** Reports the time since its last call (or its making) as the named writer stage. */
  private stageTimer(): (stage: IngestStage) => void {
    let t = performance.now();
    return (name) => {
      const now = performance.now();
      this.options.observer?.observeStage(name, (now - t) / 1000);
      t = now;
    };
  }
}

/** A call's write failed: a full disk is the operator's to fix, not a bug, said as such with what was kept. */
function callFailed(err: unknown): never {
  if (isStorageFull(err)) {
    throw new AppError(
      Errors.storageFull,
      'the store is out of disk space: this write was not completed (earlier batches of it stay stored, ' +
        'and the views are repaired before the next write); send it again once space is freed',
      { cause: err, retryAfterSeconds: INGEST_STORAGE_FULL_RETRY_AFTER_SECONDS },
    );
  }
  throw err;
}
