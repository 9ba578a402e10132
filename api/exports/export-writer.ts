// The engine work of an export: the split and sampling expressions, the plan of a filter
// export (rows per hour and split, packed into chunks of about EXPORT_FILE_MAX_ROWS), and
// writing one chunk's files. Every statement is ours; a SQL export's text is the sandbox's,
// already checked by its guard.
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
import type { Settings, Warehouse } from '../../warehouse/warehouse.ts';
import { activeSplits, FORMAT_FILES, SPLIT_NAMES, type ExportFormat, type FilterExportSpec, type OutputSpec, type Sampling, type SplitName, type Splits } from './export-config.ts';
import type { Chunk, JobWork } from './job-store.ts';
import { TABLES } from '../../warehouse/tables.ts';

/**
 * Hashes are taken modulo 2^32 and compared with integer thresholds: the same figures in
 * any language, and 1/2^32 resolution for rates and split fractions.
 */
const HASH_RANGE = 2 ** 32;
const threshold = (fraction: number): number => Math.min(HASH_RANGE, Math.round(fraction * HASH_RANGE));
const hashOf = (column: string, seed: number): string => `(cityHash64(${column}, toUInt64(${seed})) % ${HASH_RANGE})`;

/**
 * The row is kept by the sample: a hash of the signature with the sampling seed, so a
 * transaction's instructions are kept or dropped together, independently of its split.
 */
export function sampleCondition(sampling: Sampling | null, column = 'signature'): string {
  if (sampling === null || sampling.rate >= 1) return '1';
  return `${hashOf(column, sampling.seed)} < ${threshold(sampling.rate)}`;
}

/** The split a row falls in, by a hash of its signature with the split seed: a transaction never straddles splits. */
export function splitExpression(splits: Splits, seed: number, column = 'signature'): string {
  const active = activeSplits(splits);
  if (active.length === 1) return `'${active[0]}'`;
  const h = hashOf(column, seed);
  const t1 = threshold(splits.train);
  const t2 = threshold(splits.train + splits.test);
  return `multiIf(${h} < ${t1}, 'train', ${h} < ${t2}, 'test', 'val')`;
}

/** File name of a split's part of a chunk: `train-00000.parquet`, sorting in write order. */
export const fileName = (split: SplitName, chunk: number, format: ExportFormat): string =>
  `${split}-${String(chunk).padStart(5, '0')}.${FORMAT_FILES[format].ext}`;

/** Settings of every export statement (the export session's own, never the serving one's). */
export function writeSettings(base: { maxThreads: number; timeoutSeconds: number }): Settings {
  return {
    max_threads: base.maxThreads,
    // Exports yield the CPU to serving, like client SQL.
    os_thread_priority: 19,
    max_execution_time: base.timeoutSeconds,
    timeout_overflow_mode: 'throw',
    // Bloom filters made the Parquet files 4.1x larger; columns are read whole by training loaders.
    output_format_parquet_write_bloom_filter: 0,
    // A chunk rewritten after a restart replaces what a killed run left half-written.
    engine_file_truncate_on_insert: 1,
    // Numbers as JSON numbers in JSONL (every exported integer is below 2^53).
    output_format_json_quote_64bit_integers: 0,
  };
}

// ---- Filter exports --------------------------------------------------------------------

/** A SQL literal of a string, a whole number or a list of them (see the header: why not bound). */
export function literal(v: string | number | readonly (string | number)[]): string {
  if (Array.isArray(v)) return `[${v.map((x) => literal(x)).join(', ')}]`;
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw new Error(`not a whole number: ${v}`);
    return String(v);
  }
  return `'${String(v).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** WHERE clause of a filter export (without chunk bounds). */
export function filterWhere(spec: FilterExportSpec, visible: readonly string[], ingestedAt: string | null): string {
  const parts = [`protocol_name IN ${literal(spec.filters.protocols ?? [...visible])}`];
  const range = spec.filters.dateRange;
  if (range?.start != null) parts.push(`block_time >= toDateTime(${literal(Date.parse(`${range.start}T00:00:00Z`) / 1000)})`);
  // Inclusive end day: everything before the next midnight.
  if (range?.end != null) parts.push(`block_time < toDateTime(${literal(Date.parse(`${range.end}T00:00:00Z`) / 1000 + 86_400)})`);
  if (ingestedAt !== null) parts.push(`ingested_at <= toDateTime64(${literal(ingestedAt)}, 3, 'UTC')`);
  parts.push(sampleCondition(spec.sampling));
  return parts.join(' AND ');
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
  const where = filterWhere(spec, visible, ingestedAt);
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
      current = { from: h, to: h + 3600, rows: { train: 0, test: 0, val: 0 } };
      chunks.push(current);
    }
    current.to = h + 3600;
    for (const s of SPLIT_NAMES) current.rows[s] += perSplit[s];
  }
  const schema = await wh.query<{ name: string; type: string }>(
    `DESCRIBE TABLE (SELECT ${spec.columns.join(', ')} FROM ${TABLES.transactions})`, { settings },
  );
  return { work: { ingestedAt, maxBlockTime, visible: [...visible], chunks, nextChunk: 0 }, rowsTotal: total, schema: schema.map((c) => ({ name: c.name, type: c.type })) };
}

/** The SELECT of one chunk of a filter export, restricted to one split when `split` is given. */
function chunkSelect(spec: FilterExportSpec, where: string, chunk: Chunk, split: SplitName | null): string {
  const splitCond = split === null ? '' : ` AND ${splitExpression(spec.splits, spec.seed)} = ${literal(split)}`;
  return `SELECT ${spec.columns.join(', ')} FROM ${TABLES.transactions}
WHERE ${where} AND block_time >= toDateTime(${literal(chunk.from)}) AND block_time < toDateTime(${literal(chunk.to)})${splitCond}
ORDER BY block_time, signature, instruction_index`;
}

/** Write one chunk of a filter export: one file per split that has rows in it. */
export async function writeFilterChunk(
  wh: Warehouse,
  spec: FilterExportSpec,
  visible: readonly string[],
  work: JobWork,
  index: number,
  dir: string,
  settings: Settings,
): Promise<{ name: string; split: SplitName; rows: number }[]> {
  const chunk = work.chunks[index]!;
  const where = filterWhere(spec, visible, work.ingestedAt);
  const splits = SPLIT_NAMES.filter((s) => chunk.rows[s] > 0);
  const out = splits.map((split) => ({ name: fileName(split, index, spec.format), split, rows: chunk.rows[split] }));
  if (splits.length === 0) return out;
  const format = FORMAT_FILES[spec.format].engine;
  // One statement writes every split (PARTITION BY names each file by its split) when the
  // split's column is written and the engine writes the files itself.
  if (splits.length > 1 && spec.columns.includes('signature') && wh.transport === 'embedded') {
    const pattern = path.join(dir, `{_partition_id}-${String(index).padStart(5, '0')}.${FORMAT_FILES[spec.format].ext}`);
    await wh.exec(
      `INSERT INTO FUNCTION file(${literal(pattern)}, ${literal(format)}) PARTITION BY ${splitExpression(spec.splits, spec.seed)}\n${chunkSelect(spec, where, chunk, null)}`,
      { settings },
    );
    return out;
  }
  for (const f of out) {
    await writeFile(wh, chunkSelect(spec, where, chunk, splits.length > 1 ? f.split : null), path.join(dir, f.name), format, settings);
  }
  return out;
}

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
