// Disk quotas of export files (docs/exports.md "Quotas"): bytes per job, per key and per
// plan (core/plans.ts "Export quotas"), the export disk budget, and the disk's free space
// less the ingest reserve. Every write is checked before it starts, with the bytes it is
// expected to add (a SQL export's counted by the engine, a filter export's estimated), and
// those bytes are held for the job until its files are on disk, so two workers writing at
// once cannot each take the same room. Files on disk are counted again after each write.
import { statfsSync } from 'node:fs';
import type { ExportConfig } from '../../../core/config/load-config.ts';
import { AppError, Errors } from '../../../core/errors.ts';
import type { Plan } from '../../../core/plans.ts';
import { JobFailure } from './job-errors.ts';
import type { JobRecord, JobStore } from './job-store.ts';
import { EXPORT_QUOTA_RETRY_AFTER_SECONDS } from '../../../core/limits/exports.ts';

const bytesOf = (job: JobRecord): number => job.files.reduce((a, f) => a + f.bytes, 0);

/** Free bytes of the file system holding `dir` (for an unprivileged writer). */
export function freeDiskBytes(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}

export class ExportQuotas {
  /** Bytes a job is writing now (its statement in progress), by job id. */
  private readonly writing = new Map<string, { job: JobRecord; bytes: number }>();

  constructor(
    private readonly config: ExportConfig,
    private readonly store: JobStore,
    private readonly freeDisk: (dir: string) => number = freeDiskBytes,
  ) {}

  /**
   * Fail `job` (a JobFailure naming the quota) when `coming` more bytes of it would pass a
   * quota; otherwise hold them for it until release(). `what` names the bytes in messages
   * ("the next chunk", "the query's rows"); `hold: false` only checks (a whole job's
   * estimate before its first chunk: the job holds only what it is writing now).
   */
  claim(job: JobRecord, coming: number, what: string, hold = true): void {
    coming = Math.ceil(coming);
    const others = [...this.writing.values()].filter((w) => w.job.id !== job.id);
    const live = this.store.all().filter((j) => j.status !== 'EXPIRED');
    const held = (match: (j: JobRecord) => boolean): number =>
      live.filter(match).reduce((a, j) => a + bytesOf(j), 0) + others.filter((w) => match(w.job)).reduce((a, w) => a + w.bytes, 0);
    const plan = job.plan;
    const q = this.config.quotas;
    const jobTotal = bytesOf(job) + coming;
    if (jobTotal > q.jobBytes[plan]) {
      throw new JobFailure(
        `this export would hold about ${jobTotal} bytes; the ${plan} plan allows ${q.jobBytes[plan]} bytes per export. ` +
          'Export less: a narrower date range, fewer columns, sampling, or a query returning fewer or smaller rows',
      );
    }
    const keyTotal = held((j) => j.owner === job.owner) + coming;
    if (keyTotal > q.keyBytes[plan]) {
      throw new JobFailure(
        `this API key's export files would hold about ${keyTotal} bytes; the ${plan} plan allows ${q.keyBytes[plan]} bytes per key. ` +
          'Try again when older exports of this key have expired (their expiresAt), or export less',
      );
    }
    const budget = this.config.diskBudgetBytes;
    const total = held(() => true) + coming;
    if (total > budget) {
      throw new JobFailure(
        `the export disk budget is used up: ${what} (about ${coming} bytes) would take export files to ${total} bytes of the ${budget} allowed (EXPORT_DISK_BUDGET_BYTES); ` +
          "this job's files were deleted. Export less (a narrower dateRange, sampling) or try again when older exports have expired",
      );
    }
    const share = Math.floor(q.planShare[plan] * budget);
    const planTotal = held((j) => j.plan === plan) + coming;
    if (planTotal > share) {
      throw new JobFailure(
        `export files of all ${plan}-plan keys would hold about ${planTotal} bytes; the ${plan} plan's share of the export disk is ${share} bytes. ` +
          'Try again when older exports have expired, or export less',
      );
    }
    const free = this.freeDisk(this.config.dir);
    const reserve = this.config.ingestReserveBytes;
    if (coming + others.reduce((a, w) => a + w.bytes, 0) > free - reserve) {
      throw new JobFailure(
        `the disk holding export files has ${free} bytes free and keeps ${reserve} of them for ingest (EXPORT_INGEST_RESERVE_BYTES): ` +
          `${what} (about ${coming} bytes) does not fit. Try again later, or export less`,
      );
    }
    if (hold) this.writing.set(job.id, { job, bytes: coming });
  }

  /**
   * Refuse a new job (429, Retry-After until the first of the files in the way expires) when
   * its key's or its plan's quota is already full: it could only fail. Room that is merely
   * short is judged when the job runs, against its own bytes.
   */
  checkRoom(owner: { id: string; plan: Plan }, now: number): void {
    const live = this.store.all().filter((j) => j.status !== 'EXPIRED' && j.files.length > 0);
    const q = this.config.quotas;
    const full = (jobs: JobRecord[], limit: number, what: string): void => {
      const bytes = jobs.reduce((a, j) => a + bytesOf(j), 0);
      if (bytes < limit) return;
      const expiries = jobs.map((j) => (j.expiresAt === null ? Number.POSITIVE_INFINITY : Date.parse(j.expiresAt))).filter(Number.isFinite);
      const wait = expiries.length === 0 ? EXPORT_QUOTA_RETRY_AFTER_SECONDS : Math.max(1, Math.ceil((Math.min(...expiries) - now) / 1000));
      throw new AppError(
        Errors.rateLimited,
        `${what} hold ${bytes} bytes of the ${limit} the ${owner.plan} plan allows; ` +
          `a new export can start when older ones expire (the first in ${wait} s)`,
        { retryAfterSeconds: wait },
      );
    };
    full(
      live.filter((j) => j.owner === owner.id),
      q.keyBytes[owner.plan],
      "this API key's export files",
    );
    full(
      live.filter((j) => j.plan === owner.plan),
      Math.floor(q.planShare[owner.plan] * this.config.diskBudgetBytes),
      `export files of all ${owner.plan}-plan keys`,
    );
  }

  /** The job's statement ended: its bytes are now its files (or deleted). */
  release(job: JobRecord): void {
    this.writing.delete(job.id);
  }

  /** Check the files on disk after a write (the estimate may have been low). */
  recheck(job: JobRecord): void {
    this.release(job);
    this.claim(job, 0, 'export files');
  }
}
