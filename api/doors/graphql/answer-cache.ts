// Whole answers of identical query requests (same API key, document, operation and
// variables) while no data has landed and the registry is unchanged (Analytics.answersVersion),
// and for GRAPHQL_ANSWER_CACHE_TTL_MS at most (writes of other processes). A dashboard polling one
// query then costs what a cached JSON-RPC call costs: no parse, validation, planning, costing,
// execution or serialisation. Kept as the bytes of `data` (their size known), bounded by
// total bytes, and swept by a timer: an answer nobody asks for again does not stay (each
// unique document of the audit added ~450 MB of heap for good when entries were objects
// counted by number and dropped only when read again).
import { GRAPHQL_ANSWER_CACHE_BYTES, GRAPHQL_ANSWER_CACHE_TTL_MS } from '../../../core/limits/graphql.ts';

export interface Remembered {
  version: string;
  at: number;
  /** Top-level fields: each is charged against the rate limit again when the answer is reused. */
  fields: number;
  requested: number;
  /** The `data` member's JSON text as sent. */
  data: Buffer;
}

export interface AnswerCacheOptions {
  budgetBytes?: number;
  ttlMs?: number;
  now?: () => number;
}

export class AnswerCache {
  private readonly entries = new Map<string, Remembered>();
  private held = 0;
  private readonly budget: number;
  private readonly ttl: number;
  private readonly now: () => number;
  private readonly timer: NodeJS.Timeout;

  constructor(o: AnswerCacheOptions = {}) {
    this.budget = o.budgetBytes ?? GRAPHQL_ANSWER_CACHE_BYTES;
    this.ttl = o.ttlMs ?? GRAPHQL_ANSWER_CACHE_TTL_MS;
    this.now = o.now ?? Date.now;
    // unref: a memo never keeps the process alive.
    this.timer = setInterval(() => this.sweep(), Math.max(10, this.ttl / 2)).unref();
  }

  /** Bytes held (answers and their keys), for tests and metrics. */
  get bytes(): number {
    return this.held;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string, version: string): Remembered | undefined {
    const hit = this.entries.get(key);
    if (hit === undefined) return undefined;
    if (hit.version !== version || this.now() - hit.at >= this.ttl) {
      this.drop(key, hit);
      return undefined;
    }
    return hit;
  }

  /** Keep an answer, stamped with the answer cache's own clock. */
  remember(key: string, value: Omit<Remembered, 'at'>): void {
    this.set(key, { ...value, at: this.now() });
  }

  set(key: string, value: Remembered): void {
    const old = this.entries.get(key);
    if (old !== undefined) this.drop(key, old);
    const size = sizeOf(key, value);
    if (size > this.budget) return;
    this.entries.set(key, value);
    this.held += size;
    // Oldest first: a Map iterates in insertion order.
    for (const [k, v] of this.entries) {
      if (this.held <= this.budget) break;
      this.drop(k, v);
    }
  }

  /** Drop expired entries; insertion order is age order, so the scan stops at the first fresh one. */
  sweep(): void {
    const now = this.now();
    for (const [k, v] of this.entries) {
      if (now - v.at < this.ttl) break;
      this.drop(k, v);
    }
  }

  close(): void {
    clearInterval(this.timer);
    this.entries.clear();
    this.held = 0;
  }

  private drop(key: string, value: Remembered): void {
    this.entries.delete(key);
    this.held -= sizeOf(key, value);
  }
}

/** An entry's weight: its answer's bytes and its key (a document and variables, UTF-16). */
const sizeOf = (key: string, value: Remembered): number => value.data.length + key.length * 2;
