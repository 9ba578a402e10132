// Parse workers for the ingest pipeline (issue 15, INGEST_PARSE_WORKERS). The engine's insert
// of a batch keeps only 0.5-0.7 of a core busy (chDB runs it on its own threads), while the
// pipeline's JavaScript per record (JSON.parse, the schema check, registry checks, hashing,
// and the garbage they leave) is ~20-30 µs on the one main thread: on two cores, that work can
// run beside the insert. A chunk of received records (texts, or bytes packed into one
// transferred buffer) goes to a worker, which runs the same parseRecord as the main thread
// and answers packed (ingest/parse-worker.ts); the main thread keeps everything with an order
// or a side effect: de-duplication, the journal, insert order, dead-letter decisions.
//
// Loading: a worker is started from a small bootstrap (parse-worker-boot.mjs) that registers
// tsx's loader in the worker before importing parse-worker.ts (a Worker does not inherit tsx's hooks from
// `npx tsx`, nor vitest's transform). A worker that cannot start, or that fails later, is
// dropped: its chunks, and all chunks once no worker is left, are parsed on the main thread,
// which gives the same answers. Workers start with the first call large enough to use them
// (or IngestPipeline.prepare); until one has said it is ready, the pipeline parses on the
// main thread, so starting never delays an ingest, and a process that never ingests a
// large call never starts them.
import { Worker } from 'node:worker_threads';
import type { Logger } from '../core/logger.ts';
import type { BaseRow } from '../warehouse/tables.ts';

export const OK_AS_RECEIVED = 0;
export const OK_ROW = 1;
export const DEAD = 2;

export interface ParseTask {
  id: number;
  maxRecordBytes: number;
  /** The registry as [protocol_name, program_id] pairs; the reply's proto indexes it. */
  known: [string, string][];
  /** The records as texts, or as bytes packed end to end (ends[i] = end of record i). */
  texts?: string[];
  packed?: { bytes: Uint8Array; ends: Uint32Array };
}

export interface ParseReply {
  id: number;
  /** Per record: OK_AS_RECEIVED, OK_ROW or DEAD. */
  status: Uint8Array;
  ix: Uint16Array;
  proto: Uint16Array;
  bt: Float64Array;
  kh: Uint32Array;
  kl: Uint32Array;
  /** Signatures of the accepted records, in order. */
  sigs: string[];
  /** Rows of the OK_ROW records, in order. */
  rows: BaseRow[];
  /** code, detail of each DEAD record, in order. */
  dead: string[];
}

interface Slot {
  worker: Worker;
  ready: boolean;
  inFlight: Map<number, { resolve: (r: ParseReply) => void; reject: (err: Error) => void }>;
}

export class ParsePool {
  private readonly slots: Slot[] = [];
  private nextId = 1;
  private failedOnce = false;
  private started = false;

  constructor(
    private readonly size: number,
    private readonly log: Logger,
    private readonly entry: URL = new URL('./parse-worker.ts', import.meta.url),
  ) {}

  /** Start the workers (once; later calls do nothing). They take chunks once they say they are ready. */
  start(): void {
    if (this.started) return;
    this.started = true;
    for (let i = 0; i < this.size; i++) this.startOne();
  }

  private startOne(): void {
    let worker: Worker;
    try {
      worker = new Worker(new URL('./parse-worker-boot.mjs', import.meta.url), {
        workerData: { entry: this.entry.href, typescript: this.entry.pathname.endsWith('.ts') },
      });
    } catch (err) {
      this.drop(undefined, err);
      return;
    }
    const slot: Slot = { worker, ready: false, inFlight: new Map() };
    this.slots.push(slot);
    worker.unref();
    worker.on('message', (m: ParseReply | { ready: true } | { failed: string }) => {
      if ('ready' in m) {
        slot.ready = true;
      } else if ('failed' in m) {
        this.drop(slot, new Error(m.failed));
      } else {
        const t = slot.inFlight.get(m.id);
        slot.inFlight.delete(m.id);
        // Referenced only while it holds work, so an idle pool never keeps the process alive.
        if (slot.inFlight.size === 0) slot.worker.unref();
        t?.resolve(m);
      }
    });
    worker.on('error', (err) => this.drop(slot, err));
    worker.on('exit', (code) => this.drop(slot, new Error(`parse worker exited with code ${code}`)));
  }

  private drop(slot: Slot | undefined, err: unknown): void {
    if (slot !== undefined) {
      const at = this.slots.indexOf(slot);
      if (at < 0) return;
      this.slots.splice(at, 1);
      for (const t of slot.inFlight.values()) t.reject(err instanceof Error ? err : new Error(String(err)));
      slot.inFlight.clear();
      void slot.worker.terminate().catch(() => undefined);
    }
    if (!this.failedOnce) {
      this.failedOnce = true;
      this.log.warn({ err, left: this.slots.length }, 'ingest parse worker failed; its records are parsed on the main thread');
    }
  }

  /** Workers ready to take chunks (0 while starting, or when none could start). */
  get readyWorkers(): number {
    let n = 0;
    for (const s of this.slots) if (s.ready) n += 1;
    return n;
  }

  /** Parse one chunk on the least busy ready worker; rejects if none is ready or it fails. */
  parse(task: Omit<ParseTask, 'id'>): Promise<ParseReply> {
    let best: Slot | undefined;
    for (const s of this.slots) if (s.ready && (best === undefined || s.inFlight.size < best.inFlight.size)) best = s;
    if (best === undefined) return Promise.reject(new Error('no parse worker is ready'));
    const slot = best;
    const id = this.nextId++;
    return new Promise<ParseReply>((resolve, reject) => {
      if (slot.inFlight.size === 0) slot.worker.ref();
      slot.inFlight.set(id, { resolve, reject });
      const full: ParseTask = { ...task, id };
      try {
        slot.worker.postMessage(full, task.packed === undefined ? [] : [task.packed.bytes.buffer as ArrayBuffer, task.packed.ends.buffer as ArrayBuffer]);
      } catch (err) {
        slot.inFlight.delete(id);
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  async close(): Promise<void> {
    const slots = this.slots.splice(0);
    // A chunk still in flight is parsed on the main thread by the call that sent it.
    for (const s of slots) for (const t of s.inFlight.values()) t.reject(new Error('parse workers closed'));
    await Promise.all(slots.map((s) => s.worker.terminate().catch(() => undefined)));
  }
}
