// An NDJSON body through the checks in the engine (INGEST_CHECKS=engine; ingest/engine-checks.ts,
// migration 121): one writer turn checks the body's lines, journals and stores the new valid
// rows and dead-letters the refused ones, all in the engine; the lines it defers go through
// the JavaScript record steps (IngestPipeline.ingest) as before. The guarantees are the
// writer's: one turn at a time (so "which are new?" and "store them" do not interleave), the
// journal around the insert (a stop part-way is repaired before the next write), and the
// change notice after it.
import { tmpdir } from 'node:os';
import type { IngestObserver, IngestStage } from '../core/observers.ts';
import type { ProtocolRegistry } from '../warehouse/protocol-registry.ts';
import type { Warehouse } from '../warehouse/warehouse.ts';
import { EngineChecks, type EngineBatch, type Registered } from './engine-checks.ts';
import type { Rejection } from './rejection.ts';
import type { WriteJournal } from './steps/journal.ts';
import type { ChangeNotifier } from './steps/notify.ts';
import type { RawRecord } from './steps/records.ts';

/** What of the pipeline the engine path uses: its writer's turn, journal and notice, and its JavaScript path. */
export interface PipelineParts {
  /** Run fn as the writer's turn, after unfinished inserts are repaired; then the journal's waiting 'done' is written when nothing follows. */
  writerTurn<T>(fn: () => Promise<T>): Promise<T>;
  journal: WriteJournal;
  notifier: ChangeNotifier;
  observer: IngestObserver | undefined;
  stageTimer(): (stage: IngestStage) => void;
}

export interface EngineReport {
  accepted: number;
  duplicates: number;
  rejected: Rejection[];
}

export class EngineIngest {
  private readonly checks: EngineChecks;

  constructor(
    wh: Warehouse,
    private readonly registry: ProtocolRegistry,
    private readonly maxRecordBytes: number,
    private readonly parts: PipelineParts,
  ) {
    this.checks = new EngineChecks(wh, tmpdir());
  }

  /**
   * deferred: the JavaScript record steps and writer, for the lines the engine defers.
   * pieceLines: at most this many lines a writer turn (a backfill's batch size), so a live
   * call's turn can go between two pieces of a large body; undefined: the body in one turn.
   * done: told of each piece's lines decided (stored, duplicate or refused).
   */
  async ingest(
    body: Uint8Array,
    source: string,
    deferred: (records: readonly RawRecord[]) => Promise<EngineReport>,
    options: { pieceLines?: number; done?: (lines: number) => void } = {},
  ): Promise<EngineReport> {
    const { pieceLines, done } = options;
    const entries = await this.registry.list();
    const total: EngineBatch = { valid: 0, duplicates: 0, refused: [], deferred: [], buckets: [] };
    for (const piece of pieceLines === undefined ? [{ bytes: body, firstLine: 1 }] : pieces(body, pieceLines)) {
      const batch = await this.parts.writerTurn(() => this.store(piece.bytes, piece.firstLine, entries, source));
      total.valid += batch.valid;
      total.duplicates += batch.duplicates;
      total.refused.push(...batch.refused);
      total.deferred.push(...batch.deferred);
      done?.(batch.valid + batch.refused.length);
    }
    const refused: Rejection[] = total.refused.map((r) => ({ code: r.code, detail: r.reason, position: { line: r.line } }));
    const observer = this.parts.observer;
    const stored = total.valid - total.duplicates;
    observer?.observeIngest(source, stored, refused.length, total.duplicates);
    const byCode = new Map<string, number>();
    for (const r of refused) byCode.set(r.code, (byCode.get(r.code) ?? 0) + 1);
    for (const [code, n] of byCode) observer?.observeDeadLetters(source, code, n);
    if (total.deferred.length === 0) return { accepted: stored, duplicates: total.duplicates, rejected: refused };
    // The deferred lines, decided by the JavaScript checks exactly as before (their own counts and dead letters).
    const js = await deferred(total.deferred.map((d) => ({ value: d.text, position: { line: d.line } })));
    const rejected = [...refused, ...js.rejected].sort((a, b) => lineOf(a) - lineOf(b));
    return { accepted: stored + js.accepted, duplicates: total.duplicates + js.duplicates, rejected };
  }

  /** The writer's turn: check, journal, store, notice; the batch's lines are released whatever happens. */
  private async store(body: Uint8Array, firstLine: number, entries: readonly Registered[], source: string): Promise<EngineBatch> {
    const stage = this.parts.stageTimer();
    const { batch, result } = await this.checks.check(body, this.maxRecordBytes, entries, firstLine);
    stage('dedupe');
    try {
      if (result.buckets.length === 0) {
        await this.checks.store(batch, source);
        return result;
      }
      const entry = await this.parts.journal.begin(result.buckets);
      stage('journal');
      try {
        await this.checks.store(batch, source);
        stage('insert');
      } catch (err) {
        this.parts.journal.failed(entry);
        throw err;
      }
      this.parts.journal.finished(entry);
      this.parts.notifier.stored(entry.id, entry.buckets, result.buckets, result.valid - result.duplicates);
      stage('notify');
      return result;
    } finally {
      await this.checks.release(batch);
    }
  }
}

const lineOf = (r: Rejection): number => ('line' in r.position ? r.position.line : 0);

const NEWLINE = 0x0a;

/** The body in pieces of at most `lines` lines, each with the number of its first line. */
function pieces(body: Uint8Array, lines: number): { bytes: Uint8Array; firstLine: number }[] {
  const out: { bytes: Uint8Array; firstLine: number }[] = [];
  let start = 0;
  let line = 1;
  while (start < body.length) {
    let end = start;
    let n = 0;
    while (n < lines && end < body.length) {
      const nl = body.indexOf(NEWLINE, end);
      end = nl < 0 ? body.length : nl + 1;
      n += 1;
    }
    out.push({ bytes: body.subarray(start, end), firstLine: line });
    line += n;
    start = end;
  }
  return out;
}
