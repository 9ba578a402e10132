// What the layers below the API report about their work, as interfaces: the warehouse and
// ingest layers call these without knowing who listens; core/metrics.ts implements them on
// the process's one metrics registry.

/** Every warehouse call: its operation (query, query_text, stream, insert, exec), time, outcome. */
export interface WarehouseObserver {
  observeWarehouse(operation: string, seconds: number, ok: boolean): void;
}

/** The pipeline's stages as timed (issue 40): a call's parse-and-check, a chunk's wait for the
 *  writer, then the writer's steps per batch. */
export type IngestStage = 'parse' | 'queue' | 'dedupe' | 'journal' | 'insert' | 'notify';

/** A backfill's progress: records done (stored, duplicate or rejected) of total when known. */
export interface BackfillState {
  name: string;
  done: number;
  total: number | null;
  startedAt: number;
  finishedAt: number | null;
}

/** Every ingest through the pipeline (any source), and every insert batch it writes. */
export interface IngestObserver {
  observeIngest(source: string, accepted: number, rejected: number, duplicates: number): void;
  observeBatch(rows: number): void;
  /** Rejected records of one call by rejection code. */
  observeDeadLetters(source: string, code: string, count: number): void;
  observeStage(stage: IngestStage, seconds: number): void;
  /** Received by the pipeline -> queryable, per chunk of a call, by lane ('live', 'backfill'). */
  observeFreshness(lane: string, seconds: number): void;
  observeBackfill(state: BackfillState): void;
}

/** One (protocol, hour) bucket of the hourly views. */
export interface ChangedBucket {
  protocolName: string;
  /** Unix seconds of the hour's start. */
  hourStart: number;
}

/**
 * What one committed write into the base table changed, as the writer already knows it
 * (no query): the (protocol, hour) buckets its rows fell in, and per protocol the newest
 * block_time among them. Also reported for buckets whose views were rebuilt after an
 * unfinished insert (then `newestBlockTimes` is empty: those rows' times are not known).
 */
export interface CommittedChange {
  buckets: readonly ChangedBucket[];
  newestBlockTimes: readonly { protocolName: string; blockTime: number }[];
  /** Unix milliseconds when the insert was committed (the rows' ingested_at is a few ms earlier). */
  committedAt: number;
  /** The write's id in the ingest journal: a reader of the journal skips writes it was told of. */
  batchId?: string;
}

/** Told after each committed write, once its rows are queryable in the base table and views. */
export interface DataChangeObserver {
  dataChanged(change: CommittedChange): void;
}
