// Validation in the engine (issue 40, migration 121): an NDJSON body's lines go to the
// engine as received, the record checks run there as SQL (ingest_line_checks), and the
// routing statements below send valid new rows to the base table and refusals to the
// dead-letter table, with the codes and messages of the JavaScript checks. Lines the
// engine's JSON reader may read differently from JSON.parse come back 'deferred', for the
// JavaScript record steps to decide as before. One batch at a time (the pipeline's writer).
import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { INGEST_STAGE_BLOCK_LINES } from '../core/limits/ingest.ts';
import { BASE_COLUMNS, TABLES } from '../warehouse/tables.ts';
import type { Warehouse } from '../warehouse/warehouse.ts';
import type { RejectionCode } from './rejection.ts';

/** A line the engine refused: its number in the body, its code and message. */
export interface EngineRefusal {
  line: number;
  code: RejectionCode;
  reason: string;
}

export interface EngineBatch {
  /** Valid lines (stored or dropped as duplicates). */
  valid: number;
  /** Valid lines not stored: already stored, or repeated earlier in the body. */
  duplicates: number;
  refused: EngineRefusal[];
  /** Lines for the JavaScript record steps (see migration 121), with their numbers. */
  deferred: { line: number; text: string }[];
  /** Per (protocol, hour) of the rows about to be stored, its newest block time: for the
   *  ingest journal and the change notice. */
  buckets: { protocol_name: string; block_time: number }[];
}

/** Where a batch's refused lines are kept: the source, and each line's position as the
 *  dead-letter table reads it (a Kafka message's topic/partition/offset; none: "line n"). */
export interface DeadLetterPlace {
  source: string;
  positions: readonly string[];
}

/** A loaded batch: its id and how many lines its body has. */
export interface Loaded {
  batch: string;
  lines: number;
}

const NEWLINE = 0x0a;

/** Lines of a body as LineAsString reads them: each newline ends one, and a last one may lack it. */
export function lineCount(body: Uint8Array): number {
  let n = 0;
  for (let at = body.indexOf(NEWLINE); at >= 0; at = body.indexOf(NEWLINE, at + 1)) n += 1;
  return body.length > 0 && body[body.length - 1] !== NEWLINE ? n + 1 : n;
}

/** A protocol of the registry, active or not (resolve-protocol.ts reads every one). */
export interface Registered {
  protocolName: string;
  programId: string;
}

const ROUTE_SETTINGS = { parallel_view_processing: 1 };

const STAGE_SETTINGS = {
  max_threads: 1,
  input_format_parallel_parsing: 0,
  max_block_size: INGEST_STAGE_BLOCK_LINES,
  min_insert_block_size_rows: INGEST_STAGE_BLOCK_LINES,
  min_insert_block_size_bytes: 0,
};

export class EngineChecks {
  constructor(
    private readonly wh: Warehouse,
    private readonly stageDir: string,
  ) {}

  /**
   * `load` and `decide` at once: what the engine decided, nothing stored yet. Then `store`
   * and always `release`. firstLine: the number of the body's first line (a piece of a larger
   * body starts later).
   */
  async check(body: Uint8Array, maxRecordBytes: number, registry: readonly Registered[], firstLine = 1): Promise<{ batch: string; result: EngineBatch }> {
    const loaded = await this.load(body, maxRecordBytes, registry, firstLine);
    return { batch: loaded.batch, result: await this.decide(loaded) };
  }

  /**
   * Load and check a body's lines into ingest_checked under a batch of their own: no writer
   * turn needed, so it runs beside another batch's turn. Then, in the writer's turn, `decide`
   * and `store`; always `release`.
   */
  async load(body: Uint8Array, maxRecordBytes: number, registry: readonly Registered[], firstLine = 1): Promise<Loaded> {
    const batch = randomUUID();
    try {
      // chDB takes only a few text formats as insert data; LineAsString (nothing parsed, so no
      // line is malformed to it) is read from a staged file instead.
      const file = path.join(this.stageDir, `${batch}.ndjson`);
      await writeFile(file, body);
      try {
        await this.wh.exec(
          `INSERT INTO ${TABLES.ingestLines} SELECT {b:String}, toUInt32(rowNumberInAllBlocks() + {first:UInt32}), line FROM file({f:String}, 'LineAsString')`,
          // One stream keeps the body's order, so row numbers are line numbers; blocks of
          // INGEST_STAGE_BLOCK_LINES let the checks below read them on every core.
          { params: { b: batch, f: file, first: firstLine }, literalParams: true, settings: STAGE_SETTINGS },
        );
      } finally {
        await rm(file, { force: true });
      }
      // A valid line's text is not kept: its row is (the text is for dead letters and deferred lines).
      await this.wh.exec(
        `INSERT INTO ${TABLES.ingestChecked} SELECT {batch:String} AS batch, n, if(code IN ('', 'skip'), '', line), code, reason, ${BASE_COLUMNS.join(', ')}, sig_key
         FROM (${await this.checksText()})`,
        {
          params: { batch, max_bytes: maxRecordBytes, names: registry.map((r) => r.protocolName), programs: registry.map((r) => r.programId) },
          literalParams: true,
        },
      );
    } catch (err) {
      // Nothing of a failed load stays behind (its caller never learns the batch).
      await this.release(batch).catch(() => undefined);
      throw err;
    }
    return { batch, lines: lineCount(body) };
  }

  /** The checks view's SELECT as the engine stores it (the migrations' one definition), read once. */
  private checksSelect: Promise<string> | undefined;

  /**
   * The checks, as their view's own text run in place: a call of the parameterised view costs
   * ~60 ms of planning a statement more than the same text (bench/RESULTS.md, "The engine checks'
   * fixed cost"), a third of a Kafka-sized batch's whole check. Its parameters are the view's.
   */
  private checksText(): Promise<string> {
    this.checksSelect ??= this.wh
      .query<{ as_select: string }>(`SELECT as_select FROM system.tables WHERE database = currentDatabase() AND name = {v:String}`, {
        params: { v: TABLES.ingestLineChecks },
      })
      .then(([row]) => {
        if (row === undefined || row.as_select === '') throw new Error(`the view ${TABLES.ingestLineChecks} is missing`);
        return row.as_select;
      })
      .catch((err: unknown) => {
        this.checksSelect = undefined;
        throw err;
      });
    return this.checksSelect;
  }

  /**
   * What the engine decided of a loaded batch (in the writer's turn: its de-duplication reads
   * the store). Two reads, each of them one statement (a statement's planning is its fixed
   * cost): the lines' answer, then the duplicates with the buckets of what is left.
   */
  async decide(loaded: Loaded): Promise<EngineBatch> {
    const { batch } = loaded;
    const params = { b: batch };
    const [answer] = await this.wh.query<{ rows: string; valid: string; others: [number, string, string, string][] }>(
      `SELECT count() AS rows, countIf(code = '') AS valid,
              groupArrayIf((n, code, reason, if(code = 'defer', line, '')), code NOT IN ('', 'skip')) AS others
       FROM ${TABLES.ingestChecked} WHERE batch = {b:String}`,
      { params, literalParams: true },
    );
    // Every line has its row, or the call fails (and is sent again) rather than lose a record
    // silently: batches load beside each other's turns, and a Memory table's delete must not
    // have taken a concurrent load's rows.
    if (Number(answer?.rows ?? 0) !== loaded.lines) {
      throw new Error(`ingest batch ${batch}: ${answer?.rows ?? 0} of its ${loaded.lines} lines were checked`);
    }
    const others = (answer?.others ?? []).map(([n, code, reason, line]) => ({ n: Number(n), code, reason, line })).sort((a, b) => a.n - b.n);
    // A valid line is dropped when an earlier line of the body has its identity, or the store
    // has it (ingest_keys, over the batch's block times: migration 120). Per (protocol, hour),
    // the newest block time of the rows kept: the journal's buckets and what the change notice
    // names (ingest/steps/notify.ts).
    const groups = await this.wh.query<{ protocol_name: string; newest: number; kept: string; dropped_lines: number[] }>(
      `SELECT protocol_name, maxIf(block_time, NOT is_dropped) AS newest, countIf(NOT is_dropped) AS kept, groupArrayIf(n, is_dropped) AS dropped_lines
       FROM (
         SELECT n, protocol_name, block_time,
           n NOT IN (SELECT min(n) FROM ${TABLES.ingestChecked} WHERE batch = {b:String} AND code = '' GROUP BY signature, instruction_index)
           OR (toDateTime(block_time, 'UTC'), sig_key, instruction_index) IN (
             SELECT block_time, sig_key, instruction_index FROM ${TABLES.ingestKeys}
             WHERE block_time BETWEEN (SELECT toDateTime(min(block_time), 'UTC') FROM ${TABLES.ingestChecked} WHERE batch = {b:String} AND code = '')
                                  AND (SELECT toDateTime(max(block_time), 'UTC') FROM ${TABLES.ingestChecked} WHERE batch = {b:String} AND code = '')) AS is_dropped
         FROM ${TABLES.ingestChecked} WHERE batch = {b:String} AND code = '')
       GROUP BY protocol_name, intDiv(block_time, 3600)`,
      { params, literalParams: true },
    );
    const dropped = groups.flatMap((g) => g.dropped_lines.map(Number));
    this.droppedLines.set(batch, dropped);
    return {
      valid: Number(answer?.valid ?? 0),
      duplicates: dropped.length,
      refused: others.filter((o) => o.code !== 'defer').map((o) => ({ line: o.n, code: o.code as RejectionCode, reason: o.reason })),
      deferred: others.filter((o) => o.code === 'defer').map((o) => ({ line: o.n, text: o.line })),
      buckets: groups.filter((g) => Number(g.kept) > 0).map((g) => ({ protocol_name: g.protocol_name, block_time: Number(g.newest) })),
    };
  }

  /** Lines of a checked batch that are dropped as duplicates, by batch (until release). */
  private readonly droppedLines = new Map<string, number[]>();

  /**
   * Store a checked batch: new valid rows to the base table (and its views), refusals to
   * dead_letters. refused: the refused lines' numbers (decide's), whose positions are the only
   * ones the dead-letter statement is given: with literal values a Kafka batch's every position
   * would be thousands of literals to parse.
   */
  async store(batch: string, to: DeadLetterPlace, refused: readonly number[]): Promise<void> {
    await this.wh.exec(
      `INSERT INTO ${TABLES.transactions} (${BASE_COLUMNS.join(', ')})
       SELECT ${BASE_COLUMNS.join(', ')} FROM ${TABLES.ingestChecked} WHERE batch = {b:String} AND code = '' AND n NOT IN {d:Array(UInt32)}`,
      { params: { b: batch, d: this.droppedLines.get(batch) ?? [] }, literalParams: true, settings: ROUTE_SETTINGS },
    );
    if (refused.length === 0) return;
    const lines = [...new Set(refused)];
    const positions = lines.map((n) => to.positions[n - 1] ?? `line ${n}`);
    // The dead-letter table keeps a refused record's text (the first 4 KiB of an oversized one).
    await this.wh.exec(
      `INSERT INTO ${TABLES.deadLetters} (source, position, code, reason, payload)
       SELECT {s:String}, {p:Array(String)}[indexOf({ns:Array(UInt32)}, n)], code, reason, if(code = 'oversized', substringUTF8(line, 1, 4096), line)
       FROM ${TABLES.ingestChecked} WHERE batch = {b:String} AND code NOT IN ('', 'skip', 'defer')`,
      { params: { b: batch, s: to.source, p: positions, ns: lines }, literalParams: true },
    );
  }

  /** Forget a batch's lines (after store, or when the call failed). */
  async release(batch: string): Promise<void> {
    this.droppedLines.delete(batch);
    for (const t of [TABLES.ingestLines, TABLES.ingestChecked]) {
      await this.wh.exec(`ALTER TABLE ${t} DELETE WHERE batch = {b:String}`, { params: { b: batch }, literalParams: true });
    }
  }
}
