// Dataset export jobs, for every interface: GraphQL's exportDataset / exportJob /
// exportJobs / cancelExportJob and the SQL export routes are thin adapters over
// create / createSql / get / list / cancel. Jobs run in the background on engine sessions
// of their own (never the serving session, never the SQL sandbox's), in chunks of about
// EXPORT_FILE_MAX_ROWS rows by time range: between chunks a job reports progress, notices
// cancellation and checks the disk budget, and after a restart it resumes at the first
// chunk not written. A running engine statement cannot really be cancelled, so a cancel
// takes effect when the chunk in progress ends (its result is then deleted).
//
//   QUEUED -> RUNNING -> COMPLETED | FAILED | CANCELLED;  COMPLETED -> EXPIRED after retention
//   QUEUED -> CANCELLED;  RUNNING at a restart -> QUEUED (resumed), FAILED after MAX_ATTEMPTS
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { ExportConfig } from '../../core/config.ts';
import { AppError, Errors, param, type ExportParamKey } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { Plan } from '../../core/plans.ts';
import type { KeyStatus } from '../../warehouse/api-key-store.ts';
import { WarehouseError, type Warehouse } from '../../warehouse/warehouse.ts';
import { SIGNED_LINK_PREFIX } from '../access/protected-paths.ts';
import type { SqlSandbox } from '../sql/sql-sandbox.ts';
import { engineMessage } from '../sql/sql-guard.ts';
import { datasetCard, DATASET_CARD, MANIFEST, manifestOf } from './dataset-card.ts';
import type { DownloadLinks } from './download-links.ts';
import { activeSplits, filterExportSpec, FORMAT_FILES, SPLIT_NAMES, sqlExportSpec, type ExportFormat, type ExportSpec, type FilterExportSpec, type SqlExportSpec } from './export-config.ts';
import { fileFacts } from './file-facts.ts';
import type { ExportFileView, ExportJobView } from './export-schemas.ts';
import { dataWatermark, fileName, literal, planFilterExport, rowBytesExpression, sampleCondition, splitExpression, writeFile, writeFilterChunk, writeSettings } from './export-writer.ts';
import { isFinished, type ExportFile, type JobRecord, type JobStatus, type JobStore } from './job-store.ts';

/** A job interrupted by this many restarts is failed instead of being started again. */
export const MAX_ATTEMPTS = 3;
/** Jobs per page of list() by default and at most. */
export const LIST_DEFAULT = 20;
export const LIST_MAX = 100;

/** Whose job it is: the API key (its id) and its plan. */
export interface ExportOwner {
  id: string;
  plan: Plan;
}

export type { ExportFileView, ExportJobView } from './export-schemas.ts';

export interface ExportPage {
  jobs: ExportJobView[];
  /** Each job's cursor, in the same order (GraphQL's edges). */
  cursors: string[];
  hasNextPage: boolean;
  endCursor: string | null;
}

/** A file ready to be sent. */
export interface ExportFileHandle {
  file: string;
  name: string;
  bytes: number;
  sha256: string;
  contentType: string;
}

export interface ExportServiceDeps {
  config: ExportConfig;
  store: JobStore;
  /** Engine sessions exports run on, one per worker. */
  sessions: readonly Warehouse[];
  sandbox: SqlSandbox;
  /** Protocols a client may see (inactive ones hidden). */
  visibleProtocols: () => Promise<string[]>;
  /** A key's status, read from the store (revoked keys' links stop working); a key of a disabled account reads as inactive. */
  keyStatus: (keyId: string) => Promise<KeyStatus | undefined>;
  links: DownloadLinks;
  logger: Logger;
  now?: () => number;
}

const bad = (key: ExportParamKey, message: string): AppError => new AppError(Errors.invalidParams, `${param(key)} ${message}`, { field: key });
const jobNotFound = (): AppError => new AppError(Errors.notFound, `${param('job')}: no export job with this id for this API key`);
const fileNotFound = (): AppError => new AppError(Errors.notFound, 'no such file in this export job (it may have expired)');

/** Thrown between chunks when the job was cancelled meanwhile. */
class Cancelled extends Error {}
/** Thrown between chunks when the service is closing: the job stays RUNNING on disk and resumes at the next start. */
class Stopping extends Error {}
/** A failure whose message is meant for the job's owner. */
class JobFailure extends Error {}

export class ExportService {
  private readonly now: () => number;
  private readonly free: Warehouse[];
  private readonly running = new Set<Promise<void>>();
  private sweeper: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly deps: ExportServiceDeps) {
    this.now = deps.now ?? Date.now;
    this.free = [...deps.sessions];
  }

  /** Recover what a previous process left (RUNNING jobs resumed or failed), expire old files, start queued jobs. */
  start(): void {
    for (const job of this.deps.store.all()) {
      if (job.status !== 'RUNNING') continue;
      if (job.attempts >= MAX_ATTEMPTS) {
        this.finish(job, 'FAILED', `the service stopped ${job.attempts} times while this job ran; it was not started again`);
      } else {
        this.deps.logger.warn({ job: job.id, chunk: job.work?.nextChunk ?? 0 }, 'export job interrupted by a restart: resuming');
        job.status = 'QUEUED';
        this.deps.store.save(job);
      }
    }
    this.sweep();
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
    this.pump();
  }

  // ---- The interface ---------------------------------------------------------------------

  /** Start an export of `transactions` by filters (GraphQL exportDataset). */
  async create(owner: ExportOwner, config: unknown): Promise<ExportJobView> {
    const spec = filterExportSpec(config, await this.deps.visibleProtocols());
    return this.view(this.enqueue(owner, spec, null, null));
  }

  /** Start an export of a sandboxed SQL SELECT: `{query, format, sampling, splits, seed}`. */
  async createSql(owner: ExportOwner, body: unknown): Promise<ExportJobView> {
    const spec = sqlExportSpec(body);
    this.checkCaps(owner);
    const cap = this.deps.config.maxRows[owner.plan];
    const prepared = await this.deps.sandbox.prepareExport({ key: owner.id, plan: owner.plan }, spec.query, cap);
    // Splitting and sampling hash the signature: the query must return it.
    const needsSignature = spec.sampling !== null || activeSplits(spec.splits).length > 1;
    const sig = prepared.columns.find((c) => c.name === 'signature');
    if (needsSignature && (sig === undefined || !/String/.test(sig.type))) {
      throw bad(spec.sampling !== null ? 'sampling' : 'splits', 'needs a column named signature (a String) in the query\'s result: splits and samples are drawn by transaction');
    }
    return this.view(this.enqueue(owner, spec, { sql: prepared.sql, settings: prepared.settings }, prepared.columns));
  }

  get(owner: ExportOwner, id: string): ExportJobView {
    return this.view(this.owned(owner, id));
  }

  /** The owner's jobs, newest first; `after` is the endCursor of the previous page. */
  list(owner: ExportOwner, page: { first?: number; after?: string | null } = {}): ExportPage {
    const first = page.first ?? LIST_DEFAULT;
    if (!Number.isSafeInteger(first) || first < 1 || first > LIST_MAX) throw new AppError(Errors.invalidParams, `first must be a whole number from 1 to ${LIST_MAX}`, { field: 'first' });
    const jobs = this.deps.store.all().filter((j) => j.owner === owner.id).sort(newestFirst);
    let start = 0;
    if (page.after != null) {
      const at = Buffer.from(page.after, 'base64url').toString('utf8');
      const i = jobs.findIndex((j) => `${j.seq}|${j.id}` === at);
      if (i < 0) throw new AppError(Errors.invalidParams, `${param('cursor')} is not a cursor of this listing`, { field: 'cursor' });
      start = i + 1;
    }
    const slice = jobs.slice(start, start + first);
    const cursors = slice.map((j) => Buffer.from(`${j.seq}|${j.id}`).toString('base64url'));
    return {
      jobs: slice.map((j) => this.view(j)),
      cursors,
      hasNextPage: start + first < jobs.length,
      endCursor: cursors.at(-1) ?? null,
    };
  }

  /** Cancel a job not yet finished; a finished job is answered as it is. */
  cancel(owner: ExportOwner, id: string): ExportJobView {
    const job = this.owned(owner, id);
    if (!isFinished(job.status)) {
      // A RUNNING job's worker sees this when its chunk in progress ends, and deletes what it wrote.
      this.finish(job, 'CANCELLED', null);
    }
    return this.view(job);
  }

  /** A file of the owner's COMPLETED job: a data file, manifest.json or README.md. */
  openFile(owner: ExportOwner, id: string, name: string): ExportFileHandle {
    return this.fileOf(this.owned(owner, id), name);
  }

  /** The file a signed link names; 403 for a forged, expired or revoked link, 404 when gone. */
  async openLink(job: string, file: string, query: Record<string, unknown>): Promise<ExportFileHandle & { key: { id: string; plan: Plan } }> {
    const claims = this.deps.links.read(job, file, query);
    if (claims === undefined) throw new AppError(Errors.forbidden, 'this download link is not valid');
    if (claims.expires * 1000 < this.now()) throw new AppError(Errors.forbidden, 'this download link has expired: read the job again for a fresh one');
    const status = await this.deps.keyStatus(claims.key);
    if (status !== 'active') throw new AppError(Errors.forbidden, 'the API key this link was issued to is no longer active');
    const record = this.deps.store.get(claims.job);
    if (record === undefined || record.owner !== claims.key) throw fileNotFound();
    return { ...this.fileOf(record, claims.file), key: { id: record.owner, plan: record.plan } };
  }

  /** Running jobs, for metrics and tests. */
  stats(): { running: number; queued: number } {
    const all = this.deps.store.all();
    return { running: all.filter((j) => j.status === 'RUNNING').length, queued: all.filter((j) => j.status === 'QUEUED').length };
  }

  /**
   * Expire COMPLETED jobs past retention (their files deleted), and forget jobs that have
   * had no files for another retention period (so the journal stays small); runs every minute.
   */
  sweep(): void {
    const now = this.now();
    const retentionMs = this.deps.config.retentionHours * 3_600_000;
    for (const job of this.deps.store.all()) {
      const ended = job.status === 'EXPIRED' ? job.expiresAt : job.status === 'FAILED' || job.status === 'CANCELLED' ? job.finishedAt : null;
      if (ended !== null && Date.parse(ended) + retentionMs <= now) {
        this.deps.store.remove(job.id);
        continue;
      }
      if (job.status === 'COMPLETED' && job.expiresAt !== null && Date.parse(job.expiresAt) <= now) {
        this.deps.store.deleteFiles(job.id);
        job.status = 'EXPIRED';
        job.files = [];
        this.deps.store.save(job);
      }
    }
  }

  /** Stop taking jobs and wait for the chunks in progress; RUNNING jobs resume at the next start. */
  async close(): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweeper);
    await Promise.allSettled([...this.running]);
  }

  // ---- Jobs ------------------------------------------------------------------------------

  /** Throw the 429 AppError (with Retry-After) when `adding` more jobs would pass `owner`'s
   *  plan's cap of queued and running jobs (a GraphQL request may create several at once). */
  checkCaps(owner: ExportOwner, adding = 1): void {
    const cap = this.deps.config.maxJobs[owner.plan];
    const active = this.deps.store.all().filter((j) => j.owner === owner.id && (j.status === 'QUEUED' || j.status === 'RUNNING')).length;
    if (active + adding > cap) {
      const asked = adding > 1 ? ` (this request would start ${adding}, ${active} are queued or running)` : '';
      throw new AppError(Errors.rateLimited,
        `Too many export jobs: plan ${owner.plan} allows ${cap} queued or running at once per API key${asked}; retry when one has finished (or cancel one)`,
        { retryAfterSeconds: 30 });
    }
  }

  private enqueue(owner: ExportOwner, spec: ExportSpec, run: JobRecord['run'], schema: JobRecord['schema']): JobRecord {
    this.checkCaps(owner);
    const job: JobRecord = {
      id: `exp_${randomBytes(12).toString('base64url')}`,
      seq: this.deps.store.nextSeq(),
      owner: owner.id,
      plan: owner.plan,
      spec,
      status: 'QUEUED',
      progress: 0,
      rowsWritten: 0,
      rowsTotal: null,
      createdAt: new Date(this.now()).toISOString(),
      startedAt: null,
      finishedAt: null,
      expiresAt: null,
      error: null,
      attempts: 0,
      work: null,
      files: [],
      schema,
      run,
    };
    this.deps.store.save(job);
    this.pump();
    return job;
  }

  private owned(owner: ExportOwner, id: string): JobRecord {
    const job = typeof id === 'string' ? this.deps.store.get(id) : undefined;
    // Another key's job is answered exactly like one that does not exist.
    if (job === undefined || job.owner !== owner.id) throw jobNotFound();
    return job;
  }

  /** Start queued jobs, oldest first, while a session is free. */
  private pump(): void {
    while (!this.stopped && this.free.length > 0) {
      const next = this.deps.store.all().filter((j) => j.status === 'QUEUED').sort((a, b) => -newestFirst(a, b))[0];
      if (next === undefined) return;
      const wh = this.free.pop()!;
      next.status = 'RUNNING';
      this.deps.store.save(next);
      const run = this.run(next, wh).finally(() => {
        this.running.delete(run);
        this.free.push(wh);
        this.pump();
      });
      this.running.add(run);
    }
  }

  private async run(job: JobRecord, wh: Warehouse): Promise<void> {
    job.attempts += 1;
    job.startedAt ??= new Date(this.now()).toISOString();
    this.deps.store.save(job);
    const dir = this.deps.store.dirOf(job.id);
    mkdirSync(dir, { recursive: true });
    try {
      if (job.attempts > MAX_ATTEMPTS) throw new JobFailure(`the service stopped ${job.attempts - 1} times while this job ran; it was not started again`);
      if (job.spec.kind === 'filters') await this.runFilters(job, job.spec, wh, dir);
      else await this.runSql(job, job.spec, wh, dir);
      this.checkpoint(job);
      writeFileSync(path.join(dir, MANIFEST), `${JSON.stringify(manifestOf({ ...job, finishedAt: new Date(this.now()).toISOString() }), null, 2)}\n`);
      writeFileSync(path.join(dir, DATASET_CARD), datasetCard(job));
      job.rowsTotal = job.rowsWritten;
      job.progress = 100;
      this.finish(job, 'COMPLETED', null);
    } catch (err) {
      if (job.status === 'CANCELLED' || err instanceof Cancelled) {
        if (job.status !== 'CANCELLED') this.finish(job, 'CANCELLED', null);
        this.deps.store.deleteFiles(job.id);
      } else if (err instanceof Stopping) {
        // Shutting down: left RUNNING on disk, so the next start resumes it.
      } else {
        this.deps.logger.warn({ job: job.id, err }, 'export job failed');
        this.finish(job, 'FAILED', failureMessage(err));
      }
    }
  }

  private async runFilters(job: JobRecord, spec: FilterExportSpec, wh: Warehouse, dir: string): Promise<void> {
    const settings = writeSettings({ maxThreads: this.deps.config.maxThreads, timeoutSeconds: this.deps.config.statementTimeoutSeconds });
    if (job.work === null) {
      const visible = await this.deps.visibleProtocols();
      const plan = await planFilterExport(wh, spec, visible, this.deps.config.fileMaxRows, settings);
      this.checkpoint(job);
      const cap = this.deps.config.maxRows[job.plan];
      if (plan.rowsTotal > cap) {
        throw new JobFailure(`the export would write ${plan.rowsTotal} rows; the ${job.plan} plan allows ${cap} rows per export: narrow filters.dateRange, name fewer filters.protocols, or sample (sampling.rate)`);
      }
      job.work = plan.work;
      job.rowsTotal = plan.rowsTotal;
      job.schema = plan.schema;
      this.deps.store.save(job);
    }
    const work = job.work;
    // Files of chunks before nextChunk are done; a chunk interrupted mid-write is rewritten whole.
    job.files = job.files.filter((f) => Number(f.name.slice(f.name.indexOf('-') + 1, f.name.indexOf('.'))) < work.nextChunk);
    // Each file's hash and row count are taken on the worker while the engine writes the
    // next chunk (file-facts.ts: why); the job completes once every file is checked.
    let failure: unknown = null;
    const checks: Promise<void>[] = [];
    const check = (entry: ExportFile): void => {
      checks.push(this.checkFile(entry, path.join(dir, entry.name), spec.format).catch((err: unknown) => { failure ??= err; }));
    };
    for (const f of job.files) if (f.sha256 === '') check(f);
    for (let i = work.nextChunk; i < work.chunks.length; i++) {
      this.checkpoint(job);
      if (failure !== null) throw failure;
      // Refuse a chunk that would pass the budget at this job's bytes per row so far, rather
      // than notice once it is on disk.
      const soFar = job.files.reduce((a, f) => ({ rows: a.rows + f.rows, bytes: a.bytes + f.bytes }), { rows: 0, bytes: 0 });
      const chunkRows = SPLIT_NAMES.reduce((a, s) => a + work.chunks[i]!.rows[s], 0);
      this.checkDisk(soFar.rows === 0 ? 0 : Math.ceil((soFar.bytes / soFar.rows) * chunkRows));
      const written = await writeFilterChunk(wh, spec, work.visible, work, i, dir, settings);
      this.checkpoint(job);
      for (const f of written) {
        const entry: ExportFile = { ...f, bytes: (await stat(path.join(dir, f.name))).size, sha256: '' };
        job.files.push(entry);
        check(entry);
      }
      job.rowsWritten += written.reduce((a, f) => a + f.rows, 0);
      work.nextChunk = i + 1;
      this.advance(job);
      this.checkDisk();
    }
    await Promise.all(checks);
    if (failure !== null) throw failure;
  }

  /** Hash and count one written file; its rows must be the rows the plan counted for it. */
  private async checkFile(entry: ExportFile, file: string, format: ExportFormat): Promise<void> {
    const facts = await fileFacts(file, format);
    if (facts.rows !== entry.rows) {
      throw new JobFailure(`${entry.name} holds ${facts.rows} rows where the export's plan counted ${entry.rows}; the files were deleted, try the export again`);
    }
    entry.bytes = facts.bytes;
    entry.sha256 = facts.sha256;
  }

  private async runSql(job: JobRecord, spec: SqlExportSpec, wh: Warehouse, dir: string): Promise<void> {
    const run = job.run!;
    const cap = this.deps.config.maxRows[job.plan];
    const settings = { ...run.settings, ...writeSettings({ maxThreads: this.deps.config.maxThreads, timeoutSeconds: this.deps.config.statementTimeoutSeconds }) };
    const splits = activeSplits(spec.splits);
    job.files = [];
    job.work = { ingestedAt: await dataWatermark(wh), maxBlockTime: null, visible: [], chunks: [], nextChunk: 0 };
    // One more row than the cap: a query over it is failed rather than cut silently.
    const select = `SELECT * FROM (\n${run.sql}\n) WHERE ${sampleCondition(spec.sampling)} LIMIT ${cap + 1}`;
    const format = FORMAT_FILES[spec.format].engine;
    const overCap = `the query returns more than ${cap} rows, the ${job.plan} plan's cap per export: add a WHERE or a LIMIT (at most ${cap})`;
    // A SQL export is one statement the engine cannot stop half-way, and its rows need not come
    // from a table (repeat('x', 100000) costs no read budget): so its rows and bytes are counted
    // first, by the engine formatting each row as the file will hold it, and a query over the
    // row cap or the disk budget fails before anything is written. The files are counted
    // again once written (a query whose output changes between the two runs is caught there).
    const [probe] = await wh.query<{ rows: string | number; bytes: string | number }>(
      `SELECT count() AS rows, sum(${rowBytesExpression(spec.format)}) AS bytes FROM (\n${select}\n)`, { settings });
    if (Number(probe?.rows ?? 0) > cap) throw new JobFailure(overCap);
    this.checkDisk(Number(probe?.bytes ?? 0), 'the query\'s rows');
    this.checkpoint(job);
    if (splits.length > 1 && wh.transport === 'embedded') {
      const pattern = path.join(dir, `{_partition_id}-00000.${FORMAT_FILES[spec.format].ext}`);
      await wh.exec(`INSERT INTO FUNCTION file(${literal(pattern)}, ${literal(format)}) PARTITION BY ${splitExpression(spec.splits, spec.seed)}\n${select}`, { settings });
    } else {
      for (const s of splits) {
        const one = splits.length > 1 ? `SELECT * FROM (${select}) WHERE ${splitExpression(spec.splits, spec.seed)} = '${s}'` : select;
        await writeFile(wh, one, path.join(dir, fileName(s, 0, spec.format)), format, settings);
      }
    }
    this.checkpoint(job);
    for (const s of SPLIT_NAMES) {
      const name = fileName(s, 0, spec.format);
      const file = path.join(dir, name);
      if (!existsSync(file)) continue;
      job.files.push({ name, split: s, ...(await fileFacts(file, spec.format)) });
    }
    job.rowsWritten = job.files.reduce((a, f) => a + f.rows, 0);
    if (job.rowsWritten > cap) {
      throw new JobFailure(overCap);
    }
    this.checkDisk();
  }

  /** Stop here when the job was cancelled meanwhile, or the service is stopping. */
  private checkpoint(job: JobRecord): void {
    if (job.status === 'CANCELLED') throw new Cancelled();
    if (this.stopped) throw new Stopping();
  }

  /** Progress from rows written; never backwards, and 100 only once the job is complete. */
  private advance(job: JobRecord): void {
    const total = job.rowsTotal ?? 0;
    const p = total === 0 ? 99 : Math.min(99, Math.floor((100 * job.rowsWritten) / total));
    job.progress = Math.max(job.progress, p);
    this.deps.store.save(job);
  }

  /** Fail the job when export files together pass the disk budget. */
  private checkDisk(coming = 0, what = 'the next chunk'): void {
    const used = coming + this.deps.store.all().filter((j) => j.status !== 'EXPIRED').reduce((a, j) => a + j.files.reduce((b, f) => b + f.bytes, 0), 0);
    const budget = this.deps.config.diskBudgetBytes;
    if (used > budget) {
      const held = coming === 0 ? `export files hold ${used} bytes` : `${what} (about ${coming} bytes) would take export files to ${used} bytes`;
      throw new JobFailure(`the export disk budget is used up: ${held} of the ${budget} allowed (EXPORT_DISK_BUDGET_BYTES); `
        + 'this job\'s files were deleted. Export less (a narrower dateRange, sampling) or try again when older exports have expired');
    }
  }

  private finish(job: JobRecord, status: JobStatus, error: string | null): void {
    job.status = status;
    job.error = error;
    job.finishedAt = new Date(this.now()).toISOString();
    if (status === 'COMPLETED') job.expiresAt = new Date(this.now() + this.deps.config.retentionHours * 3_600_000).toISOString();
    if (status === 'FAILED' || status === 'CANCELLED') {
      this.deps.store.deleteFiles(job.id);
      job.files = [];
    }
    this.deps.store.save(job);
  }

  // ---- Views and files -------------------------------------------------------------------

  private view(job: JobRecord): ExportJobView {
    const completed = job.status === 'COMPLETED';
    const expires = completed ? Math.min(Math.floor(this.now() / 1000) + this.deps.config.linkTtlSeconds, Math.floor(Date.parse(job.expiresAt!) / 1000)) : 0;
    const link = (name: string) => ({
      url: this.deps.links.mint(SIGNED_LINK_PREFIX, { job: job.id, file: name, key: job.owner, expires }),
      path: `/v1/query/exports/${job.id}/files/${encodeURIComponent(name)}`,
    });
    return {
      id: job.id,
      status: job.status,
      progress: job.progress,
      kind: job.spec.kind,
      format: job.spec.format,
      rowsWritten: job.rowsWritten,
      rowsTotal: job.rowsTotal,
      createdAt: job.createdAt,
      startedAt: job.startedAt,
      finishedAt: job.finishedAt,
      expiresAt: job.expiresAt,
      error: job.error,
      seeds: { split: job.spec.seed, sampling: job.spec.sampling?.seed ?? null },
      files: completed ? job.files.map((f) => ({ ...f, ...link(f.name) })) : [],
      manifest: completed ? link(MANIFEST) : null,
      card: completed ? link(DATASET_CARD) : null,
      linkExpiresAt: completed ? new Date(expires * 1000).toISOString() : null,
    };
  }

  private fileOf(job: JobRecord, name: string): ExportFileHandle {
    if (job.status !== 'COMPLETED') throw fileNotFound();
    const file = path.join(this.deps.store.dirOf(job.id), name);
    const data = job.files.find((f) => f.name === name);
    if (data !== undefined) return { file, name, bytes: data.bytes, sha256: data.sha256, contentType: FORMAT_FILES[job.spec.format].contentType };
    if (name === MANIFEST || name === DATASET_CARD) {
      // Small, written once: digested at each read rather than recorded.
      return { file, name, bytes: -1, sha256: '', contentType: name === MANIFEST ? 'application/json; charset=utf-8' : 'text/markdown; charset=utf-8' };
    }
    throw fileNotFound();
  }
}

const newestFirst = (a: JobRecord, b: JobRecord): number => b.seq - a.seq;

/** What the owner reads on a FAILED job: our own reasons as they are, engine failures briefly. */
function failureMessage(err: unknown): string {
  if (err instanceof JobFailure || err instanceof AppError) return err.message;
  const m = err instanceof WarehouseError ? engineMessage(err) : err instanceof Error ? err.message : String(err);
  if (/ENOSPC|No space left|NOT_ENOUGH_SPACE/i.test(m)) return 'the disk holding export files is full; try again later';
  return `the engine failed while writing the export: ${m.slice(0, 500)}`;
}
