// A small cache for aggregate answers. An entry is valid while no new data has landed in
// this process (DataVersion) and for at most ttlMs, which bounds staleness when another
// process (a separate ingest in server mode) writes the data.
//
// Bounded by weight, not only by count: callers choose the keys (every distinct range is
// an entry), and one activity answer can hold 10000 buckets, so a count limit alone let a
// client fill memory with large answers. Expired entries are swept out, not merely skipped.
import { COMPILED_QUESTIONS_KEPT } from '../../core/limits/answers.ts';
import { RESULT_CACHE_TTL_MS } from '../../core/limits/http.ts';
import type { DataVersion } from '../../warehouse/data-version.ts';

interface Entry {
  version: number;
  at: number;
  value: Promise<unknown>;
  /** Items the answer holds (array length + 1), known once it resolved. */
  weight: number;
}

export class ResultCache {
  private readonly entries = new Map<string, Entry>();
  private totalWeight = 0;
  private lastSweep = 0;

  constructor(
    private readonly dataVersion: DataVersion,
    private readonly ttlMs = RESULT_CACHE_TTL_MS,
    private readonly maxEntries = 5000,
    /** Most answer items (buckets, rows) held in all entries together. */
    private readonly maxWeight = 200_000,
  ) {}

  get<T>(key: string, compute: () => Promise<T>): Promise<T> {
    return this.hit<T>(key) ?? this.computed(key, compute);
  }

  /** The valid entry of `key`, or undefined (an invalid one is dropped): a caller on the hot
   *  path asks this first, so a hit makes no `compute` closure. */
  hit<T>(key: string): Promise<T> | undefined {
    const now = Date.now();
    this.sweep(now);
    const hit = this.entries.get(key);
    if (hit && hit.version === this.dataVersion.current && now - hit.at < this.ttlMs) return hit.value as Promise<T>;
    if (hit) this.remove(key, hit);
    return undefined;
  }

  private computed<T>(key: string, compute: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const value = compute();
    // Concurrent callers share the one in-flight computation; failures are not cached.
    const entry: Entry = { version: this.dataVersion.current, at: now, value, weight: 1 };
    this.entries.set(key, entry);
    this.totalWeight += entry.weight;
    value.then(
      (v) => {
        if (this.entries.get(key) !== entry) return;
        const weight = Array.isArray(v) ? v.length + 1 : 1;
        this.totalWeight += weight - entry.weight;
        entry.weight = weight;
        this.evict();
      },
      () => {
        if (this.entries.get(key) === entry) this.remove(key, entry);
      },
    );
    this.evict();
    return value;
  }

  clear(): void {
    this.entries.clear();
    this.totalWeight = 0;
  }

  /** Entries and their total weight (for tests and metrics). */
  stats(): { entries: number; weight: number } {
    return { entries: this.entries.size, weight: this.totalWeight };
  }

  private remove(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.totalWeight -= entry.weight;
  }

  /** Oldest first (Map keeps insertion order) until within both bounds. */
  private evict(): void {
    while (this.entries.size > this.maxEntries || (this.totalWeight > this.maxWeight && this.entries.size > 1)) {
      const [key, entry] = this.entries.entries().next().value as [string, Entry];
      this.remove(key, entry);
    }
  }

  /** Drop expired entries, at most once per TTL, oldest first (they are at the front). */
  private sweep(now: number): void {
    if (now - this.lastSweep < this.ttlMs) return;
    this.lastSweep = now;
    for (const [key, entry] of this.entries) {
      if (now - entry.at < this.ttlMs) break;
      this.remove(key, entry);
    }
  }
}

/**
 * What is made of a question before its answer is looked up (its compiled statement and that
 * statement's cache key), kept by the question's JSON: a cached answer then compiles nothing.
 * Compiling reads no data, so an entry never goes stale; the bound only stops callers, who
 * choose the questions (every distinct range is one), from filling memory: past it the memo
 * is emptied and fills again.
 */
export class QuestionMemo<T> {
  private readonly entries = new Map<string, T>();

  constructor(private readonly maxEntries = COMPILED_QUESTIONS_KEPT) {}

  /** What a question is kept by. */
  idOf(question: object): string {
    return JSON.stringify(question);
  }

  get(id: string): T | undefined {
    return this.entries.get(id);
  }

  set(id: string, made: T): T {
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(id, made);
    return made;
  }
}
