// Dataset export jobs, for every interface: GraphQL's exportDataset / exportJob /
// exportJobs / cancelExportJob and the SQL export routes are thin adapters over
// create / createSql / get / list / cancel. Jobs run in the background on engine sessions
// of their own (never the serving session, never the SQL sandbox's), in chunks of about
// EXPORT_FILE_MAX_ROWS rows by time range: between chunks a job reports progress, notices
// cancellation, checks the disk quotas and may give its worker to another job, and after a restart it resumes at the first
// chunk not written. A running engine statement cannot really be cancelled, so a cancel
// takes effect when the chunk in progress ends (its result is then deleted). The engine
// work is export-runner.ts (budgets per statement), the disk quotas export-quotas.ts, and
// who gets a worker export-scheduler.ts (a job may yield its worker at a chunk boundary).
//
//   QUEUED -> RUNNING -> COMPLETED | FAILED | CANCELLED;  COMPLETED -> EXPIRED after retention
//   QUEUED -> CANCELLED;  RUNNING at a restart -> QUEUED (resumed), FAILED after EXPORT_MAX_ATTEMPTS
//   RUNNING -> QUEUED when it yields its worker (resumed at its next chunk)
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ExportConfig } from '../../../core/config/load-config.ts';
import { AppError, Errors, param, type ExportParamKey } from '../../../core/errors.ts';
import type { Logger } from '../../../core/logger.ts';
import type { Plan } from '../../../core/plans.ts';
import type { KeyStatus } from '../../../warehouse/api-key-store.ts';
import type { Warehouse } from '../../../warehouse/warehouse.ts';
import type { PageTokens } from '../../analytics/paging/page-token.ts';
import type { SqlSandbox } from '../sql/sql-sandbox.ts';
import { datasetCard, DATASET_CARD, MANIFEST, manifestOf } from './dataset-card.ts';
import type { DownloadLinks } from './download-links.ts';
import { activeSplits, type ExportSpec } from './export-config.ts';
import { filterExportSpec, sqlExportSpec } from './export-request.ts';
import { ExportQuotas } from './export-quotas.ts';
import { FileFactsWorker } from './file-facts.ts';
import { runFilters, runSql, type RunContext } from './export-runner.ts';
import { Budget } from '../../../core/budget.ts';
import { boundTo } from '../../../warehouse/budgeted-warehouse.ts';
import { nextJob, shouldYield } from './export-scheduler.ts';
import { rowColumnFor } from './execution-rows.ts';
import { KeyTurns } from '../sql/key-turns.ts';
import type { ExportJobView } from './export-schemas.ts';
import { failureMessage, fileNotFound, fileOf, jobView, type ExportFileHandle } from './export-views.ts';
import { Cancelled, JobFailure, Stopping, Yielded } from './job-errors.ts';
import { pageJobs, type JobPage, type JobPageAsk } from './job-listing.ts';
import { isFinished, type JobRecord, type JobStatus, type JobStore } from './job-store.ts';
import { EXPORT_CAP_RETRY_AFTER_SECONDS, EXPORT_ID_BYTES, EXPORT_MAX_ATTEMPTS, EXPORT_SWEEP_MS, PROGRESS_MAX_PERCENT } from '../../../core/limits/exports.ts';

/** Whose job it is: the API key (its id) and its plan. */
export interface ExportOwner {
  id: string;
  plan: Plan;
  /** The asking request's budget: checking and costing a SQL export's query runs under it. */
  budget?: Budget | null;
}

export type { ExportFileView, ExportJobView } from './export-schemas.ts';

/** A page of jobs with where it lies in the listing (job-listing.ts). */
export type ExportPage = JobPage<ExportJobView>;

export type { ExportFileHandle } from './export-views.ts';

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
  /** The listings' page-token codec (services.ts): job lists' cursors are its tokens. */
  tokens: PageTokens;
  logger: Logger;
  now?: () => number;
  /** Free bytes of the disk holding `dir` (statfs; tests stand in a small disk). */
  freeDisk?: (dir: string) => number;
}

const bad = (key: ExportParamKey, message: string): AppError => new AppError(Errors.invalidParams, `${param(key)} ${message}`, { field: key });
const jobNotFound = (): AppError => new AppError(Errors.notFound, `${param('job')}: no export job with this id for this API key`);

/** Jobs waiting for a worker, and jobs holding one. */
const byState = (all: readonly JobRecord[]): { queued: JobRecord[]; running: JobRecord[] } => ({
  queued: all.filter((j) => j.status === 'QUEUED'),
  running: all.filter((j) => j.status === 'RUNNING'),
});
const isActive = (j: JobRecord): boolean => j.status === 'QUEUED' || j.status === 'RUNNING';

export class ExportService {
  private readonly now: () => number;
  private readonly free: Warehouse[];
  private readonly running = new Set<Promise<void>>();
  /** Round-robin across the keys of a plan: when each key last got a worker (export-scheduler.ts). */
  private readonly turns = new KeyTurns();
  private readonly quotas: ExportQuotas;
  private readonly files = new FileFactsWorker();
  private sweeper: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly deps: ExportServiceDeps) {
    this.now = deps.now ?? Date.now;
    this.free = [...deps.sessions];
    this.quotas = new ExportQuotas(deps.config, deps.store, deps.freeDisk);
  }

  /** Recover what a previous process left (RUNNING jobs resumed or failed), expire old files, start queued jobs. */
  start(): void {
    for (const job of this.deps.store.all()) {
      if (job.status !== 'RUNNING') continue;
      if (job.attempts >= EXPORT_MAX_ATTEMPTS) {
        this.finish(job, 'FAILED', `the service stopped ${job.attempts} times while this job ran; it was not started again`);
      } else {
        this.deps.logger.warn({ job: job.id, chunk: job.work?.nextChunk ?? 0 }, 'export job interrupted by a restart: resuming');
        job.status = 'QUEUED';
        this.deps.store.save(job);
      }
    }
    this.sweep();
    this.sweeper = setInterval(() => this.sweep(), EXPORT_SWEEP_MS);
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
  async createSql(owner: ExportOwner, body: unknown, execution?: JobRecord['execution']): Promise<ExportJobView> {
    const spec = sqlExportSpec(body);
    this.checkCaps(owner);
    const cap = this.deps.config.maxRows[owner.plan];
    const prepared = await this.deps.sandbox.prepareExport({ key: owner.id, plan: owner.plan, budget: owner.budget ?? undefined }, spec.query, cap);
    // Splitting and sampling hash the signature: the query must return it.
    const needsSignature = spec.sampling !== null || activeSplits(spec.splits).length > 1;
    const sig = prepared.columns.find((c) => c.name === 'signature');
    if (needsSignature && (sig === undefined || !/String/.test(sig.type))) {
      throw bad(
        spec.sampling !== null ? 'sampling' : 'splits',
        "needs a column named signature (a String) in the query's result: splits and samples are drawn by transaction",
      );
    }
    // An execution's file numbers its rows, so that each results page reads only its own.
    const numbered = execution === undefined ? undefined : { ...execution, rowColumn: rowColumnFor(prepared.columns) };
    return this.view(this.enqueue(owner, spec, { sql: prepared.sql, settings: prepared.settings }, prepared.columns, numbered));
  }

  get(owner: ExportOwner, id: string): ExportJobView {
    return this.view(this.owned(owner, id));
  }

  /** The owner's jobs, newest first, a page forward (first/after) or backward (last/before): job-listing.ts. */
  list(owner: ExportOwner, page: JobPageAsk = {}): ExportPage {
    // SQL executions are listed by nobody: their results are read by id (executions.ts).
    const jobs = this.deps.store.all().filter((j) => j.owner === owner.id && j.execution === undefined);
    return pageJobs(this.deps.tokens, owner.id, jobs, page, (j) => this.view(j));
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
    const { queued, running } = byState(this.deps.store.all());
    return { running: running.length, queued: queued.length };
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
    const active = this.deps.store.all().filter((j) => j.owner === owner.id && isActive(j)).length;
    if (active + adding > cap) {
      const asked = adding > 1 ? ` (this request would start ${adding}, ${active} are queued or running)` : '';
      throw new AppError(
        Errors.rateLimited,
        `Too many export jobs: plan ${owner.plan} allows ${cap} queued or running at once per API key${asked}; retry when one has finished (or cancel one)`,
        { retryAfterSeconds: EXPORT_CAP_RETRY_AFTER_SECONDS },
      );
    }
  }

  private enqueue(owner: ExportOwner, spec: ExportSpec, run: JobRecord['run'], schema: JobRecord['schema'], execution?: JobRecord['execution']): JobRecord {
    this.checkCaps(owner);
    this.quotas.checkRoom(owner, this.now());
    const job: JobRecord = {
      id: `exp_${randomBytes(EXPORT_ID_BYTES).toString('base64url')}`,
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
      ...(execution === undefined ? {} : { execution }),
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

  /** Start queued jobs while a session is free, in the scheduler's order (export-scheduler.ts). */
  private pump(): void {
    while (!this.stopped && this.free.length > 0) {
      const { queued, running } = byState(this.deps.store.all());
      const next = nextJob(queued, running, this.deps.sessions.length, this.turns);
      if (next === undefined) return;
      const wh = this.free.pop()!;
      next.status = 'RUNNING';
      this.turns.took(next.owner);
      this.deps.store.save(next);
      const run = this.run(next, wh).finally(() => {
        this.running.delete(run);
        this.free.push(wh);
        this.pump();
        this.turns.forgetIdle(
          this.deps.store
            .all()
            .filter(isActive)
            .map((j) => j.owner),
        );
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
    // Under the budget of the job's plan, whichever request or process started the worker.
    const ctx: RunContext = {
      job,
      wh: boundTo(wh, new Budget(job.plan, 'export')),
      dir,
      config: this.deps.config,
      quotas: this.quotas,
      visibleProtocols: this.deps.visibleProtocols,
      checkpoint: () => this.checkpoint(job),
      boundary: () => {
        const { queued, running } = byState(this.deps.store.all());
        if (shouldYield(job, queued, running, this.deps.sessions.length)) throw new Yielded();
      },
      advance: () => this.advance(job),
      save: () => this.deps.store.save(job),
      files: this.files,
    };
    try {
      if (job.attempts > EXPORT_MAX_ATTEMPTS)
        throw new JobFailure(`the service stopped ${job.attempts - 1} times while this job ran; it was not started again`);
      const spec = job.spec;
      await (spec.kind === 'filters' ? runFilters(ctx, spec) : runSql(ctx, spec));
      this.checkpoint(job);
      writeFileSync(path.join(dir, MANIFEST), `${JSON.stringify(manifestOf({ ...job, finishedAt: new Date(this.now()).toISOString() }), null, 2)}\n`);
      writeFileSync(path.join(dir, DATASET_CARD), datasetCard(job));
      job.rowsTotal = job.rowsWritten;
      job.progress = PROGRESS_MAX_PERCENT;
      this.finish(job, 'COMPLETED', null);
    } catch (err) {
      this.quotas.release(job);
      if (job.status === 'CANCELLED' || err instanceof Cancelled) {
        if (job.status !== 'CANCELLED') this.finish(job, 'CANCELLED', null);
        this.deps.store.deleteFiles(job.id);
      } else if (err instanceof Stopping) {
        // Shutting down: left RUNNING on disk, so the next start resumes it.
      } else if (err instanceof Yielded) {
        // Back in the queue, resumed at its next chunk; giving way is not a failed attempt.
        this.deps.logger.info({ job: job.id, chunk: job.work?.nextChunk ?? 0 }, 'export job yields its worker to a queued job');
        job.status = 'QUEUED';
        job.attempts -= 1;
        this.deps.store.save(job);
      } else {
        this.deps.logger.warn({ job: job.id, err }, 'export job failed');
        this.finish(job, 'FAILED', failureMessage(err));
      }
    }
  }

  /** Stop here when the job was cancelled meanwhile, or the service is stopping. */
  private checkpoint(job: JobRecord): void {
    if (job.status === 'CANCELLED') throw new Cancelled();
    if (this.stopped) throw new Stopping();
  }

  /** Progress from rows written; never backwards, and 100 only once the job is complete. */
  private advance(job: JobRecord): void {
    const total = job.rowsTotal ?? 0;
    const p = total === 0 ? PROGRESS_MAX_PERCENT - 1 : Math.min(PROGRESS_MAX_PERCENT - 1, Math.floor((PROGRESS_MAX_PERCENT * job.rowsWritten) / total));
    job.progress = Math.max(job.progress, p);
    this.deps.store.save(job);
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

  private view(job: JobRecord): ExportJobView {
    return jobView(job, { now: this.now(), linkTtlSeconds: this.deps.config.linkTtlSeconds, links: this.deps.links });
  }

  private fileOf(job: JobRecord, name: string): ExportFileHandle {
    return fileOf(job, name, this.deps.store.dirOf(job.id));
  }
}
