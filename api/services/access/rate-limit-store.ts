// Where rate-limit counters live. One counter per (subject, window): the limiter builds
// the counter key from both, so a counter is never reset, only abandoned when its window
// ends, and the store's only job is an atomic add with an expiry.
import { RATE_STORE_SWEEP_MS } from '../../../core/limits/access.ts';

export interface RateLimitStore {
  readonly kind: 'memory' | 'redis';
  /** Add `units` to the counter `key` and return its new value; the counter disappears
   *  `ttlMs` after it was created. Atomic across every process sharing the store.
   *  `units` 0 reads the counter (creating it at 0 when absent). */
  increment(key: string, units: number, ttlMs: number): Promise<number>;
  /** Throws when the store is unreachable (for /health). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Counters in this process only: correct for one API process (the embedded mode). */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly kind = 'memory' as const;
  private readonly counters = new Map<string, { value: number; expiresAt: number }>();
  private nextSweep = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async increment(key: string, units: number, ttlMs: number): Promise<number> {
    return this.incrementSync(key, units, ttlMs);
  }

  /** The same as increment(), for callers that cannot wait (the Redis fallback). */
  incrementSync(key: string, units: number, ttlMs: number): number {
    const now = this.now();
    this.sweep(now);
    const entry = this.counters.get(key);
    if (entry && entry.expiresAt > now) {
      entry.value += units;
      return entry.value;
    }
    this.counters.set(key, { value: units, expiresAt: now + ttlMs });
    return units;
  }

  // Expired counters are dropped at most once a second, in one pass, so the map holds
  // about one window's worth of subjects however long the process runs.
  private sweep(now: number): void {
    if (now < this.nextSweep) return;
    this.nextSweep = now + RATE_STORE_SWEEP_MS;
    for (const [k, e] of this.counters) if (e.expiresAt <= now) this.counters.delete(k);
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    this.counters.clear();
  }
}
