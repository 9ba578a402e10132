// SQL executions (issue 26): a long client query run in the background and read back page by
// page, as Dune, Allium and Flipside offer it. Not a third runner: an execution is a SQL
// export job (export-service.ts createSql: the sandbox's guard and cost check, the plan's
// caps, the export scheduler's fair sharing, the budget of the owner's plan) writing one
// Parquet file, marked `execution` in its record. This module reads that file back, pages of
// at most EXECUTION_PAGE_MAX_ROWS rows in the execution's format, through the budgeted
// warehouse of the request (the page's reads are on its ledger), and expires results
// EXECUTION_RESULT_TTL_HOURS after they were written.
//
//   QUEUED -> RUNNING -> COMPLETED | FAILED | CANCELLED;  COMPLETED -> EXPIRED (files deleted)
import { boundTo } from '../../../warehouse/budgeted-warehouse.ts';
import path from 'node:path';
import { AppError, Errors } from '../../../core/errors.ts';
import { EXECUTION_PAGE_MAX_ROWS, EXECUTION_RESULT_TTL_HOURS, EXECUTION_SWEEP_MS, EXECUTION_TOKEN_MAX_CHARS } from '../../../core/limits/sql.ts';
import type { Warehouse } from '../../../warehouse/warehouse.ts';
import { isUInt, listingFingerprint, type PageTokens } from '../../analytics/paging/page-token.ts';
import { literal } from './export-writer.ts';
import { quotedName, rowColumnOf } from './execution-rows.ts';
import type { ExportOwner, ExportService } from './export-service.ts';
import { failureMessage } from './export-views.ts';
import { checkSqlBody, SQL_EXECUTION } from '../sql/query-request.ts';
import type { JobRecord, JobStatus, JobStore } from './job-store.ts';

/** The formats of an execution's result pages. */
export const RESULT_FORMATS = ['json', 'csv'] as const;
export type ExecutionFormat = (typeof RESULT_FORMATS)[number];

/** What a client sees of an execution (GET /v1/query/executions/{id}). */
export interface ExecutionView {
  id: string;
  state: JobStatus;
  /** 0-100, never backwards; 100 once the results are written. */
  progress: number;
  format: ExecutionFormat;
  /** Rows of the result, known once COMPLETED. */
  totalRows: number | null;
  /** Columns of the result and their engine types. */
  columns: { name: string; type: string }[];
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** When the results are deleted (COMPLETED), or were (EXPIRED). */
  expiresAt: string | null;
  error: string | null;
  /** Where the first page is read, once COMPLETED. */
  resultsPath: string | null;
}

/** One page of results. JSON: `rows` parsed; CSV: `text` with a header row. */
export interface ExecutionPage {
  format: ExecutionFormat;
  rows?: Record<string, unknown>[];
  text?: string;
  count: number;
  totalRows: number;
  offset: number;
  nextCursor: string | null;
}

const CURSOR_TAG = 'execution';
const HOUR_MS = 3_600_000;
const ID_SHAPE = /^exp_[A-Za-z0-9_-]{16}$/;

const notFound = (): AppError => new AppError(Errors.notFound, 'no SQL execution with this id for this API key');
const bad = (field: string, message: string): AppError => new AppError(Errors.invalidParams, `${field} ${message}`, { field });

/**
 * The statement reading rows [offset, offset + size) of an execution's file: our statement over
 * our file, with the engine's own names and types for the columns, so a page equals the direct
 * read (Parquet alone would return DateTime as numbers). A file with row numbers is read by
 * their range, which the Parquet reader finds by the file's statistics without reading the
 * rows before it (execution-rows.ts); an older file by offset, reading every row before the page.
 */
function pageStatement(job: JobRecord, file: string, offset: number, size: number): string {
  const columns = job.schema ?? [];
  const rowColumn = rowColumnOf(job);
  const structure = [...columns, ...(rowColumn === undefined ? [] : [{ name: rowColumn, type: 'UInt64' }])]
    .map((c) => `${quotedName(c.name)} ${c.type}`)
    .join(', ');
  const source = `file(${literal(file)}, 'Parquet', ${literal(structure)})`;
  if (rowColumn === undefined) return `SELECT * FROM ${source} LIMIT ${size} OFFSET ${offset}`;
  const row = quotedName(rowColumn);
  return `SELECT ${columns.map((c) => quotedName(c.name)).join(', ')} FROM ${source} WHERE ${row} >= ${offset} AND ${row} < ${offset + size} ORDER BY ${row}`;
}

export class ExecutionService {
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly exports: ExportService,
    private readonly store: JobStore,
    /** Reads pages back (the serving session, bound to each asking request's budget): the file is on this process's disk. */
    private readonly reader: Warehouse,
    /** The listings' page-token codec (services.ts): page cursors are its tokens. */
    private readonly tokens: PageTokens,
    private readonly now: () => number = Date.now,
  ) {
    this.sweeper = setInterval(() => this.sweep(), EXECUTION_SWEEP_MS);
    this.sweeper.unref();
  }

  /** Start an execution of `{query, format}`: the same checks as a SQL export, answered at once. */
  async create(owner: ExportOwner, body: unknown): Promise<ExecutionView> {
    const { query, format } = checkSqlBody(SQL_EXECUTION, body);
    const job = await this.exports.createSql(owner, { query, format: 'PARQUET' }, { format: format as ExecutionFormat });
    return this.view(this.owned(owner, job.id));
  }

  get(owner: ExportOwner, id: unknown): ExecutionView {
    return this.view(this.owned(owner, id));
  }

  cancel(owner: ExportOwner, id: unknown): ExecutionView {
    const job = this.owned(owner, id);
    this.exports.cancel(owner, job.id);
    return this.view(job);
  }

  /** A page of a COMPLETED execution's results, from `cursor` (the first page without one). */
  async page(owner: ExportOwner, id: unknown, cursor: unknown, limit: unknown): Promise<ExecutionPage> {
    const job = this.owned(owner, id);
    if (this.reader.transport !== 'embedded') {
      // The engine is another machine: file() there would read its disk, not ours.
      throw new AppError(
        Errors.unavailable,
        `results pages are read by the embedded engine; with a ClickHouse server, download the results file: GET /v1/query/exports/${job.id}/files/train-00000.parquet`,
      );
    }
    const size = limit === undefined ? EXECUTION_PAGE_MAX_ROWS : Number(limit);
    if (typeof limit !== 'undefined' && (typeof limit !== 'string' || !/^[1-9]\d{0,4}$/.test(limit) || size > EXECUTION_PAGE_MAX_ROWS)) {
      throw bad('limit', `must be a whole number from 1 to ${EXECUTION_PAGE_MAX_ROWS}`);
    }
    const offset = cursor === undefined ? 0 : this.offsetOf(job, cursor);
    if (job.status === 'EXPIRED') throw new AppError(Errors.notFound, `the results of this execution expired at ${job.expiresAt}; run it again`);
    if (job.status !== 'COMPLETED') {
      const why =
        job.status === 'FAILED'
          ? `: ${job.error ?? 'it failed'}`
          : job.status === 'CANCELLED'
            ? ''
            : '; poll GET /v1/query/executions/{id} (about once a second) until it is COMPLETED';
      throw new AppError(Errors.conflict, `the execution is ${job.status}, it has no results${why}`);
    }
    const total = job.rowsWritten;
    const file = job.files[0];
    if (file === undefined || total === 0 || offset >= total) return this.emptyPage(job, total, offset);
    const format = job.execution!.format;
    const sql = pageStatement(job, path.join(this.store.dirOf(job.id), file.name), offset, size);
    const settings = { input_format_parquet_preserve_order: 1, max_threads: 1 };
    const nextOffset = offset + size;
    const nextCursor = nextOffset < total ? this.tokens.encode([CURSOR_TAG, nextOffset, listingFingerprint({ execution: job.id })]) : null;
    try {
      if (format === 'json') {
        const rows = await boundTo(this.reader, owner.budget).query<Record<string, unknown>>(sql, { settings });
        return { format, rows, count: rows.length, totalRows: total, offset, nextCursor };
      }
      const text = await boundTo(this.reader, owner.budget).queryText(sql, 'CSVWithNames', { settings });
      return { format, text, count: Math.min(size, total - offset), totalRows: total, offset, nextCursor };
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw new AppError(Errors.invalidQuery, `this page could not be read: ${failureMessage(err)}; ask for smaller pages (limit)`);
    }
  }

  /** Expire finished executions past their time: files deleted, state EXPIRED. */
  sweep(): void {
    for (const job of this.store.all()) if (job.execution !== undefined) this.expire(job);
  }

  close(): void {
    clearInterval(this.sweeper);
  }

  private emptyPage(job: JobRecord, total: number, offset: number): ExecutionPage {
    const format = job.execution!.format;
    const header = (job.schema ?? []).map((c) => `"${c.name.replace(/"/g, '""')}"`).join(',');
    return format === 'json'
      ? { format, rows: [], count: 0, totalRows: total, offset, nextCursor: null }
      : { format, text: header === '' ? '' : `${header}\n`, count: 0, totalRows: total, offset, nextCursor: null };
  }

  private offsetOf(job: JobRecord, cursor: unknown): number {
    if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > EXECUTION_TOKEN_MAX_CHARS) {
      throw bad('cursor', 'is not a cursor of this execution; pass the nextCursor of the previous page unchanged');
    }
    try {
      return this.tokens.decode(cursor, CURSOR_TAG, listingFingerprint({ execution: job.id }), (p) =>
        p.length === 1 && isUInt(p[0], Number.MAX_SAFE_INTEGER) ? p[0] : undefined,
      );
    } catch {
      throw bad('cursor', 'is not a cursor of this execution; pass the nextCursor of the previous page unchanged');
    }
  }

  /** The owner's execution; another key's, an export job's or an unknown id are all the same 404. */
  private owned(owner: ExportOwner, id: unknown): JobRecord {
    if (typeof id !== 'string' || !ID_SHAPE.test(id)) throw notFound();
    const job = this.store.get(id);
    if (job === undefined || job.owner !== owner.id || job.execution === undefined) throw notFound();
    this.expire(job);
    return job;
  }

  /** An execution's results live EXECUTION_RESULT_TTL_HOURS from when they were written. */
  private expire(job: JobRecord): void {
    if (job.status !== 'COMPLETED' || job.finishedAt === null) return;
    const until = new Date(Date.parse(job.finishedAt) + EXECUTION_RESULT_TTL_HOURS * HOUR_MS).toISOString();
    if (job.expiresAt !== until) {
      // The export job's own retention set it; an execution's is its own figure.
      job.expiresAt = until;
      this.store.save(job);
    }
    if (Date.parse(until) > this.now()) return;
    this.store.deleteFiles(job.id);
    job.status = 'EXPIRED';
    job.files = [];
    this.store.save(job);
  }

  private view(job: JobRecord): ExecutionView {
    return {
      id: job.id,
      state: job.status,
      progress: job.progress,
      format: job.execution!.format,
      totalRows: job.status === 'COMPLETED' || job.status === 'EXPIRED' ? job.rowsWritten : null,
      columns: job.schema ?? [],
      createdAt: job.createdAt,
      startedAt: job.startedAt,
      finishedAt: job.finishedAt,
      expiresAt: job.expiresAt,
      error: job.error,
      resultsPath: job.status === 'COMPLETED' ? `/v1/query/executions/${job.id}/results` : null,
    };
  }
}
