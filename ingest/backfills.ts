// Backfills of this pipeline, running and recently finished (issue 40): a file posted to
// /admin/ingest?lane=backfill, or a topic replayed from its beginning. Each reports records
// done (stored, duplicate or rejected) of its total when known, on /metrics (through the
// ingest observer) and in the admin status answer (GET /admin/ingest/status). Only the
// newest INGEST_BACKFILLS_KEPT are kept: memory does not grow with the number of backfills.
import { INGEST_BACKFILLS_KEPT } from '../core/limits/ingest.ts';
import type { BackfillState, IngestObserver } from '../core/observers.ts';

export class BackfillProgress {
  constructor(
    private readonly state: BackfillState,
    private readonly observer: IngestObserver | undefined,
  ) {}

  /** Records done since the last call. */
  add(records: number): void {
    this.state.done += records;
    if (this.state.total !== null && this.state.done >= this.state.total) this.state.finishedAt ??= Date.now();
    this.observer?.observeBackfill(this.state);
  }

  setTotal(total: number): void {
    this.state.total = total;
    this.add(0);
  }

  finish(): void {
    this.state.finishedAt ??= Date.now();
    this.observer?.observeBackfill(this.state);
  }
}

export class Backfills {
  private readonly states: BackfillState[] = [];

  constructor(private readonly observer: IngestObserver | undefined) {}

  start(name: string, total: number | null): BackfillProgress {
    const state: BackfillState = { name, done: 0, total, startedAt: Date.now(), finishedAt: null };
    this.states.push(state);
    // The oldest finished one makes room; running ones are all kept (each is a call or a source in flight).
    const oldestFinished = this.states.findIndex((s) => s.finishedAt !== null);
    if (this.states.length > INGEST_BACKFILLS_KEPT && oldestFinished >= 0) this.states.splice(oldestFinished, 1);
    const progress = new BackfillProgress(state, this.observer);
    progress.add(0);
    return progress;
  }

  /** Newest first, as copies. */
  list(): BackfillState[] {
    return this.states.map((s) => ({ ...s })).reverse();
  }
}
