// The engine work of one job's run, for the service (export-service.ts), which owns the
// job's states. Every statement obeys the plan's budgets, as a client query does: the SQL
// time-out per statement (EXPORT_STATEMENT_TIMEOUT_SECONDS, at most SQL_TIMEOUT_SECONDS),
// the read budget (PLAN_QUERY_BUDGET), and the disk quotas (export-quotas.ts) checked
// before anything is written. A long job is many statements: a filter export is written in
// chunks of about EXPORT_FILE_MAX_ROWS rows; a SQL export is one statement (counted first,
// then written), and one that cannot finish in the time-out fails, naming how to split it.
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { ExportConfig } from '../../../core/config/load-config.ts';
import { PLAN_QUERY_BUDGET, type Plan } from '../../../core/plans.ts';
import { ClickHouseCode, WarehouseError, type Settings, type Warehouse } from '../../../warehouse/warehouse.ts';
import { TABLES } from '../../../warehouse/tables.ts';
import { budgetSettings } from '../sql/query-cost.ts';
import { activeSplits, FORMAT_FILES, SPLIT_NAMES, type ExportFormat, type FilterExportSpec, type SqlExportSpec } from './export-config.ts';
import type { ExportQuotas } from './export-quotas.ts';
import {
  csvColumns,
  csvFileColumns,
  dataWatermark,
  emptySelect,
  fileName,
  filterWhere,
  literal,
  planFilterExport,
  rowBytesExpression,
  sampleCondition,
  selectList,
  splitExpression,
  writeEmptySplits,
  writeFile,
  writeFilterChunk,
  writeSettings,
} from './export-writer.ts';
import type { FileFactsWorker } from './file-facts.ts';
import { JobFailure } from './job-errors.ts';
import { numberedRows, rowColumnOf } from './execution-rows.ts';
import type { ExportFile, JobRecord, JobWork } from './job-store.ts';
import { EXPORT_SAMPLE_ROWS } from '../../../core/limits/exports.ts';

/** What a run needs of the service. */
export interface RunContext {
  job: JobRecord;
  wh: Warehouse;
  /** The job's directory. */
  dir: string;
  config: ExportConfig;
  quotas: ExportQuotas;
  visibleProtocols: () => Promise<string[]>;
  /** Throws when the job was cancelled or the service is stopping. */
  checkpoint: () => void;
  /** At a chunk boundary: throws Yielded when another job should have the worker. */
  boundary: () => void;
  /** Progress from rows written, saved. */
  advance: () => void;
  save: () => void;
  /** Takes the bytes, sha256 and rows of each written file (the service's one worker thread). */
  files: FileFactsWorker;
}

/** Settings of a filter export's statements: the export session's, and the plan's read budget. */
function filterSettings(config: ExportConfig, plan: Plan): Settings {
  return { ...writeSettings({ maxThreads: config.maxThreads, timeoutSeconds: config.statementTimeoutSeconds }), ...budgetSettings(plan) };
}

/** Run an engine statement; its failures become reasons the job's owner can act on. */
async function statement<T>(ctx: RunContext, settings: Settings, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw budgetFailure(err, ctx.job, Number(settings.max_execution_time));
  }
}

function budgetFailure(err: unknown, job: JobRecord, seconds: number): unknown {
  if (!(err instanceof WarehouseError)) return err;
  const sql = job.spec.kind === 'sql';
  switch (err.clickhouseCode) {
    case ClickHouseCode.TIMEOUT_EXCEEDED:
    case ClickHouseCode.QUERY_WAS_CANCELLED:
      return new JobFailure(
        `a statement of this export ran longer than the ${seconds} s limit of one export statement (the SQL time-out) and was stopped; ` +
          (sql
            ? 'a SQL export runs as one statement: narrow the query, or split it into several exports by a range (WHERE date BETWEEN …)'
            : 'each chunk of a filter export is one statement: narrow filters.dateRange or name fewer filters.protocols'),
      );
    case ClickHouseCode.TOO_MANY_ROWS:
    case ClickHouseCode.TOO_MANY_ROWS_OR_BYTES:
      if (/to read/i.test(err.message)) {
        return new JobFailure(
          `a statement of this export read more rows than the ${job.plan} plan allows per statement (${PLAN_QUERY_BUDGET[job.plan]}); ` +
            'narrow it: a date range on transactions, fewer protocols, or the hourly tables',
        );
      }
      return err;
    case ClickHouseCode.MEMORY_LIMIT_EXCEEDED:
      return new JobFailure('a statement of this export needed more memory than one may use: select fewer or smaller columns, or fewer rows');
    default:
      return err;
  }
}

// ---- Filter exports ----------------------------------------------------------------------

/**
 * A filter export's first stage, once per job: its chunks planned, refused past the plan's row
 * cap, and the bytes per row of a sample measured; kept on the job, so a resumed job skips it.
 */
async function planFilterJob(ctx: RunContext, spec: FilterExportSpec, settings: Settings): Promise<JobWork> {
  const { job, wh, config } = ctx;
  const visible = await ctx.visibleProtocols();
  const plan = await statement(ctx, settings, () => planFilterExport(wh, spec, visible, config.fileMaxRows, settings));
  ctx.checkpoint();
  const cap = config.maxRows[job.plan];
  if (plan.rowsTotal > cap) {
    throw new JobFailure(
      `the export would write ${plan.rowsTotal} rows; the ${job.plan} plan allows ${cap} rows per export: narrow filters.dateRange, name fewer filters.protocols, or sample (sampling.rate)`,
    );
  }
  // Bytes per row of a sample as the file will hold them: the first chunk is checked
  // against the quotas before it is written, not once it is on disk.
  const where = filterWhere(spec, visible, plan.work.ingestedAt, plan.work.strata);
  const sample = `SELECT ${selectList(spec, plan.work.fitted)} FROM ${TABLES.transactions} WHERE ${where} LIMIT ${EXPORT_SAMPLE_ROWS}`;
  const [s] = await statement(ctx, settings, () =>
    wh.query<{ n: string | number; bytes: string | number | null }>(
      `SELECT count() AS n, sum(${rowBytesExpression(spec.format)}) AS bytes FROM (${spec.format === 'CSV' ? csvColumns(sample, plan.schema) : sample})`,
      { settings },
    ),
  );
  job.work = { ...plan.work, rowBytes: Number(s?.n ?? 0) === 0 ? 0 : Number(s?.bytes ?? 0) / Number(s!.n) };
  job.rowsTotal = plan.rowsTotal;
  job.schema = plan.schema;
  ctx.save();
  return job.work;
}

export async function runFilters(ctx: RunContext, spec: FilterExportSpec): Promise<void> {
  const { job, wh, dir, config } = ctx;
  const settings = filterSettings(config, job.plan);
  const work = job.work ?? (await planFilterJob(ctx, spec, settings));
  // Files of chunks before nextChunk are done; a chunk interrupted mid-write is rewritten whole.
  job.files = job.files.filter((f) => Number(f.name.slice(f.name.indexOf('-') + 1, f.name.indexOf('.'))) < work.nextChunk);
  // Each file's hash and row count are taken on the worker while the engine writes the
  // next chunk (file-facts.ts: why); the job completes once every file is checked.
  let failure: unknown = null;
  const checks: Promise<void>[] = [];
  const check = (entry: ExportFile): void => {
    checks.push(
      checkFile(ctx.files, entry, path.join(dir, entry.name), spec.format).catch((err: unknown) => {
        failure ??= err;
      }),
    );
  };
  for (const f of job.files) if (f.sha256 === '') check(f);
  const rowsOf = (i: number): number => SPLIT_NAMES.reduce((a, s) => a + work.chunks[i]!.rows[s], 0);
  const first = work.nextChunk;
  for (let i = first; i < work.chunks.length; i++) {
    ctx.checkpoint();
    if (failure !== null) throw failure;
    if (i > first) ctx.boundary();
    // Bytes per row of this job's files so far, or of the sample before any: the rest of
    // the job must fit its quotas (Parquet's sample is the rows' size in memory, an upper
    // bound, so the whole job is judged on it only once files show the real ratio), and the
    // next chunk is held against them while it is written.
    const soFar = job.files.reduce((a, f) => ({ rows: a.rows + f.rows, bytes: a.bytes + f.bytes }), { rows: 0, bytes: 0 });
    const rate = soFar.rows > 0 ? soFar.bytes / soFar.rows : (work.rowBytes ?? 0);
    if (soFar.rows > 0 || spec.format !== 'PARQUET') {
      let rest = 0;
      for (let j = i; j < work.chunks.length; j++) rest += rowsOf(j);
      ctx.quotas.claim(job, rate * rest, 'this export', false);
    }
    ctx.quotas.claim(job, rate * rowsOf(i), 'the next chunk');
    let written: Awaited<ReturnType<typeof writeFilterChunk>>;
    try {
      written = await statement(ctx, settings, () => writeFilterChunk(wh, spec, work.visible, work, i, dir, settings, job.schema));
    } finally {
      ctx.quotas.release(job);
    }
    ctx.checkpoint();
    for (const f of written) {
      const entry: ExportFile = { ...f, bytes: (await stat(path.join(dir, f.name))).size, sha256: '' };
      job.files.push(entry);
      check(entry);
    }
    job.rowsWritten += written.reduce((a, f) => a + f.rows, 0);
    work.nextChunk = i + 1;
    ctx.advance();
    ctx.quotas.recheck(job);
  }
  ctx.checkpoint();
  const empty = await statement(ctx, settings, () =>
    writeEmptySplits(wh, spec, emptySelect(spec, work.fitted), new Set(job.files.map((f) => f.split)), dir, settings),
  );
  for (const f of empty) {
    const entry: ExportFile = { ...f, bytes: (await stat(path.join(dir, f.name))).size, sha256: '' };
    job.files.push(entry);
    check(entry);
  }
  await Promise.all(checks);
  if (failure !== null) throw failure;
}

/** Hash and count one written file; its rows must be the rows the plan counted for it. */
async function checkFile(files: FileFactsWorker, entry: ExportFile, file: string, format: ExportFormat): Promise<void> {
  const facts = await files.facts(file, format);
  if (facts.rows !== entry.rows) {
    throw new JobFailure(`${entry.name} holds ${facts.rows} rows where the export's plan counted ${entry.rows}; the files were deleted, try the export again`);
  }
  entry.bytes = facts.bytes;
  entry.sha256 = facts.sha256;
}

// ---- SQL exports -------------------------------------------------------------------------

export async function runSql(ctx: RunContext, spec: SqlExportSpec): Promise<void> {
  const { job, wh, dir, config } = ctx;
  const run = job.run!;
  const cap = config.maxRows[job.plan];
  // The sandbox's settings (visibility filter, read budget, its time-out) under the export
  // session's; the time-out is the smaller of the two, never the export's own alone.
  const timeout = Math.min(config.statementTimeoutSeconds, Number(run.settings.max_execution_time ?? config.statementTimeoutSeconds));
  const settings = { ...run.settings, ...writeSettings({ maxThreads: config.maxThreads, timeoutSeconds: timeout }) };
  const splits = activeSplits(spec.splits);
  job.files = [];
  job.work = { ingestedAt: await dataWatermark(wh), maxBlockTime: null, visible: [], chunks: [], nextChunk: 0 };
  // One more row than the cap: a query over it is failed rather than cut silently.
  const sampled = `SELECT * FROM (\n${run.sql}\n) WHERE ${sampleCondition(spec.sampling)} LIMIT ${cap + 1}`;
  const select = spec.format === 'CSV' ? csvColumns(sampled, job.schema) : sampled;
  const format = FORMAT_FILES[spec.format].engine;
  const overCap = `the query returns more than ${cap} rows, the ${job.plan} plan's cap per export: add a WHERE or a LIMIT (at most ${cap})`;
  // A SQL export is one statement the engine cannot stop half-way, and its rows need not come
  // from a table (repeat('x', 100000) costs no read budget): so its rows and bytes are counted
  // first, by the engine formatting each row as the file will hold it, under the same
  // time-out and read budget as the write, and a query over the row cap or a quota fails
  // before anything is written. The write takes at most the rows counted; the files are
  // counted again once written (a query whose output changes between the runs is caught there).
  const [probe] = await statement(ctx, settings, () =>
    wh.query<{ rows: string | number; bytes: string | number }>(
      `SELECT count() AS rows, sum(${rowBytesExpression(spec.format)}) AS bytes FROM (\n${select}\n)`,
      { settings },
    ),
  );
  const rows = Number(probe?.rows ?? 0);
  if (rows > cap) throw new JobFailure(overCap);
  ctx.checkpoint();
  ctx.quotas.claim(job, Number(probe?.bytes ?? 0), "the query's rows");
  const limited = `SELECT * FROM (\n${select}\n) LIMIT ${rows}`;
  // An execution's rows carry their numbers: its results pages are ranges of them (execution-rows.ts).
  const rowColumn = rowColumnOf(job);
  const bounded = rowColumn === undefined ? limited : numberedRows(limited, rowColumn);
  try {
    await statement(ctx, settings, async () => {
      if (splits.length > 1 && wh.transport === 'embedded') {
        const pattern = path.join(dir, `{_partition_id}-00000.${FORMAT_FILES[spec.format].ext}`);
        await wh.exec(
          `INSERT INTO FUNCTION file(${literal(pattern)}, ${literal(format)}) PARTITION BY ${splitExpression(spec.splits, spec.seed)}\n${bounded}`,
          { settings },
        );
      } else {
        for (const s of splits) {
          const one = splits.length > 1 ? `SELECT * FROM (${bounded}) WHERE ${splitExpression(spec.splits, spec.seed)} = '${s}'` : bounded;
          await writeFile(wh, one, path.join(dir, fileName(s, 0, spec.format)), format, settings);
        }
      }
    });
  } finally {
    ctx.quotas.release(job);
  }
  ctx.checkpoint();
  await statement(ctx, settings, () =>
    writeEmptySplits(wh, spec, select, new Set(SPLIT_NAMES.filter((s) => existsSync(path.join(dir, fileName(s, 0, spec.format))))), dir, settings),
  );
  for (const s of SPLIT_NAMES) {
    const name = fileName(s, 0, spec.format);
    const file = path.join(dir, name);
    if (!existsSync(file)) continue;
    job.files.push({ name, split: s, ...(await ctx.files.facts(file, spec.format)) });
  }
  job.rowsWritten = job.files.reduce((a, f) => a + f.rows, 0);
  if (job.rowsWritten > cap) throw new JobFailure(overCap);
  // The CSV holds nested columns as JSON text (csvColumns): the schema says what the file holds.
  if (spec.format === 'CSV' && job.schema !== null) job.schema = csvFileColumns(job.schema);
  ctx.quotas.recheck(job);
}
