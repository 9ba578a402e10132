// Bounded concurrency for client SQL: a fixed set of slots (one per sandbox engine session),
// one running query per key with a short queue behind it, and a short queue in total.
// Past either queue the caller is told to come back (429 + Retry-After) instead of piling
// up: a pile-up is how one caller stalls everyone.
import { AppError, Errors } from '../../core/errors.ts';

export interface GateLimits {
  /** Queries of one key that may wait while one of its own runs. */
  queuePerKey: number;
  /** Queries that may wait for a slot in total. */
  queueTotal: number;
  /** Longest wait for a slot before the caller is told to retry (ms). */
  maxWaitMs: number;
}

interface Waiter<S> {
  key: string;
  resolve: (lease: Lease<S>) => void;
  reject: (err: unknown) => void;
  timer: NodeJS.Timeout;
}

export interface Lease<S> {
  slot: S;
  release(): void;
}

/** Whole seconds a refused caller should wait: about one query's time-out share. */
const RETRY_AFTER_SECONDS = 2;

export function busy(message: string): AppError {
  return new AppError(Errors.rateLimited, message, { retryAfterSeconds: RETRY_AFTER_SECONDS });
}

export class ConcurrencyGate<S> {
  private readonly free: S[];
  private readonly runningPerKey = new Map<string, number>();
  private readonly waiting: Waiter<S>[] = [];

  constructor(
    slots: readonly S[],
    private readonly limits: GateLimits,
  ) {
    if (slots.length === 0) throw new Error('a concurrency gate needs at least one slot');
    this.free = [...slots];
  }

  /** Figures for metrics and tests. */
  stats(): { running: number; waiting: number } {
    let running = 0;
    for (const n of this.runningPerKey.values()) running += n;
    return { running, waiting: this.waiting.length };
  }

  /** A slot for `key`, now or after a short wait; refused with 429 when the queues are full. */
  acquire(key: string): Promise<Lease<S>> {
    const running = this.runningPerKey.get(key) ?? 0;
    const queuedForKey = this.waiting.filter((w) => w.key === key).length;
    // One running query per key: a second waits (or is refused), so one caller cannot take
    // every slot however many requests it sends.
    if (running === 0 && queuedForKey === 0 && this.free.length > 0) return Promise.resolve(this.lease(key));
    if (running + queuedForKey >= 1 + this.limits.queuePerKey) {
      return Promise.reject(busy(`this key already has ${running + queuedForKey} SQL queries running or waiting; at most ${1 + this.limits.queuePerKey} at a time: wait for one to finish`));
    }
    if (this.waiting.length >= this.limits.queueTotal) {
      return Promise.reject(busy('the SQL interface is busy with other queries: try again shortly'));
    }
    return new Promise<Lease<S>>((resolve, reject) => {
      const waiter: Waiter<S> = {
        key,
        resolve,
        reject,
        timer: setTimeout(() => {
          const i = this.waiting.indexOf(waiter);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(busy(`no SQL session became free within ${Math.round(this.limits.maxWaitMs / 1000)} s: try again shortly`));
        }, this.limits.maxWaitMs),
      };
      this.waiting.push(waiter);
    });
  }

  private lease(key: string): Lease<S> {
    const slot = this.free.pop()!;
    this.runningPerKey.set(key, (this.runningPerKey.get(key) ?? 0) + 1);
    let released = false;
    return {
      slot,
      release: () => {
        if (released) return;
        released = true;
        const n = (this.runningPerKey.get(key) ?? 1) - 1;
        if (n <= 0) this.runningPerKey.delete(key);
        else this.runningPerKey.set(key, n);
        this.free.push(slot);
        this.dispatch();
      },
    };
  }

  /** Hand free slots to the oldest waiters whose key has nothing running. */
  private dispatch(): void {
    for (let i = 0; i < this.waiting.length && this.free.length > 0; ) {
      const w = this.waiting[i]!;
      if ((this.runningPerKey.get(w.key) ?? 0) > 0) {
        i += 1;
        continue;
      }
      this.waiting.splice(i, 1);
      clearTimeout(w.timer);
      w.resolve(this.lease(w.key));
    }
  }
}
