// The single-pass prototype of bench/ingest-single-pass.ts (issue 40): an NDJSON body's lines
// in one INSERT into a Null table whose materialized views check them (migration 121's checks),
// de-duplicate them and route them; and (b2) the same in two statements. Not wired into the
// pipeline: every object lives in a database of its own (DB), created and dropped here.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Registered } from '../ingest/engine-checks.ts';
import type { IngestPipeline, IngestReport } from '../ingest/pipeline.ts';
import type { RawRecord } from '../ingest/steps/records.ts';
import type { RejectionCode } from '../ingest/rejection.ts';
import { BASE_COLUMNS, TABLES } from '../warehouse/tables.ts';
import { MIGRATIONS_DIR } from '../warehouse/migrate.ts';
import type { Warehouse } from '../warehouse/warehouse.ts';
import { timeMs } from './bench-support.ts';
import { FAST_ROW, FAST_TYPE, fastTests, lit, shapeTest } from './common-path.ts';

export const DB = 'single_pass_bench';
export const BASE = BASE_COLUMNS.join(', ');

/** (b) one statement; (b+j) the journal's 'begin' then the one statement; (b2) two: the checks with their refusals, then the new rows. */
/** (two121) is (b2) with migration 121's checks, the checks before checks40's cheaper ones. */
export type Design = 'single' | 'journal' | 'two' | 'two121' | 'fast';

/** The migration whose checks the '121' cases run (the store's own are 122's). */
export const CHECKS_121 = '121_ingest_in_engine_checks';

/** The journal's writer of (b+j): no pipeline repairs its entries. */
export const JOURNAL_WRITER = 'single-pass-bench';

/** The rows of `from` (those where `which`) whose identity is not in ingest_keys, over their own seconds (their keys first: PREWHERE), as engine-checks.ts asks. */
export const newRows = (from: string, which: string): string =>
  `(toDateTime(block_time, 'UTC'), sig_key, instruction_index) NOT IN (
     SELECT block_time, sig_key, instruction_index FROM ${TABLES.ingestKeys}
     PREWHERE sig_key IN (SELECT sig_key FROM ${from} WHERE ${which})
     WHERE block_time BETWEEN (SELECT toDateTime(min(block_time), 'UTC') FROM ${from} WHERE ${which})
                          AND (SELECT toDateTime(max(block_time), 'UTC') FROM ${from} WHERE ${which}))`;

/** The SELECT of the CREATE VIEW ingest_line_checks in a migration's file (e.g. '121_ingest_in_engine_checks'). */
export function checksOfMigration(name: string): string {
  const text = readFileSync(path.join(MIGRATIONS_DIR, `${name}.sql`), 'utf8');
  const create = 'CREATE VIEW IF NOT EXISTS ingest_line_checks AS';
  const at = text.indexOf(create);
  if (at < 0) throw new Error(`${name} does not create ingest_line_checks`);
  return text.slice(at + create.length, text.indexOf(';\n', at)).trim();
}

/** What a single-pass call did: as the pipeline's answer, plus the lines for the JavaScript steps. */
export interface SinglePassResult {
  valid: number;
  stored: number;
  /** (b2f) Valid lines that took the common path (not the checks view). */
  fast: number;
  /** Blocks the checked lines reached the views in (one: the in-block de-duplication covers the body). */
  blocks: number;
  refused: { line: number; code: RejectionCode; reason: string }[];
  deferred: RawRecord[];
  insertMs: number;
}

export class SinglePass {
  /**
   * blockRows: the statement's blocks this many lines (a probe of a body in several blocks);
   * default: the engine's. threads: the lines statement's max_threads (default 1, as today's
   * staging); more parse the file in parallel and number lines by the file's own _row_number.
   */
  constructor(
    private readonly wh: Warehouse,
    private readonly stageDir: string,
    private readonly blockRows?: number,
    private readonly threads = 1,
  ) {}

  /**
   * The checks of ingest_line_checks (the store's: migration 122's), or with `migration` those
   * of that migration's file (121: the checks before checks40), as a SELECT over `source` (a
   * table of n, line), the view's parameters bound as literals.
   */
  async checksOver(source: string, registry: readonly Registered[], maxBytes: number, migration?: string): Promise<string> {
    let sql = migration === undefined ? await this.storedChecks() : checksOfMigration(migration);
    const from = /FROM (\w+\.)?ingest_lines\s+WHERE batch = \{batch:String\}/g;
    if ((sql.match(from) ?? []).length !== 1) throw new Error('the checks view no longer reads ingest_lines by batch: update this prototype');
    sql = sql
      .replace(from, `FROM ${source}`)
      .replaceAll('{max_bytes:UInt32}', `toUInt32(${maxBytes})`)
      .replaceAll('{names:Array(String)}', `[${registry.map((r) => lit(r.protocolName)).join(', ')}]::Array(String)`)
      .replaceAll('{programs:Array(String)}', `[${registry.map((r) => lit(r.programId)).join(', ')}]::Array(String)`);
    if (/\{\w+:[^}]+\}/.test(sql)) throw new Error('the checks view has a parameter this prototype does not bind');
    return sql;
  }

  /** (b2f)'s tables and views: lines3 → lines3f (with `fast` and the typed row) → valid2, or the checks view → checked3. */
  private async fastPath(registry: readonly Registered[], maxBytes: number, cols: { name: string; type: string }[]): Promise<string[]> {
    const names = `[${registry.map((r) => lit(r.protocolName)).join(', ')}]::Array(String)`;
    const programs = `[${registry.map((r) => lit(r.programId)).join(', ')}]::Array(String)`;
    const rest = `(SELECT n, line FROM ${DB}.lines3f WHERE NOT fast)`;
    const row = BASE_COLUMNS.map((c) => (FAST_ROW[c] ?? `t.${c}`) + ` AS ${c}`).join(', ');
    return [
      `CREATE TABLE ${DB}.lines3 (batch String, source LowCardinality(String), n UInt32, line String) ENGINE = Null`,
      // Two hops: the shape and the typed row, then the flag from the row's columns (in one
      // SELECT, each use of t.x re-ran the JSONExtract: 12 µs a line instead of ~5).
      `CREATE TABLE ${DB}.lines3t (batch String, source LowCardinality(String), n UInt32, line String, shape Bool, t ${FAST_TYPE}) ENGINE = Null`,
      `CREATE MATERIALIZED VIEW ${DB}.lines3t_mv TO ${DB}.lines3t AS
       SELECT batch, source, n, line, shape, JSONExtract(if(shape, line, '{}'), '${FAST_TYPE}') AS t
       FROM (SELECT *, ${shapeTest(maxBytes)} AS shape FROM ${DB}.lines3)`,
      `CREATE TABLE ${DB}.lines3f (batch String, source LowCardinality(String), n UInt32, line String, fast Bool, t ${FAST_TYPE}) ENGINE = Null`,
      `CREATE MATERIALIZED VIEW ${DB}.lines3f_mv TO ${DB}.lines3f AS
       SELECT batch, source, n, line, least(shape, ${fastTests(names, programs)}) AS fast, t FROM ${DB}.lines3t`,
      `CREATE MATERIALIZED VIEW ${DB}.fast_mv TO ${DB}.valid2 AS SELECT batch, n, ${row}, cityHash64(signature) AS sig_key FROM ${DB}.lines3f WHERE fast`,
      `CREATE MATERIALIZED VIEW ${DB}.fast_valid_mv TO ${DB}.outcome AS
       SELECT batch, toUInt32(0) AS n, 'validfast' AS code, toString(count()) AS reason, '' AS line FROM (SELECT batch FROM ${DB}.lines3f WHERE fast) GROUP BY batch`,
      `CREATE TABLE ${DB}.checked3 (source LowCardinality(String), ${cols.map((c) => `${c.name} ${c.type}`).join(', ')}) ENGINE = Null`,
      `CREATE MATERIALIZED VIEW ${DB}.checked3_mv TO ${DB}.checked3 AS
       SELECT (SELECT any(batch) FROM ${DB}.lines3f) AS batch, (SELECT any(source) FROM ${DB}.lines3f) AS source,
              n, if(code IN ('', 'skip'), '', line) AS line, code, reason, ${BASE}, sig_key
       FROM (${await this.checksOver(rest, registry, maxBytes)})`,
      `CREATE MATERIALIZED VIEW ${DB}.checked3_valid_mv TO ${DB}.outcome AS
       SELECT batch, toUInt32(0) AS n, 'valid' AS code, toString(count()) AS reason, '' AS line
       FROM (SELECT batch FROM ${DB}.checked3 WHERE code = '') GROUP BY batch`,
      `CREATE MATERIALIZED VIEW ${DB}.checked3_refused_mv TO ${DB}.outcome AS
       SELECT batch, n, code, reason, if(code = 'defer', line, '') AS line FROM ${DB}.checked3 WHERE code NOT IN ('', 'skip')`,
      `CREATE MATERIALIZED VIEW ${DB}.checked3_dead_mv TO ${TABLES.deadLetters} (source LowCardinality(String), position String, code LowCardinality(String), reason String, payload String) AS
       SELECT source, concat('line ', toString(n)) AS position, code, reason, if(code = 'oversized', substringUTF8(line, 1, 4096), line) AS payload
       FROM ${DB}.checked3 WHERE code NOT IN ('', 'skip', 'defer')`,
      `CREATE MATERIALIZED VIEW ${DB}.valid3_mv TO ${DB}.valid2 AS SELECT batch, n, ${BASE}, sig_key FROM ${DB}.checked3 WHERE code = ''`,
    ];
  }

  /** The SELECT of the store's ingest_line_checks. */
  private async storedChecks(): Promise<string> {
    const [v] = await this.wh.query<{ q: string }>(
      `SELECT create_table_query AS q FROM system.tables WHERE database = currentDatabase() AND name = 'ingest_line_checks'`,
    );
    if (v === undefined) throw new Error('ingest_line_checks (migration 121) is missing');
    return v.q.slice(v.q.indexOf(' AS SELECT ') + ' AS '.length);
  }

  /** The database, its Null tables and the views (rebuilt whole: the registry is in their text). */
  async create(registry: readonly Registered[], maxBytes: number): Promise<void> {
    await this.drop();
    await this.wh.exec(`CREATE DATABASE ${DB}`);
    const cols = await this.wh.query<{ name: string; type: string }>(
      `SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = {t:String} ORDER BY position`,
      { params: { t: TABLES.ingestChecked } },
    );
    const typed = (names: readonly string[]): string => names.map((n) => `${n} ${cols.find((c) => c.name === n)!.type}`).join(', ');
    // A Null table of lines and its checks, once a line, into a Null table of checked lines;
    // the batch and source ride as scalars of the block (a materialized view's every read of
    // its source table is the inserted block).
    const checking = async (lines: string, checked: string, migration?: string): Promise<string[]> => [
      `CREATE TABLE ${DB}.${lines} (batch String, source LowCardinality(String), n UInt32, line String) ENGINE = Null`,
      `CREATE TABLE ${DB}.${checked} (source LowCardinality(String), ${cols.map((c) => `${c.name} ${c.type}`).join(', ')}) ENGINE = Null`,
      `CREATE MATERIALIZED VIEW ${DB}.${checked}_mv TO ${DB}.${checked} AS
       SELECT (SELECT any(batch) FROM ${DB}.${lines}) AS batch, (SELECT any(source) FROM ${DB}.${lines}) AS source,
              n, if(code IN ('', 'skip'), '', line) AS line, code, reason, ${BASE}, sig_key
       FROM (${await this.checksOver(`${DB}.${lines}`, registry, maxBytes, migration)})`,
    ];
    // What every design does with the refused lines of a checked block, and the answer's counts.
    const refusals = (checked: string): string[] => [
      // The filter in a subquery: at this level WHERE would read the alias `code` ('valid').
      `CREATE MATERIALIZED VIEW ${DB}.${checked}_valid_mv TO ${DB}.outcome AS
       SELECT batch, toUInt32(0) AS n, 'valid' AS code, toString(count()) AS reason, '' AS line
       FROM (SELECT batch FROM ${DB}.${checked} WHERE code = '') GROUP BY batch`,
      `CREATE MATERIALIZED VIEW ${DB}.${checked}_refused_mv TO ${DB}.outcome AS
       SELECT batch, n, code, reason, if(code = 'defer', line, '') AS line FROM ${DB}.${checked} WHERE code NOT IN ('', 'skip')`,
      // The dead-letter rows as engine-checks.ts writes them (an NDJSON body: "line n").
      `CREATE MATERIALIZED VIEW ${DB}.${checked}_dead_mv TO ${TABLES.deadLetters} (source LowCardinality(String), position String, code LowCardinality(String), reason String, payload String) AS
       SELECT source, concat('line ', toString(n)) AS position, code, reason, if(code = 'oversized', substringUTF8(line, 1, 4096), line) AS payload
       FROM ${DB}.${checked} WHERE code NOT IN ('', 'skip', 'defer')`,
    ];
    const ddl = [
      `CREATE TABLE ${DB}.outcome (batch String, n UInt32, code LowCardinality(String), reason String, line String) ENGINE = Memory`,
      // New rows on their way to the base table (whose own views then fire), counted.
      `CREATE TABLE ${DB}.fresh (batch String, ${typed(BASE_COLUMNS)}) ENGINE = Null`,
      `CREATE MATERIALIZED VIEW ${DB}.store_mv TO ${TABLES.transactions} (${typed(BASE_COLUMNS)}) AS SELECT ${BASE} FROM ${DB}.fresh`,
      `CREATE MATERIALIZED VIEW ${DB}.stored_mv TO ${DB}.outcome AS
       SELECT batch, toUInt32(0) AS n, 'stored' AS code, toString(count()) AS reason, '' AS line FROM ${DB}.fresh GROUP BY batch`,
      // (b) The single pass.
      ...(await checking('lines', 'checked')),
      ...refusals('checked'),
      // New valid rows: the first line of an identity in the block, and not in ingest_keys over
      // the block's seconds (its keys first: PREWHERE), as engine-checks.ts decides.
      `CREATE MATERIALIZED VIEW ${DB}.fresh_mv TO ${DB}.fresh AS
       SELECT batch, ${BASE} FROM ${DB}.checked
       WHERE code = '' AND ${newRows(`${DB}.checked`, "code = ''")}
       ORDER BY n LIMIT 1 BY signature, instruction_index`,
      // (b2) Two statements: the same checks and refusals, the valid rows kept in a Memory
      // table; then one INSERT SELECT of the new ones (ingestTwo).
      ...(await checking('lines2', 'checked2')),
      ...refusals('checked2'),
      `CREATE TABLE ${DB}.valid2 (batch String, n UInt32, ${typed(BASE_COLUMNS)}, sig_key UInt64) ENGINE = Memory`,
      `CREATE MATERIALIZED VIEW ${DB}.valid2_mv TO ${DB}.valid2 AS SELECT batch, n, ${BASE}, sig_key FROM ${DB}.checked2 WHERE code = ''`,
      // (d) The checks alone: the same view into a Null table with nothing behind it.
      ...(await checking('probe_lines', 'probe_checked')),
      // (b2) and (d) again with migration 121's checks, to compare the cheaper checks in the same rounds.
      ...(await checking('lines2_121', 'checked2_121', CHECKS_121)),
      ...refusals('checked2_121'),
      `CREATE MATERIALIZED VIEW ${DB}.valid2_121_mv TO ${DB}.valid2 AS SELECT batch, n, ${BASE}, sig_key FROM ${DB}.checked2_121 WHERE code = ''`,
      ...(await checking('probe_lines_121', 'probe_checked_121', CHECKS_121)),
      // (b2f) (b2) with a common path before the checks (checks40's prototype, bench/RESULTS.md):
      // each line's `fast` flag computed once, the fast lines' typed row straight to valid2, the
      // rest through the store's checks view.
      ...(await this.fastPath(registry, maxBytes, cols)),
      // (e) The engine's own parse alone: the ceiling's JSONEachRow into a Null table of the base table's columns.
      `CREATE TABLE ${DB}.parsed (${typed(BASE_COLUMNS)}) ENGINE = Null`,
    ];
    for (const sql of ddl) await this.wh.exec(sql);
  }

  async drop(): Promise<void> {
    if (this.pendingDone !== undefined) {
      await this.wh.insert(TABLES.ingestJournal, [{ batch_id: this.pendingDone, writer: JOURNAL_WRITER, state: 'done', buckets: [] }], {
        columns: ['batch_id', 'writer', 'state', 'buckets'],
      });
      this.pendingDone = undefined;
    }
    await this.wh.exec(`DROP DATABASE IF EXISTS ${DB} SYNC`);
  }

  /** The one statement: the staged body's lines into `table`. */
  private insertLines(table: string, file: string, batch: string, source: string): Promise<number> {
    return timeMs(() =>
      this.wh.exec(
        `INSERT INTO ${DB}.${table} SELECT {b:String}, {s:String}, toUInt32(${this.threads === 1 ? 'rowNumberInAllBlocks()' : '_row_number'} + 1), line FROM file({f:String}, 'LineAsString')`,
        {
          params: { b: batch, s: source, f: file },
          // One stream keeps the body's order (row numbers are line numbers); the views of a
          // block run side by side, as the pipeline's inserts do.
          settings: {
            max_threads: this.threads,
            input_format_parallel_parsing: this.threads === 1 ? 0 : 1,
            parallel_view_processing: 1,
            ...(this.blockRows === undefined ? {} : { max_block_size: this.blockRows, min_insert_block_size_rows: this.blockRows }),
          },
        },
      ),
    );
  }

  /** A body staged as a file (chDB's raw insert takes no LineAsString) for fn, removed after. */
  private async staged<T>(body: Uint8Array, batch: string, fn: (file: string) => Promise<T>): Promise<T> {
    const file = path.join(this.stageDir, `${batch}.ndjson`);
    await writeFile(file, body);
    try {
      return await fn(file);
    } finally {
      await rm(file, { force: true });
    }
  }

  /** The journal's 'done' of the previous (b+j) call, carried by the next 'begin' (as ingest/steps/journal.ts does). */
  private pendingDone: string | undefined;

  /**
   * (b+j) How the single pass could keep the crash repair: before the statement, the ingest
   * journal's 'begin' with the (protocol, hour) buckets of every line that names them, read by a
   * light scan of the staged body (two fields a line; a superset of the stored rows' buckets, and
   * rebuilding a bucket more is harmless: view-repair.ts recomputes it from the base table).
   */
  private async journalBegin(file: string, batch: string): Promise<number> {
    const done = this.pendingDone;
    this.pendingDone = batch;
    return timeMs(() =>
      this.wh.exec(
        `INSERT INTO ${TABLES.ingestJournal} (batch_id, writer, state, buckets)
         SELECT {b:String}, {w:String}, 'begin', groupUniqArray((p, toDateTime(intDiv(t, 3600) * 3600, 'UTC')))
         FROM (SELECT JSONExtractString(line, 'protocol_name') AS p, toUInt32(toFloat64OrZero(JSONExtractRaw(line, 'block_time'))) AS t
               FROM file({f:String}, 'LineAsString') WHERE p != '')
         ${done === undefined ? '' : "UNION ALL SELECT {d:String}, {w:String}, 'done', []"}`,
        { params: { b: batch, w: JOURNAL_WRITER, f: file, d: done ?? '' } },
      ),
    );
  }

  /** A body in one statement (b), with the journal's 'begin' before it (b+j), or two (b2); then its outcome read and removed. */
  async ingest(body: Uint8Array, source: string, design: Design = 'single'): Promise<SinglePassResult> {
    const batch = randomUUID();
    const insertMs = await this.staged(body, batch, async (file) => {
      const journalMs = design === 'journal' ? await this.journalBegin(file, batch) : 0;
      const two = design === 'two' || design === 'two121' || design === 'fast';
      const table = { two121: 'lines2_121', fast: 'lines3', two: 'lines2' }[design as string] ?? 'lines';
      const ms = await this.insertLines(table, file, batch, source);
      return journalMs + ms + (two ? await this.storeTwo(batch) : 0);
    });
    const rows = await this.wh.query<{ n: number; code: string; reason: string; line: string }>(
      `SELECT n, code, reason, line FROM ${DB}.outcome WHERE batch = {b:String} ORDER BY n`,
      { params: { b: batch } },
    );
    await this.wh.exec(`ALTER TABLE ${DB}.outcome DELETE WHERE batch = {b:String}`, { params: { b: batch } });
    const sum = (code: string): number => rows.filter((r) => r.code === code).reduce((s, r) => s + Number(r.reason), 0);
    const others = rows.filter((r) => r.code !== 'valid' && r.code !== 'validfast' && r.code !== 'stored');
    return {
      valid: sum('valid') + sum('validfast'),
      fast: sum('validfast'),
      stored: sum('stored'),
      blocks: rows.filter((r) => r.code === 'valid').length,
      refused: others.filter((r) => r.code !== 'defer').map((r) => ({ line: Number(r.n), code: r.code as RejectionCode, reason: r.reason })),
      deferred: others.filter((r) => r.code === 'defer').map((r) => ({ value: r.line, position: { line: Number(r.n) } })),
      insertMs,
    };
  }

  /** (b2)'s second statement: the batch's new valid rows, first of their identity in the whole body, to the base table; its rows then removed. */
  private async storeTwo(batch: string): Promise<number> {
    const params = { b: batch };
    const ms = await timeMs(() =>
      this.wh.exec(
        `INSERT INTO ${DB}.fresh SELECT batch, ${BASE} FROM ${DB}.valid2
         WHERE batch = {b:String} AND ${newRows(`${DB}.valid2`, 'batch = {b:String}')}
         ORDER BY n LIMIT 1 BY signature, instruction_index`,
        { params, settings: { parallel_view_processing: 1 } },
      ),
    );
    await this.wh.exec(`ALTER TABLE ${DB}.valid2 DELETE WHERE batch = {b:String}`, { params });
    return ms;
  }

  /** (d) The checks alone over a body. */
  async checksOnly(body: Uint8Array, migration?: typeof CHECKS_121): Promise<void> {
    const batch = randomUUID();
    await this.staged(body, batch, (file) => this.insertLines(migration === undefined ? 'probe_lines' : 'probe_lines_121', file, batch, 'probe'));
  }
}

/** The single pass as the pipeline would answer: the deferred lines decided by the JavaScript steps, as engine-ingest.ts does. */
export async function singlePassReport(
  sp: SinglePass,
  js: IngestPipeline,
  body: Uint8Array,
  source: string,
  design: Design = 'single',
): Promise<IngestReport & { blocks: number; insertMs: number; fast: number }> {
  const r = await sp.ingest(body, source, design);
  const rejected = r.refused.map((x) => ({ code: x.code, detail: x.reason, position: { line: x.line } }));
  const deferred = r.deferred.length === 0 ? { accepted: 0, duplicates: 0, rejected: [] } : await js.ingest(r.deferred, source);
  const lineOf = (x: { position: object }): number => ('line' in x.position ? Number(x.position.line) : 0);
  return {
    accepted: r.stored + deferred.accepted,
    duplicates: r.valid - r.stored + deferred.duplicates,
    rejected: [...rejected, ...deferred.rejected].sort((a, b) => lineOf(a) - lineOf(b)),
    blocks: r.blocks,
    insertMs: r.insertMs,
    fast: r.fast,
  };
}
