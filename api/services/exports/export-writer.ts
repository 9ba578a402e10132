// The engine work of an export: the plan of a filter export (its strata and fitted transforms,
// rows per hour and split, packed into chunks of about EXPORT_FILE_MAX_ROWS), the columns its
// files hold, and writing one chunk's files (the split and sampling expressions are in
// export-sql.ts). Every statement is ours; a SQL export's text is the sandbox's, already
// checked by its guard.
//
// Values go into these statements as literals (`literal()`), not as bound parameters:
// chDB runs bound-parameter queries one at a time across the whole process, so a 1.7 s
// export statement with bound values held a serving getProtocolStats (also bound) for
// 1.7 s; the same statement with literals ran beside it (bench/RESULTS.md, issue 13). The
// values are never client text: protocol names checked against the registry's list,
// whole numbers, and the engine's own timestamp text, each rendered by `literal()`.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { AppError, Errors } from '../../../core/errors.ts';
import type { Settings, Warehouse } from '../../../warehouse/warehouse.ts';
import { activeSplits, FORMAT_FILES, SPLIT_NAMES, type ExportFormat, type FilterExportSpec, type OutputSpec, type SplitName } from './export-config.ts';
import { literal, sampleCondition, splitExpression } from './export-sql.ts';
import type { Chunk, JobWork } from './job-store.ts';
import { TABLES } from '../../../warehouse/tables.ts';
import { fitPreprocessing, preprocessedColumn, type FittedPreprocessing } from './preprocessing.ts';
import { planStrata, stratifiedCondition, type StrataPlan } from './stratified-sampling.ts';
import { ENGINE_LOWEST_PRIORITY } from '../../../core/limits/process.ts';

const HOUR_SECONDS = 3600;

export { literal, sampleCondition, splitExpression } from './export-sql.ts';

/** File name of a split's part of a chunk: `train-00000.parquet`, sorting in write order. */
export const fileName = (split: SplitName, chunk: number, format: ExportFormat): string =>
  `${split}-${String(chunk).padStart(5, '0')}.${FORMAT_FILES[format].ext}`;

/** Settings of every export statement (the export session's own, never the serving one's). */
export function writeSettings(base: { maxThreads: number; timeoutSeconds: number }): Settings {
  return {
    max_threads: base.maxThreads,
    // Exports yield the CPU to serving, like client SQL.
    os_thread_priority: ENGINE_LOWEST_PRIORITY,
    max_execution_time: base.timeoutSeconds,
    timeout_overflow_mode: 'throw',
    // Bloom filters made the Parquet files 4.1x larger; columns are read whole by training loaders.
    output_format_parquet_write_bloom_filter: 0,
    // A chunk rewritten after a restart replaces what a killed run left half-written.
    engine_file_truncate_on_insert: 1,
    // Numbers as JSON numbers in JSONL (every exported integer is below 2^53).
    output_format_json_quote_64bit_integers: 0,
    // CSV and JSONL timestamps in ISO 8601 UTC (`2026-11-02T10:00:00Z`), as Parquet's are UTC:
    // without it they carried no time zone and loaders read them as local times.
    date_time_output_format: 'iso',
  };
}

// ---- Filter exports --------------------------------------------------------------------

/** WHERE clause of a filter export before sampling (without chunk bounds). */
export function baseWhere(spec: FilterExportSpec, visible: readonly string[], ingestedAt: string | null): string {
  const parts = [`protocol_name IN ${literal(spec.filters.protocols ?? [...visible])}`];
  // The days as seconds, as the one check converted them (both ends inclusive). A job written
  // before the spec kept them is not run on days it cannot read: it fails, to be asked again.
  const range = spec.filters.range;
  if (range === undefined && spec.filters.dateRange !== null) {
    throw new AppError(Errors.invalidParams, 'this job was created by an older version of the service; create it again');
  }
  if (range?.gte !== undefined) parts.push(`block_time >= toDateTime(${literal(range.gte)})`);
  if (range?.lte !== undefined) parts.push(`block_time <= toDateTime(${literal(range.lte)})`);
  if (ingestedAt !== null) parts.push(`ingested_at <= toDateTime64(${literal(ingestedAt)}, 3, 'UTC')`);
  return parts.join(' AND ');
}

/**
 * What a filter export reads, before sampling and chunking: the statement the cost model
 * prices before the job is made (the x402 plan's price of POST /v1/exports, docs/x402.md).
 */
export function filterExportRead(spec: FilterExportSpec, visible: readonly string[]): string {
  return `SELECT ${selectList(spec, null)} FROM ${TABLES.transactions} WHERE ${baseWhere(spec, visible, null)}`;
}

/** WHERE clause of a filter export (without chunk bounds); a STRATIFIED one needs its planned strata. */
export function filterWhere(spec: FilterExportSpec, visible: readonly string[], ingestedAt: string | null, strata?: StrataPlan): string {
  const s = spec.sampling;
  if (s?.strategy === 'STRATIFIED' && strata === undefined) throw new Error('a STRATIFIED export is read with its planned strata');
  const sample = s?.strategy === 'STRATIFIED' ? stratifiedCondition(s, strata!) : sampleCondition(s);
  return `${baseWhere(spec, visible, ingestedAt)} AND ${sample}`;
}

/**
 * What a filter export's files hold, as SELECT expressions: the columns in their order, each
 * as stored or under its fitted transform (preprocessing.ts); in CSV, `accounts` as a JSON
 * array (a CSV cell is text: JSON is what every loader can parse, not the engine's `['a','b']`).
 */
export function selectList(spec: FilterExportSpec, fitted: FittedPreprocessing | null | undefined): string {
  return spec.columns
    .flatMap((c) => preprocessedColumn(c, fitted) ?? [spec.format === 'CSV' && c === 'accounts' ? 'toJSONString(accounts) AS accounts' : c])
    .join(', ');
}

/**
 * Plan a filter export: fix the watermark, count the rows of every hour and split, and
 * pack whole hours into chunks of at most `fileMaxRows` (an hour with more stays whole).
 */
export async function planFilterExport(
  wh: Warehouse,
  spec: FilterExportSpec,
  visible: readonly string[],
  fileMaxRows: number,
  settings: Settings,
): Promise<{ work: JobWork; rowsTotal: number; schema: { name: string; type: string }[] }> {
  // The newest ingested_at: a read of one column, ours, the same for every plan; it is left
  // out of the plan's read budget (which the filter's own statements keep) but not the time-out.
  const { max_rows_to_read: _r, max_bytes_to_read: _b, ...timeOnly } = settings;
  const ingestedAt = await dataWatermark(wh, timeOnly);
  const strata = spec.sampling?.strategy === 'STRATIFIED' ? await planStrata(wh, spec.sampling, baseWhere(spec, visible, ingestedAt), settings) : undefined;
  const where = filterWhere(spec, visible, ingestedAt, strata);
  const rows = await wh.query<{ h: number; split: SplitName; n: string; newest: number }>(
    `SELECT toUInt32(toStartOfHour(block_time)) AS h, ${splitExpression(spec.splits, spec.seed)} AS split, count() AS n,
            toUInt32(max(block_time)) AS newest
     FROM ${TABLES.transactions} WHERE ${where} GROUP BY h, split ORDER BY h, split`,
    { settings },
  );
  const chunks: Chunk[] = [];
  let current: Chunk | undefined;
  let maxBlockTime: number | null = null;
  let total = 0;
  const size = (c: Chunk): number => SPLIT_NAMES.reduce((a, s) => a + c.rows[s], 0);
  const hours = new Map<number, Record<SplitName, number>>();
  for (const r of rows) {
    const h = Number(r.h);
    const perSplit = hours.get(h) ?? { train: 0, test: 0, val: 0 };
    perSplit[r.split] += Number(r.n);
    hours.set(h, perSplit);
    total += Number(r.n);
    maxBlockTime = Math.max(maxBlockTime ?? 0, Number(r.newest));
  }
  for (const [h, perSplit] of hours) {
    const n = SPLIT_NAMES.reduce((a, s) => a + perSplit[s], 0);
    if (current === undefined || size(current) + n > fileMaxRows) {
      current = { from: h, to: h + HOUR_SECONDS, rows: { train: 0, test: 0, val: 0 } };
      chunks.push(current);
    }
    current.to = h + HOUR_SECONDS;
    for (const s of SPLIT_NAMES) current.rows[s] += perSplit[s];
  }
  const fitted = await fitPreprocessing(wh, spec, where, settings);
  const schema = await wh.query<{ name: string; type: string }>(`DESCRIBE TABLE (SELECT ${selectList(spec, fitted)} FROM ${TABLES.transactions})`, {
    settings,
  });
  const work: JobWork = { ingestedAt, maxBlockTime, visible: [...visible], chunks, nextChunk: 0 };
  if (strata !== undefined) work.strata = strata;
  if (fitted !== null) work.fitted = fitted;
  return { work, rowsTotal: total, schema: schema.map((c) => ({ name: c.name, type: c.type })) };
}

/**
 * The SELECT of one chunk of a filter export, restricted to one split when `split` is given; a
 * CSV's text cells on one line each (csvColumns, over the export's `schema`).
 */
function chunkSelect(spec: FilterExportSpec, work: JobWork, where: string, chunk: Chunk, split: SplitName | null, schema: Columns): string {
  const splitCond = split === null ? '' : ` AND ${splitExpression(spec.splits, spec.seed)} = ${literal(split)}`;
  const select = `SELECT ${selectList(spec, work.fitted)} FROM ${TABLES.transactions}
WHERE ${where} AND block_time >= toDateTime(${literal(chunk.from)}) AND block_time < toDateTime(${literal(chunk.to)})${splitCond}
ORDER BY block_time, signature, instruction_index`;
  return spec.format === 'CSV' ? csvColumns(select, schema) : select;
}

/** Write one chunk of a filter export (whose columns are `schema`): one file per split that has rows in it. */
export async function writeFilterChunk(
  wh: Warehouse,
  spec: FilterExportSpec,
  visible: readonly string[],
  work: JobWork,
  index: number,
  dir: string,
  settings: Settings,
  schema: Columns,
): Promise<{ name: string; split: SplitName; rows: number }[]> {
  const chunk = work.chunks[index]!;
  const where = filterWhere(spec, visible, work.ingestedAt, work.strata);
  const splits = SPLIT_NAMES.filter((s) => chunk.rows[s] > 0);
  const out = splits.map((split) => ({ name: fileName(split, index, spec.format), split, rows: chunk.rows[split] }));
  if (splits.length === 0) return out;
  const format = FORMAT_FILES[spec.format].engine;
  // One statement writes every split (PARTITION BY names each file by its split) when the
  // split's column is written and the engine writes the files itself.
  if (splits.length > 1 && spec.columns.includes('signature') && wh.transport === 'embedded') {
    const pattern = path.join(dir, `{_partition_id}-${String(index).padStart(5, '0')}.${FORMAT_FILES[spec.format].ext}`);
    await wh.exec(
      `INSERT INTO FUNCTION file(${literal(pattern)}, ${literal(format)}) PARTITION BY ${splitExpression(spec.splits, spec.seed)}\n${chunkSelect(spec, work, where, chunk, null, schema)}`,
      { settings },
    );
    return out;
  }
  for (const f of out) {
    await writeFile(wh, chunkSelect(spec, work, where, chunk, splits.length > 1 ? f.split : null, schema), path.join(dir, f.name), format, settings);
  }
  return out;
}

/**
 * Every split asked for gets a file, an empty one with the columns' schema when no row fell
 * in it (a CSV header, a Parquet file of 0 rows, an empty JSONL file): loaders then find each
 * split, and an export of 0 rows still says what its columns are. `select` is the export's
 * SELECT; the engine writes its first 0 rows. Returns the files written.
 */
export async function writeEmptySplits(
  wh: Warehouse,
  spec: OutputSpec,
  select: string,
  present: ReadonlySet<SplitName>,
  dir: string,
  settings: Settings,
): Promise<{ name: string; split: SplitName; rows: number }[]> {
  const out: { name: string; split: SplitName; rows: number }[] = [];
  for (const split of activeSplits(spec.splits)) {
    if (present.has(split)) continue;
    const name = fileName(split, 0, spec.format);
    await writeFile(wh, `SELECT * FROM (\n${select}\n) LIMIT 0`, path.join(dir, name), FORMAT_FILES[spec.format].engine, settings);
    out.push({ name, split, rows: 0 });
  }
  return out;
}

/** A SELECT of a filter export's columns that the engine can describe and write 0 rows of. */
export const emptySelect = (spec: FilterExportSpec, fitted: FittedPreprocessing | null | undefined): string =>
  `SELECT ${selectList(spec, fitted)} FROM ${TABLES.transactions} WHERE 0`;

// ---- CSV cells ---------------------------------------------------------------------------

/** A result's columns as the engine describes them. */
type Columns = readonly { name: string; type: string }[] | null;

/** A quoted identifier (a SQL export's column names are the client's). */
const ident = (name: string): string => `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;

/** Arrays, maps and tuples: a CSV cell holds them as JSON text. */
export const isNested = (type: string): boolean => /^(Nullable\()?(Array|Map|Tuple)\(/.test(type);

/** Text columns: String or FixedString, Nullable or LowCardinality or not. */
const isText = (type: string): boolean => /^(LowCardinality\()?(Nullable\()?(String|FixedString\(\d+\))\)*$/.test(type);

/**
 * A text value as an export's CSV holds it: a backslash as `\\`, a line feed as `\n` and a
 * carriage return as `\r` (two characters each), so that no value spans lines. Readers that
 * split a file at line ends before parsing quotes (pyarrow with its defaults, in 1 MiB blocks)
 * failed on multi-line log messages. One pass back (`\\` `\n` `\r` to \, LF, CR) restores the
 * value; the dataset card and docs/exports.md give the rule and the decoder.
 */
export const csvEscaped = (expr: string): string => `replaceAll(replaceAll(replaceAll(${expr}, '\\\\', '\\\\\\\\'), '\\n', '\\\\n'), '\\r', '\\\\r')`;

/**
 * A SELECT as an export's CSV writes it: arrays, maps and tuples as JSON (see selectList), and
 * every text value, JSON included, on one line (csvEscaped). `columns` are the SELECT's own.
 * The outer SELECT keeps the inner one's order.
 */
export function csvColumns(select: string, columns: Columns): string {
  const cells = (columns ?? []).flatMap((c) => {
    const name = ident(c.name);
    if (isNested(c.type)) return [`${csvEscaped(`toJSONString(${name})`)} AS ${name}`];
    if (isText(c.type)) return [`${csvEscaped(c.type.includes('FixedString') ? `toString(${name})` : name)} AS ${name}`];
    return [];
  });
  if (cells.length === 0) return select;
  return `SELECT * REPLACE (${cells.join(', ')}) FROM (\n${select}\n)`;
}

/** The columns of a CSV file written by csvColumns: JSON and FixedString cells are String text. */
export const csvFileColumns = (columns: readonly { name: string; type: string }[]): { name: string; type: string }[] =>
  columns.map((c) => (isNested(c.type) || /FixedString/.test(c.type) ? { ...c, type: 'String' } : c));

// ---- Any SELECT into one file ------------------------------------------------------------

/**
 * Write a SELECT's rows to `file` in an engine format. Embedded, the engine writes the file
 * itself (file() takes absolute paths in chDB; relative ones land in the process's working
 * directory, not user_files). A server would write on its own disk, so there the rows are
 * streamed here in the format (one Parquet file for the whole result, headers once).
 */
export async function writeFile(wh: Warehouse, select: string, file: string, format: string, settings: Settings): Promise<void> {
  if (wh.transport === 'embedded') {
    await wh.exec(`INSERT INTO FUNCTION file(${literal(file)}, ${literal(format)})\n${select}`, { settings });
    return;
  }
  const { engine_file_truncate_on_insert: _t, ...rest } = settings;
  await pipeline(Readable.from(wh.stream(select, format, { settings: rest })), createWriteStream(file));
}

/**
 * Bytes a row takes in an export file, as the engine computes it: the row formatted exactly
 * as the text formats write it (a CSV file adds its header line), and for Parquet the row's
 * size in memory, an upper bound for what compresses (incompressible data is about its size).
 */
export function rowBytesExpression(format: ExportFormat): string {
  if (format === 'PARQUET') return 'byteSize(*)';
  return `length(formatRow(${literal(format === 'CSV' ? 'CSV' : 'JSONEachRow')}, *))`;
}

/** The newest ingested_at now: a job reads only rows at or before it (its snapshot), and the manifest records it. */
export async function dataWatermark(wh: Warehouse, settings: Settings = {}): Promise<string> {
  const [r] = await wh.query<{ at: string }>(`SELECT toString(max(ingested_at)) AS at FROM ${TABLES.transactions}`, { settings });
  return r?.at ?? '1970-01-01 00:00:00.000';
}

/** Size and SHA-256 of a file, read once. */
export async function fileDigest(file: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return { bytes: (await stat(file)).size, sha256: hash.digest('hex') };
}

export type { OutputSpec };
