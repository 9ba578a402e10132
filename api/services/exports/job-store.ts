// Export jobs persisted as one JSON record per job under EXPORT_DIR/jobs/, next to their
// files under EXPORT_DIR/files/<id>/. Why a journal on disk rather than a ClickHouse table:
// a job's state and its files must agree, and both live on this disk (in server mode the
// engine is elsewhere, the files are here); a record is rewritten at every chunk for
// progress, which would be a stream of tiny parts and FINAL reads in a MergeTree table;
// and a job record written with write-then-rename is never half-written, even by a process
// killed mid-write. The records are few (retention bounds them) and are all held in memory.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { Plan } from '../../../core/plans.ts';
import type { Settings } from '../../../warehouse/warehouse.ts';
import type { ExportSpec, SplitName } from './export-config.ts';
import type { FittedPreprocessing } from './preprocessing.ts';
import type { StrataPlan } from './stratified-sampling.ts';

export const JOB_STATUSES = ['QUEUED', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED', 'EXPIRED'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
/** States a job never leaves (EXPIRED follows COMPLETED, FAILED and CANCELLED alike once retention ends). */
export const isFinished = (s: JobStatus): boolean => s === 'COMPLETED' || s === 'FAILED' || s === 'CANCELLED' || s === 'EXPIRED';

export interface ExportFile {
  /** File name, e.g. `train-00000.parquet`; unique within the job. */
  name: string;
  split: SplitName;
  rows: number;
  bytes: number;
  sha256: string;
}

/** One statement's worth of rows: a block_time range [from, to) and its rows per split. */
export interface Chunk {
  from: number;
  to: number;
  rows: Record<SplitName, number>;
}

export interface JobWork {
  /** Newest ingested_at included: rows ingested later are not exported, so a resumed job writes what was planned. */
  ingestedAt: string;
  /** Newest block_time among the exported rows (Unix seconds), null when none. */
  maxBlockTime: number | null;
  /** Protocols the caller could see when the job was planned: a resumed job exports the same ones. */
  visible: string[];
  chunks: Chunk[];
  /** Index of the first chunk not yet written. */
  nextChunk: number;
  /** Bytes per row of a sample, as the files hold them: the estimate before any file is written. */
  rowBytes?: number;
  /** A STRATIFIED sample's strata and thresholds, fixed when planned (stratified-sampling.ts). */
  strata?: StrataPlan;
  /** The fitted preprocessing, fixed when planned (preprocessing.ts). */
  fitted?: FittedPreprocessing;
}

export interface JobRecord {
  id: string;
  /** Creation order in this store (listings are newest first, and clocks can tie). */
  seq: number;
  /** The API key that created the job: only it sees the job and its files. */
  owner: string;
  /** The owner's plan when the job was created (its caps apply). */
  plan: Plan;
  spec: ExportSpec;
  status: JobStatus;
  /** 0-100, rows written over rows planned; never moves backwards. */
  progress: number;
  rowsWritten: number;
  /** Rows the job will write, once planned. */
  rowsTotal: number | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** When the files are deleted and the job becomes EXPIRED. */
  expiresAt: string | null;
  error: string | null;
  /** Runs started; a job interrupted too often is failed rather than retried forever. */
  attempts: number;
  work: JobWork | null;
  files: ExportFile[];
  /** Column names and engine types of the files. */
  schema: { name: string; type: string }[] | null;
  /** A SQL export's checked text and the settings it runs with (visibility filter, read budget). */
  run: { sql: string; settings: Settings } | null;
  /**
   * Set when the job is a SQL execution (POST /v1/query/executions, api/services/exports/executions.ts):
   * its one Parquet file is read back page by page in `format`; it is not an export listing's.
   * `rowColumn`: the file's column of row numbers, which pages are read by (execution-rows.ts;
   * absent in files written before it, which are read by offset).
   */
  execution?: { format: 'json' | 'csv'; rowColumn?: string };
}

export class JobStore {
  private readonly jobs = new Map<string, JobRecord>();
  readonly jobsDir: string;
  readonly filesDir: string;
  /** Where a job's files wait to be unlinked (deleteFiles: why). */
  private readonly trashDir: string;
  private trashed = 0;

  constructor(readonly root: string) {
    this.jobsDir = path.join(root, 'jobs');
    this.filesDir = path.join(root, 'files');
    this.trashDir = path.join(root, 'trash');
    mkdirSync(this.jobsDir, { recursive: true });
    mkdirSync(this.filesDir, { recursive: true });
    // What a stop left half-deleted.
    void rm(this.trashDir, { recursive: true, force: true }).catch(() => undefined);
    for (const name of readdirSync(this.jobsDir)) {
      if (!name.endsWith('.json')) continue;
      try {
        const job = JSON.parse(readFileSync(path.join(this.jobsDir, name), 'utf8')) as JobRecord;
        this.jobs.set(job.id, job);
      } catch {
        // A record that cannot be read (a disk fault; rename makes torn writes impossible) is skipped, not fatal.
      }
    }
  }

  get(id: string): JobRecord | undefined {
    return this.jobs.get(id);
  }

  /** The next creation number. */
  nextSeq(): number {
    let max = 0;
    for (const j of this.jobs.values()) max = Math.max(max, j.seq);
    return max + 1;
  }

  all(): JobRecord[] {
    return [...this.jobs.values()];
  }

  /** Write the record: to a temporary name, then renamed over the old one. */
  save(job: JobRecord): void {
    this.jobs.set(job.id, job);
    const file = path.join(this.jobsDir, `${job.id}.json`);
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(job));
    renameSync(tmp, file);
  }

  /** The directory a job's files go to. */
  dirOf(id: string): string {
    return path.join(this.filesDir, id);
  }

  /** Forget a job: its record and files. */
  remove(id: string): void {
    this.deleteFiles(id);
    rmSync(path.join(this.jobsDir, `${id}.json`), { force: true });
    this.jobs.delete(id);
  }

  /**
   * Delete a job's files: gone from the job's directory at once, their disk freed shortly
   * after. Unlinking gigabytes (a 10M-row JSONL export is 6.5 GB) takes seconds, and done on
   * the event loop it held every request for that long; so the directory is renamed aside
   * (instant, same disk) and unlinked in the background.
   */
  deleteFiles(id: string): void {
    const dir = this.dirOf(id);
    if (!existsSync(dir)) return;
    const aside = path.join(this.trashDir, `${id}-${process.pid}-${this.trashed++}`);
    try {
      mkdirSync(this.trashDir, { recursive: true });
      renameSync(dir, aside);
    } catch {
      rmSync(dir, { recursive: true, force: true });
      return;
    }
    void rm(aside, { recursive: true, force: true }).catch(() => undefined);
  }
}
