// Fair sharing of one engine session between plans. A chDB session runs its statements one
// at a time, in arrival order: twelve free-key batches of 10,000-record listings queued
// ahead of an enterprise key's getProtocolStats held it (and /health's SELECT 1) for
// seconds. Each plan may have only so many statements waiting in or running on the session
// at once (PLAN_SESSION_STATEMENTS); the rest wait here, in JavaScript, where a statement
// of another plan passes them. A statement of a plan within its share goes straight to the
// session, behind at most the few statements the other plans hold there.
import { PLAN_SESSION_STATEMENTS, type Plan } from '../core/plans.ts';

interface Waiter {
  resolve: (release: () => void) => void;
  timer: NodeJS.Timeout | undefined;
}

export class PlanLanes {
  private readonly inFlight = new Map<Plan, number>();
  private readonly waiting = new Map<Plan, Waiter[]>();

  constructor(private readonly caps: Readonly<Record<Plan, number>> = PLAN_SESSION_STATEMENTS) {}

  /** Statements of each plan on the session now, and waiting for it (for tests and metrics). */
  stats(plan: Plan): { inFlight: number; waiting: number } {
    return { inFlight: this.inFlight.get(plan) ?? 0, waiting: this.waiting.get(plan)?.length ?? 0 };
  }

  /**
   * Wait for the plan's turn; the returned function gives the place back (once). Resolves
   * undefined when `maxWaitMs` passes first (the caller's time budget ran out while waiting).
   */
  async enter(plan: Plan, maxWaitMs = Infinity): Promise<(() => void) | undefined> {
    if ((this.inFlight.get(plan) ?? 0) < this.caps[plan]) return this.take(plan);
    return new Promise((resolve) => {
      const queue = this.waiting.get(plan) ?? [];
      const waiter: Waiter = { resolve, timer: undefined };
      if (Number.isFinite(maxWaitMs)) {
        waiter.timer = setTimeout(
          () => {
            queue.splice(queue.indexOf(waiter), 1);
            resolve(undefined);
          },
          Math.max(0, maxWaitMs),
        );
      }
      queue.push(waiter);
      this.waiting.set(plan, queue);
    });
  }

  private take(plan: Plan): () => void {
    this.inFlight.set(plan, (this.inFlight.get(plan) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight.set(plan, (this.inFlight.get(plan) ?? 1) - 1);
      const next = this.waiting.get(plan)?.shift();
      if (next !== undefined) {
        clearTimeout(next.timer);
        next.resolve(this.take(plan));
      }
    };
  }
}
