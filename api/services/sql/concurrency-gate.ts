// Bounded concurrency for client SQL: a fixed set of slots (one per sandbox engine session),
// one running query per key with a short queue behind it, and a short queue in total.
// Past either queue the caller is told to come back (429 + Retry-After) instead of piling
// up: a pile-up is how one caller stalls everyone. Slots are shared fairly between groups
// (plans): a group holds at most its share of the slots together, so heavy queries of many
// free keys leave a session for the other plans, and a freed slot goes to the waiter of the
// highest-priority group first. Within a group it goes round-robin across keys (key-turns.ts):
// to the waiter whose key's last turn is the oldest, then the oldest waiter, so a key with a
// queue never takes a second turn while another key of its plan waits for its first.
import { AppError, Errors } from '../../../core/errors.ts';
import { SQL_RETRY_AFTER_SECONDS } from '../../../core/limits/sql.ts';
import { KeyTurns } from './key-turns.ts';

export interface GateLimits {
  /** Queries of one key that may wait while one of its own runs. */
  queuePerKey: number;
  /** Queries that may wait for a slot in total. */
  queueTotal: number;
  /** Longest wait for a slot before the caller is told to retry (ms). */
  maxWaitMs: number;
  /** Most slots the leases of one group may hold together, given the number of slots (no cap when absent). */
  groupCap?: (group: string, slots: number) => number;
  /** Order between groups when a slot frees: higher first (all equal when absent). */
  groupPriority?: (group: string) => number;
  /**
   * Longest a lease may hold its slot: past it the slot is given back whatever its holder is
   * doing (every statement on it has stopped at its own engine time limit by then). A request
   * stuck in JavaScript must not keep a session from everyone for good (no limit when absent).
   */
  maxHoldMs?: number;
}

interface Waiter<S> {
  key: string;
  group: string;
  resolve: (lease: Lease<S>) => void;
  reject: (err: unknown) => void;
  timer: NodeJS.Timeout;
}

export interface Lease<S> {
  slot: S;
  release(): void;
}

export function busy(message: string): AppError {
  return new AppError(Errors.rateLimited, message, { retryAfterSeconds: SQL_RETRY_AFTER_SECONDS });
}

export class ConcurrencyGate<S> {
  private readonly free: S[];
  private readonly slots: number;
  private readonly runningPerKey = new Map<string, number>();
  private readonly runningPerGroup = new Map<string, number>();
  private readonly waiting: Waiter<S>[] = [];
  private readonly turns = new KeyTurns();

  constructor(
    slots: readonly S[],
    private readonly limits: GateLimits,
  ) {
    if (slots.length === 0) throw new Error('a concurrency gate needs at least one slot');
    this.free = [...slots];
    this.slots = slots.length;
  }

  /** Whether `group` may take one more slot now (its share not yet held). */
  private withinShare(group: string): boolean {
    const cap = this.limits.groupCap?.(group, this.slots) ?? this.slots;
    return (this.runningPerGroup.get(group) ?? 0) < Math.max(1, cap);
  }

  /** Figures for metrics and tests. */
  stats(): { running: number; waiting: number } {
    let running = 0;
    for (const n of this.runningPerKey.values()) running += n;
    return { running, waiting: this.waiting.length };
  }

  /**
   * A slot for `key` of `group`, now or after a short wait; refused with 429 when the queues are
   * full, and with `given up` (nothing held) once `signal` aborts, before or while it waits.
   */
  acquire(key: string, group = '', signal?: AbortSignal, givenUp?: () => AppError): Promise<Lease<S>> {
    if (signal?.aborted === true) return Promise.reject(givenUp?.() ?? busy('the query was given up before it ran'));
    const running = this.runningPerKey.get(key) ?? 0;
    const queuedForKey = this.waiting.filter((w) => w.key === key).length;
    // One running query per key: a second waits (or is refused), so one caller cannot take
    // every slot however many requests it sends. A group at its share waits too, however
    // many slots are free: those are the other groups'.
    // (No eligible waiter can be passed here: a freed slot goes to one at once.)
    if (running === 0 && queuedForKey === 0 && this.free.length > 0 && this.withinShare(group)) {
      return Promise.resolve(this.lease(key, group));
    }
    if (running + queuedForKey >= 1 + this.limits.queuePerKey) {
      return Promise.reject(
        busy(
          `this key already has ${running + queuedForKey} SQL queries running or waiting; at most ${1 + this.limits.queuePerKey} at a time: wait for one to finish`,
        ),
      );
    }
    if (this.waiting.length >= this.limits.queueTotal) {
      return Promise.reject(busy('the SQL interface is busy with other queries: try again shortly'));
    }
    return new Promise<Lease<S>>((resolve, reject) => {
      const leave = (err: AppError): void => {
        const i = this.waiting.indexOf(waiter);
        if (i < 0) return;
        this.waiting.splice(i, 1);
        clearTimeout(waiter.timer);
        signal?.removeEventListener('abort', onAbort);
        reject(err);
      };
      const onAbort = (): void => leave(givenUp?.() ?? busy('the query was given up before it ran'));
      const waiter: Waiter<S> = {
        key,
        group,
        resolve: (lease) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(lease);
        },
        reject,
        timer: setTimeout(
          () => leave(busy(`no SQL session became free within ${Math.round(this.limits.maxWaitMs / 1000)} s: try again shortly`)),
          this.limits.maxWaitMs,
        ),
      };
      this.waiting.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private lease(key: string, group: string): Lease<S> {
    const slot = this.free.pop()!;
    bump(this.runningPerKey, key, 1);
    bump(this.runningPerGroup, group, 1);
    this.turns.took(key);
    let released = false;
    const hold = this.limits.maxHoldMs === undefined ? undefined : setTimeout(() => release(), this.limits.maxHoldMs);
    hold?.unref();
    const release = (): void => {
      if (released) return;
      released = true;
      clearTimeout(hold);
      bump(this.runningPerKey, key, -1);
      bump(this.runningPerGroup, group, -1);
      this.free.push(slot);
      this.dispatch();
      this.turns.forgetIdle([...this.runningPerKey.keys(), ...this.waiting.map((w) => w.key)]);
    };
    return { slot, release };
  }

  private rank(group: string): number {
    return this.limits.groupPriority?.(group) ?? 0;
  }

  /** A waiter that could take a slot now: its key has nothing running and its group is within its share. */
  private eligible(w: Waiter<S>): boolean {
    return (this.runningPerKey.get(w.key) ?? 0) === 0 && this.withinShare(w.group);
  }

  /** Whether `w` comes before `best`: a higher group; in the same group, the key whose last turn is older
   *  (round-robin). Waiters are visited oldest first, so ties stay with the older. */
  private before(w: Waiter<S>, best: Waiter<S>): boolean {
    const rank = this.rank(w.group) - this.rank(best.group);
    return rank > 0 || (rank === 0 && this.turns.of(w.key) < this.turns.of(best.key));
  }

  /** Hand free slots to eligible waiters: the highest-priority group first, round-robin across keys within it. */
  private dispatch(): void {
    while (this.free.length > 0) {
      let best: Waiter<S> | undefined;
      for (const w of this.waiting) {
        if (this.eligible(w) && (best === undefined || this.before(w, best))) best = w;
      }
      if (best === undefined) return;
      this.waiting.splice(this.waiting.indexOf(best), 1);
      clearTimeout(best.timer);
      best.resolve(this.lease(best.key, best.group));
    }
  }
}

function bump(counts: Map<string, number>, name: string, by: number): void {
  const n = (counts.get(name) ?? 0) + by;
  if (n <= 0) counts.delete(name);
  else counts.set(name, n);
}
