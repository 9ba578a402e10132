// The answer memory of each plan: bytes of answers that requests of the plan hold in this
// process while they are assembled and sent (core/plans.ts PLAN_ANSWER_MEMORY_BYTES). A
// request reserves what it builds and gives it back when its response has ended.
import type { AnswerMemory } from '../../../core/budget.ts';
import { PLAN_ANSWER_MEMORY_BYTES, type Plan } from '../../../core/plans.ts';

export class PlanAnswerMemory implements AnswerMemory {
  private readonly held = new Map<Plan, number>();

  constructor(private readonly limits: Readonly<Record<Plan, number>> = PLAN_ANSWER_MEMORY_BYTES) {}

  reserve(plan: Plan, bytes: number): boolean {
    const now = this.held.get(plan) ?? 0;
    // One answer larger than the whole pool still goes when nothing else is held: the door's
    // own byte budget bounds it, and refusing it would refuse it for ever.
    if (now > 0 && now + bytes > this.limits[plan]) return false;
    this.held.set(plan, now + bytes);
    return true;
  }

  release(plan: Plan, bytes: number): void {
    this.held.set(plan, Math.max(0, (this.held.get(plan) ?? 0) - bytes));
  }

  /** Bytes held now (tests, metrics). */
  heldBy(plan: Plan): number {
    return this.held.get(plan) ?? 0;
  }
}
