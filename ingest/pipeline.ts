// The one ingest pipeline every source feeds (Kafka, HTTP NDJSON, files, demo records).
// Each step returns a result rather than throwing: a bad record is rejected with its reason
// and sent to the dead-letter sink; it never stops the stream. Writes are serialised per
// process so that "which of these are new?" and "insert them" cannot interleave, which is
// what makes replaying records change no count in the base table or any view.
import type { DataChangeObserver, IngestObserver } from '../core/observers.ts';
import type { Logger } from '../core/logger.ts';
import type { DataVersion } from '../warehouse/data-version.ts';
import type { ProtocolRegistry } from '../warehouse/protocol-registry.ts';
import type { Warehouse } from '../warehouse/warehouse.ts';
import { IngestJournal } from './ingest-journal.ts';
import { positionText, type Position, type Rejection, type RejectionCode } from './rejection.ts';
import { checkRecord, protocolLookup, type ProtocolLookup } from './record-schema.ts';
import { BASE_COLUMNS, TABLES, type BaseRow } from '../warehouse/tables.ts';
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
}

type ChangeListener = DataChangeObserver['dataChanged'];

type Step = { kind: 'ok'; row: BaseRow } | { kind: 'dead-letter'; code: RejectionCode; detail: string; payload: string };
type Dead = Rejection & { payload: string };

const identity = (signature: string, index: number): string => `${signature}#${index}`;
const LOOKUP_CHUNK = 5000;

export class IngestPipeline {
  private writeTurn: Promise<unknown> = Promise.resolve();
  private readonly journal: IngestJournal;
  /** Unfinished inserts (of a crashed earlier process, or a failed insert) still to repair. */
  private recovered = false;
  private pendingRepairs: { id: string; buckets: Bucket[] }[] = [];
  private readonly changeListeners = new Set<ChangeListener>();

  constructor(
    private readonly wh: Warehouse,
    private readonly registry: ProtocolRegistry,
    private readonly dataVersion: DataVersion,
    private readonly log: Logger,
    private readonly options: PipelineOptions,
  ) {
    this.journal = new IngestJournal(wh, options.writerId ?? 'default', log);
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

  private reportChange(batchId: string, buckets: readonly Bucket[], rows: readonly BaseRow[]): void {
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

  /** Validate, de-duplicate and store records; resolves once stored rows are queryable. */
  async ingest(records: readonly RawRecord[], source: string): Promise<IngestReport> {
    const known = protocolLookup(await this.registry.list());
    const rows: BaseRow[] = [];
    const dead: Dead[] = [];
    for (const rec of records) {
      const step = this.parseAndCheck(rec, known);
      if (step.kind === 'ok') rows.push(step.row);
      else dead.push({ code: step.code, detail: step.detail, position: rec.position, payload: step.payload });
    }
    let duplicates = 0;
    for (let i = 0; i < rows.length; i += this.options.batchRows) {
      duplicates += await this.serialised(() => this.storeBatch(rows.slice(i, i + this.options.batchRows)));
    }
    if (dead.length > 0) await this.deadLetter(source, dead);
    const accepted = rows.length - duplicates;
    this.options.observer?.observeIngest(source, accepted, dead.length, duplicates);
    return { accepted, duplicates, rejected: dead.map(({ code, detail, position }) => ({ code, detail, position })) };
  }

  private parseAndCheck(rec: RawRecord, known: ProtocolLookup): Step {
    let value: unknown = rec.value;
    if (typeof value === 'string' || value instanceof Uint8Array) {
      const text = typeof value === 'string' ? value : Buffer.from(value).toString('utf8');
      const bytes = typeof value === 'string' ? Buffer.byteLength(value) : value.byteLength;
      if (bytes > this.options.maxRecordBytes) {
        return { kind: 'dead-letter', code: 'oversized', detail: `record is ${bytes} bytes; the limit is ${this.options.maxRecordBytes}`, payload: text.slice(0, 4096) };
      }
      try {
        // A byte-order mark (Windows tools write one) is encoding, not JSON.
        value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
      } catch (err) {
        return { kind: 'dead-letter', code: 'not_json', detail: `not valid JSON: ${(err as Error).message}`, payload: text };
      }
    }
    const check = checkRecord(value, known);
    if (check.ok) return { kind: 'ok', row: check.row };
    const payload = typeof rec.value === 'object' && !(rec.value instanceof Uint8Array)
      ? JSON.stringify(rec.value)
      : typeof rec.value === 'string' ? rec.value : Buffer.from(rec.value).toString('utf8');
    return { kind: 'dead-letter', code: check.code, detail: check.detail, payload };
  }

  private serialised<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.writeTurn.then(fn, fn);
    this.writeTurn = run.catch(() => undefined);
    return run;
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
  private async storeBatch(batch: BaseRow[]): Promise<number> {
    await this.repairUnfinished();
    // Within the batch: first occurrence of an identity wins.
    const seen = new Set<string>();
    const unique: BaseRow[] = [];
    for (const row of batch) {
      const id = identity(row.signature, row.instruction_index);
      if (!seen.has(id)) {
        seen.add(id);
        unique.push(row);
      }
    }
    // Against the store: the signature lookup table answers by primary key (sig_key).
    // Signatures are compared here, not in SQL: a hash collision returns a row whose own
    // signature then matches no identity, and the SQL filter on 5000 strings cost as much
    // as the lookup itself. Signatures travel as a bound parameter, which a server receives
    // in the URL: 5000 of them (~450 KiB) stay under ClickHouse's 1 MiB URI limit.
    const signatures = [...new Set(unique.map((r) => r.signature))];
    const existing = new Set<string>();
    for (let i = 0; i < signatures.length; i += LOOKUP_CHUNK) {
      const stored = await this.wh.query<{ signature: string; instruction_index: number }>(
        `SELECT signature, instruction_index FROM ${TABLES.txBySignature}
         WHERE sig_key IN (SELECT cityHash64(arrayJoin({sigs:Array(String)})))`,
        { params: { sigs: signatures.slice(i, i + LOOKUP_CHUNK) } },
      );
      for (const r of stored) existing.add(identity(r.signature, Number(r.instruction_index)));
    }
    const fresh = unique.filter((r) => !existing.has(identity(r.signature, r.instruction_index)));
    if (fresh.length > 0) {
      // An INSERT into a table with views is not atomic across them: journal it so an
      // insert that stops part-way (crash, failing view) is repaired before the next one.
      const entry = await this.journal.begin(fresh);
      try {
        await this.wh.insert(TABLES.transactions, fresh, { columns: BASE_COLUMNS, settings: { parallel_view_processing: 1 } });
      } catch (err) {
        this.pendingRepairs.push(entry);
        throw err;
      }
      await this.journal.done(entry.id);
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
