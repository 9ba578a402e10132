// A key's export jobs as a listing, newest first, paged either way: forward (first/after)
// or backward (last/before, the same jobs a forward walk meets, in the same order). The jobs
// are the store's in-memory records, so both flags and the total are exact: they are
// positions in one list. Cursors are the listings' signed page tokens (page-token.ts),
// bound to this owner's listing: one the service did not write, another key's, or one of a
// job no longer listed is refused, naming the argument it came in.
import { AppError, Errors, param } from '../../../core/errors.ts';
import { EXPORT_LIST_DEFAULT, EXPORT_LIST_MAX } from '../../../core/limits/exports.ts';
import { isUInt, listingFingerprint, type PageDirection, type PageTokens } from '../../analytics/paging/page-token.ts';
import type { JobRecord } from './job-store.ts';

/** A page as asked: forward from `after` (the default), or backward with `last`/`before`. */
export interface JobPageAsk {
  first?: number;
  after?: string | null;
  last?: number;
  before?: string | null;
}

/** A page of jobs (any item type: the service shows records as views) with where it lies. */
export interface JobPage<T> {
  jobs: T[];
  /** Each job's cursor, in the same order (GraphQL's edges). */
  cursors: string[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
  /** How many jobs the whole listing holds. */
  totalCount: number;
}

const CURSOR_TAG = 'exportJobs';
type JobPosition = { seq: number; id: string };
const jobPosition = (v: unknown[]): JobPosition | undefined =>
  v.length === 2 && isUInt(v[0], Number.MAX_SAFE_INTEGER) && typeof v[1] === 'string' && v[1].length > 0 ? { seq: v[0], id: v[1] } : undefined;

const newestFirst = (a: JobRecord, b: JobRecord): number => b.seq - a.seq;

function sizeOf(size: number | undefined, name: 'first' | 'last'): number {
  const n = size ?? EXPORT_LIST_DEFAULT;
  if (!Number.isSafeInteger(n) || n < 1 || n > EXPORT_LIST_MAX)
    throw new AppError(Errors.invalidParams, `${name} must be a whole number from 1 to ${EXPORT_LIST_MAX}`, { field: name });
  return n;
}

/** The index of the job a cursor names in `jobs`, or a 400 naming the argument. */
function indexOf(tokens: PageTokens, jobs: readonly JobRecord[], token: string, fingerprint: string, direction: PageDirection): number {
  const key = direction === 'forward' ? 'cursor' : 'cursorBefore';
  let at: JobPosition | undefined;
  try {
    at = tokens.decode(token, CURSOR_TAG, fingerprint, jobPosition, direction);
  } catch {
    /* answered below, as a cursor of no job */
  }
  const i = at === undefined ? -1 : jobs.findIndex((j) => j.seq === at.seq && j.id === at.id);
  if (i < 0) throw new AppError(Errors.invalidParams, `${param(key)} is not a cursor of this listing`, { field: key });
  return i;
}

/** A page of `owner`'s `records` (any order: they are listed newest first) as `ask` says, each shown by `show`. */
export function pageJobs<T>(tokens: PageTokens, owner: string, records: readonly JobRecord[], ask: JobPageAsk, show: (j: JobRecord) => T): JobPage<T> {
  const jobs = [...records].sort(newestFirst);
  const backward = ask.last !== undefined || ask.before != null;
  const fingerprint = listingFingerprint({ exportJobs: owner });
  let from: number;
  let to: number;
  if (backward) {
    const last = sizeOf(ask.last, 'last');
    to = ask.before == null ? jobs.length : indexOf(tokens, jobs, ask.before, fingerprint, 'backward');
    from = Math.max(0, to - last);
  } else {
    const first = sizeOf(ask.first, 'first');
    from = ask.after == null ? 0 : indexOf(tokens, jobs, ask.after, fingerprint, 'forward') + 1;
    to = Math.min(jobs.length, from + first);
  }
  const slice = jobs.slice(from, to);
  const cursors = slice.map((j) => tokens.encode([CURSOR_TAG, j.seq, j.id, fingerprint]));
  return {
    jobs: slice.map(show),
    cursors,
    hasNextPage: to < jobs.length,
    hasPreviousPage: from > 0,
    startCursor: cursors[0] ?? null,
    endCursor: cursors.at(-1) ?? null,
    totalCount: jobs.length,
  };
}
