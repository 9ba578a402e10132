// Who gets an export worker (docs/exports.md "Fair sharing"). Pure functions over the
// jobs, so the rules are tested without an engine (test/unit/export-scheduler.test.ts):
//  - a queued job's claim is, in order: its plan's priority (core/plans.ts
//    PLAN_PRIORITY, higher first), the workers its key already holds (fewer first), its
//    key's last turn (api/services/sql/key-turns.ts: older first, never first), its age (older first).
//    So within a plan workers go round-robin across keys: a key with a queue of jobs gets one
//    turn before any key of its plan gets its second;
//  - free jobs together take at most EXPORT_WORKERS minus EXPORT_WORKERS_RESERVED_FOR_PAID
//    workers (at least one), so a paid job never waits for a free one to finish;
//  - a running job yields its worker at a chunk boundary when a queued job's claim comes
//    strictly before its own (and that job could start): a key holding every worker gives
//    one up to another key's job, and with a single worker a free job gives it up to a paid one.
import { EXPORT_WORKERS_RESERVED_FOR_PAID, PLAN_PRIORITY, type Plan } from '../../../core/plans.ts';
import type { KeyTurns } from '../sql/key-turns.ts';

/** When each key last got a worker (KeyTurns); none known: every key as if it never had one. */
export type Turns = Pick<KeyTurns, 'of'>;
const NO_TURNS: Turns = { of: () => -1 };

/** What the scheduler reads of a job. */
export interface Schedulable {
  id: string;
  seq: number;
  owner: string;
  plan: Plan;
}

/** Workers the jobs of `plan` may hold together. */
export function planWorkers(plan: Plan, workers: number): number {
  return plan === 'free' ? Math.max(1, workers - EXPORT_WORKERS_RESERVED_FOR_PAID) : workers;
}

/** Negative when `a`'s claim comes first; `heldA`/`heldB`: workers each one's key holds (not counting the job itself). */
function compareClaims(a: Schedulable, heldA: number, b: Schedulable, heldB: number, turns: Turns): number {
  return PLAN_PRIORITY[b.plan] - PLAN_PRIORITY[a.plan] || heldA - heldB || turns.of(a.owner) - turns.of(b.owner) || a.seq - b.seq;
}

const heldBy = (running: readonly Schedulable[], owner: string, except?: string): number => running.filter((r) => r.owner === owner && r.id !== except).length;

/** The queued job to start on a free worker, or undefined (none, or none allowed one now). */
export function nextJob<T extends Schedulable>(queued: readonly T[], running: readonly Schedulable[], workers: number, turns: Turns = NO_TURNS): T | undefined {
  if (running.length >= workers) return undefined;
  return eligible(queued, running, workers).sort((a, b) => compareClaims(a, heldBy(running, a.owner), b, heldBy(running, b.owner), turns))[0];
}

/** Whether running `job` should give its worker to a queued job, at a chunk boundary. */
export function shouldYield(job: Schedulable, queued: readonly Schedulable[], running: readonly Schedulable[], workers: number): boolean {
  // The worker is free for the others once this job leaves it.
  const rest = running.filter((r) => r.id !== job.id);
  const mine = heldBy(running, job.owner, job.id);
  // Same priority: only a key holding fewer workers than this job's key would after the swap,
  // so two keys never take a worker back and forth. Age alone never preempts.
  return eligible(queued, rest, workers).some((q) => {
    const higher = PLAN_PRIORITY[q.plan] - PLAN_PRIORITY[job.plan];
    return higher > 0 || (higher === 0 && heldBy(rest, q.owner) < mine);
  });
}

/** Queued jobs whose plan has a worker left for it. */
function eligible<T extends Schedulable>(queued: readonly T[], running: readonly Schedulable[], workers: number): T[] {
  return queued.filter((q) => running.filter((r) => r.plan === q.plan).length < planWorkers(q.plan, workers));
}
