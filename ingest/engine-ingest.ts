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
import { EngineChecks, type DeadLetterPlace, type EngineBatch, type Loaded, type Registered } from './engine-checks.ts';
import { positionText, type Position, type Rejection } from './rejection.ts';
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

export interface BodyOptions {
  pieceLines?: number;
  done?: (lines: number) => void;
  from?: RecordsBody;
}

/** A source's records as a body for the engine's checks: `lines` one a line, `others` what cannot be. */
export interface RecordsBody {
  body: Buffer;
  lines: RawRecord[];
  others: RawRecord[];
  /** The records as received: rejections are reported in their order. */
  received: readonly RawRecord[];
}

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const OPEN_BRACE = 0x7b;

/**
 * Records received as text (Kafka messages), one a line. A record goes in only when it is a
 * line the engine reads as the JavaScript steps read the message: it opens with "{" (no
 * byte-order mark, no leading blank: a blank message is not_json there, a skipped line here)
 * and holds no line break (a pretty-printed message would be several lines). Every other
 * record, and one already parsed, goes to the JavaScript steps, which decide it as before.
 */
export function recordsBody(records: readonly RawRecord[]): RecordsBody {
  const lines: RawRecord[] = [];
  const others: RawRecord[] = [];
  const parts: Buffer[] = [];
  for (const r of records) {
    const v = r.value;
    const bytes = typeof v === 'string' ? Buffer.from(v) : v instanceof Uint8Array ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : undefined;
    if (bytes === undefined || bytes[0] !== OPEN_BRACE || bytes.includes(NEWLINE) || bytes.includes(CARRIAGE_RETURN)) {
      others.push(r);
      continue;
    }
    lines.push(r);
    parts.push(bytes, NEWLINE_BYTES);
  }
  return { body: Buffer.concat(parts), lines, others, received: records };
}

const NEWLINE_BYTES = Buffer.from([NEWLINE]);

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
   * from: when the body was built from a source's records (recordsBody): a rejection names its
   * line's record's position, a deferred line goes back as that record, the records not in
   * the body are decided by the JavaScript steps with the deferred ones, and the rejections
   * come in the order the records were received.
   */
  async ingest(
    body: Uint8Array,
    source: string,
    deferred: (records: readonly RawRecord[]) => Promise<EngineReport>,
    options: BodyOptions = {},
  ): Promise<EngineReport> {
    const { pieceLines, done, from } = options;
    const lines = from?.lines;
    const entries = await this.registry.list();
    const positions = lines?.map((r) => positionText(r.position)) ?? [];
    const total: EngineBatch = { valid: 0, duplicates: 0, refused: [], deferred: [], buckets: [] };
    for (const piece of pieceLines === undefined ? [{ bytes: body, firstLine: 1 }] : pieces(body, pieceLines)) {
      const batch = await this.piece(piece.bytes, piece.firstLine, entries, { source, positions });
      total.valid += batch.valid;
      total.duplicates += batch.duplicates;
      total.refused.push(...batch.refused);
      total.deferred.push(...batch.deferred);
      done?.(batch.valid + batch.refused.length);
    }
    const positionOf = (line: number): Position => lines?.[line - 1]?.position ?? { line };
    const refused: Rejection[] = total.refused.map((r) => ({ code: r.code, detail: r.reason, position: positionOf(r.line) }));
    const stored = total.valid - total.duplicates;
    this.observe(source, stored, refused, total.duplicates);
    const toJs = [...total.deferred.map((d): RawRecord => lines?.[d.line - 1] ?? { value: d.text, position: { line: d.line } }), ...(from?.others ?? [])];
    if (toJs.length === 0) return { accepted: stored, duplicates: total.duplicates, rejected: refused };
    // The deferred lines, decided by the JavaScript checks exactly as before (their own counts and dead letters).
    const js = await deferred(toJs);
    const rejected = [...refused, ...js.rejected].sort(from === undefined ? (a, b) => lineOf(a) - lineOf(b) : receivedOrder(from.received));
    return { accepted: stored + js.accepted, duplicates: total.duplicates + js.duplicates, rejected };
  }

  private observe(source: string, stored: number, refused: readonly Rejection[], duplicates: number): void {
    const observer = this.parts.observer;
    observer?.observeIngest(source, stored, refused.length, duplicates);
    const byCode = new Map<string, number>();
    for (const r of refused) byCode.set(r.code, (byCode.get(r.code) ?? 0) + 1);
    for (const [code, n] of byCode) observer?.observeDeadLetters(source, code, n);
  }

  /**
   * A piece of a body: its lines loaded and checked before the writer's turn (beside other
   * calls' turns: the engine checks one batch while it stores another), then decided and
   * stored in the turn; its lines released after it, whatever happened.
   */
  private async piece(body: Uint8Array, firstLine: number, entries: readonly Registered[], to: DeadLetterPlace): Promise<EngineBatch> {
    const stage = this.parts.stageTimer();
    let loaded: Loaded | undefined;
    try {
      loaded = await this.checks.load(body, this.maxRecordBytes, entries, firstLine);
      stage('parse');
      const checked = loaded;
      return await this.parts.writerTurn(() => {
        stage('queue');
        return this.store(checked, to, stage);
      });
    } finally {
      if (loaded !== undefined) await this.checks.release(loaded.batch);
    }
  }

  /** The writer's turn: decide (de-duplicate), journal, store, notice. */
  private async store(loaded: Loaded, to: DeadLetterPlace, stage: (name: IngestStage) => void): Promise<EngineBatch> {
    const { batch } = loaded;
    const result = await this.checks.decide(loaded);
    stage('dedupe');
    if (result.buckets.length === 0) {
      await this.checks.store(batch, to, refusedLines(result));
      return result;
    }
    const entry = await this.parts.journal.begin(result.buckets);
    stage('journal');
    try {
      await this.checks.store(batch, to, refusedLines(result));
      stage('insert');
    } catch (err) {
      this.parts.journal.failed(entry);
      throw err;
    }
    this.parts.journal.finished(entry);
    this.parts.notifier.stored(entry.id, entry.buckets, result.buckets, result.valid - result.duplicates);
    stage('notify');
    return result;
  }
}

/** The lines of a batch the engine refused (each goes to the dead-letter table). */
const refusedLines = (result: EngineBatch): number[] => result.refused.map((r) => r.line);

const lineOf = (r: Rejection): number => ('line' in r.position ? r.position.line : 0);

/** Rejections in the order of the records they name (each record's own position object). */
function receivedOrder(received: readonly RawRecord[]): (a: Rejection, b: Rejection) => number {
  const at = new Map<Position, number>(received.map((r, i) => [r.position, i]));
  return (a, b) => (at.get(a.position) ?? 0) - (at.get(b.position) ?? 0);
}

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
