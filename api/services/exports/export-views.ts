// What a client sees of a job (the public shape of export-schemas.ts, with fresh signed
// links) and of its files, and the reason a FAILED job gives.
import path from 'node:path';
import { AppError, Errors } from '../../../core/errors.ts';
import { WarehouseError } from '../../../warehouse/warehouse.ts';
import { engineMessage } from '../sql/sql-guard.ts';
import { DATASET_CARD, MANIFEST } from './dataset-card.ts';
import { SIGNED_LINK_PREFIX, type DownloadLinks } from './download-links.ts';
import { FORMAT_FILES } from './export-config.ts';
import type { ExportJobView } from './export-schemas.ts';
import { JobFailure } from './job-errors.ts';
import type { JobRecord } from './job-store.ts';
import { EXPORT_ENGINE_MESSAGE_MAX_CHARS } from '../../../core/limits/exports.ts';

/** A file ready to be sent. */
export interface ExportFileHandle {
  file: string;
  name: string;
  bytes: number;
  sha256: string;
  contentType: string;
}

export const fileNotFound = (): AppError => new AppError(Errors.notFound, 'no such file in this export job (it may have expired)');

/** Jobs a keyless caller paid for (x402): owned by `x402:<payer>`, a wallet, not a key of the store. */
const paidPerCall = (owner: string): boolean => owner.startsWith('x402:');

/** The job as a client reads it; links are minted afresh, valid `linkTtlSeconds` and never past the job's expiry. */
export function jobView(job: JobRecord, at: { now: number; linkTtlSeconds: number; links: DownloadLinks }): ExportJobView {
  const completed = job.status === 'COMPLETED';
  const expires = completed ? Math.min(Math.floor(at.now / 1000) + at.linkTtlSeconds, Math.floor(Date.parse(job.expiresAt!) / 1000)) : 0;
  const link = (name: string) => {
    const filePath = `/v1/query/exports/${job.id}/files/${encodeURIComponent(name)}`;
    // A payer (x402) has no key for a link to stand for: each download is a call it pays for.
    return { url: paidPerCall(job.owner) ? filePath : at.links.mint(SIGNED_LINK_PREFIX, { job: job.id, file: name, key: job.owner, expires }), path: filePath };
  };
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
    rowCount: completed || job.status === 'EXPIRED' ? job.rowsWritten : null,
    fileSize: completed ? job.files.reduce((a, f) => a + f.bytes, 0) : null,
    downloadUrl: completed ? link(job.files.length === 1 ? job.files[0]!.name : MANIFEST).url : null,
    completedAt: completed || job.status === 'EXPIRED' ? job.finishedAt : null,
    seeds: { split: job.spec.seed, sampling: job.spec.sampling?.seed ?? null },
    files: completed ? job.files.map((f) => ({ ...f, ...link(f.name) })) : [],
    manifest: completed ? link(MANIFEST) : null,
    card: completed ? link(DATASET_CARD) : null,
    linkExpiresAt: completed ? new Date(expires * 1000).toISOString() : null,
  };
}

/** A file of a COMPLETED job in `dir`: a data file, the manifest or the card. */
export function fileOf(job: JobRecord, name: string, dir: string): ExportFileHandle {
  if (job.status !== 'COMPLETED') throw fileNotFound();
  const file = path.join(dir, name);
  const data = job.files.find((f) => f.name === name);
  if (data !== undefined) return { file, name, bytes: data.bytes, sha256: data.sha256, contentType: FORMAT_FILES[job.spec.format].contentType };
  if (name === MANIFEST || name === DATASET_CARD) {
    // Small, written once: digested at each read rather than recorded.
    return { file, name, bytes: -1, sha256: '', contentType: name === MANIFEST ? 'application/json; charset=utf-8' : 'text/markdown; charset=utf-8' };
  }
  throw fileNotFound();
}

/** What the owner reads on a FAILED job: our own reasons as they are, engine failures briefly. */
export function failureMessage(err: unknown): string {
  if (err instanceof JobFailure || err instanceof AppError) return err.message;
  const m = err instanceof WarehouseError ? engineMessage(err) : err instanceof Error ? err.message : String(err);
  if (/ENOSPC|No space left|NOT_ENOUGH_SPACE/i.test(m)) return 'the disk holding export files is full; try again later';
  return `the engine failed while writing the export: ${m.slice(0, EXPORT_ENGINE_MESSAGE_MAX_CHARS)}`;
}
