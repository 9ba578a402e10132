// Fixed one-minute windows aligned to the clock (DESIGN.md section 4): every counter
// resets at the start of each UTC minute, which is what X-RateLimit-Reset announces.
// The clock is injectable so tests can move to the next window without waiting.
import type { RateLimitStore } from './rate-limit-store.ts';
import { RATE_WINDOW_GRACE_MS } from '../../../core/limits/access.ts';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** Units left in this window after this request (never negative). */
  remaining: number;
  /** When the window ends, milliseconds since the epoch. */
  resetAt: number;
  /** Whole seconds until the window ends (at least 1), for Retry-After. */
  retryAfterSeconds: number;
}

export class FixedWindowLimiter {
  constructor(
    private readonly store: RateLimitStore,
    private readonly now: () => number = Date.now,
    readonly windowMs = 60_000,
  ) {}

  /** Count `units` against `subject`'s limit in the current window. */
  async consume(subject: string, limit: number, units = 1): Promise<RateDecision> {
    return this.decide(subject, limit, units);
  }

  /** The current window's figures for `subject` without counting anything (for headers,
   *  and for budgets spent only by failures); `allowed` says whether one more unit is. */
  async peek(subject: string, limit: number): Promise<RateDecision> {
    return this.decide(subject, limit, 0);
  }

  private async decide(subject: string, limit: number, units: number): Promise<RateDecision> {
    const now = this.now();
    const windowStart = Math.floor(now / this.windowMs) * this.windowMs;
    const resetAt = windowStart + this.windowMs;
    // The counter outlives its window a little so a slow request at the boundary still
    // finds it; the window start in the key keeps windows apart.
    const used = await this.store.increment(`${subject}:${windowStart}`, units, this.windowMs + RATE_WINDOW_GRACE_MS);
    return {
      allowed: units === 0 ? used < limit : used <= limit,
      limit,
      remaining: Math.max(0, limit - used),
      resetAt,
      retryAfterSeconds: Math.max(1, Math.ceil((resetAt - now) / 1000)),
    };
  }
}
