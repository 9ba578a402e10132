// Who gets an export worker (api/services/exports/export-scheduler.ts), without an engine: paid
// plans first, a worker kept for them, a key never holding more than its share, round-robin
// across the keys of a plan, and a running job giving its worker up at a chunk boundary only
// to a better claim (no ping-pong).
import { describe, expect, it } from 'vitest';
import { nextJob, planWorkers, shouldYield, type Schedulable } from '../../api/services/exports/export-scheduler.ts';
import { KeyTurns } from '../../api/services/sql/key-turns.ts';
import { loadConfig } from '../../core/config/load-config.ts';
import type { Plan } from '../../core/plans.ts';

let seq = 0;
const job = (owner: string, plan: Plan): Schedulable => ({ id: `j${++seq}`, seq, owner, plan });

describe('export scheduler', () => {
  it('keeps a worker for paid plans when there are two or more, and never leaves free jobs without one', () => {
    expect([1, 2, 4].map((w) => planWorkers('free', w))).toEqual([1, 1, 3]);
    expect([1, 2, 4].map((w) => planWorkers('x402', w))).toEqual([1, 2, 4]);
    const heavy = job('free-a', 'free');
    // Two workers, one free job running: another free key's job waits, a paid one starts.
    const otherFree = job('free-b', 'free');
    expect(nextJob([otherFree], [heavy], 2)).toBeUndefined();
    const paid = job('ent', 'enterprise');
    expect(nextJob([otherFree, paid], [heavy], 2)).toBe(paid);
  });

  it('starts higher plans first, then the key holding fewer workers, then the oldest', () => {
    const oldFree = job('f', 'free');
    const x402 = job('x', 'x402');
    const ent = job('e', 'enterprise');
    expect(nextJob([oldFree, x402, ent], [], 4)).toBe(ent);
    const busy = job('busy', 'enterprise');
    const idle = job('idle', 'enterprise');
    expect(nextJob([busy, idle], [job('busy', 'enterprise')], 4)).toBe(idle);
    expect(nextJob([busy, idle], [], 4)).toBe(busy);
    expect(nextJob([busy], [job('a', 'x402'), job('b', 'x402')], 2)).toBeUndefined();
  });

  it('yields a free job to a paid one with a single worker, and never the other way', () => {
    const free = job('f', 'free');
    const ent = job('e', 'enterprise');
    expect(shouldYield(free, [ent], [free], 1)).toBe(true);
    expect(shouldYield(ent, [free], [ent], 1)).toBe(false);
  });

  it('yields a worker of a key holding several to another key of the same plan, once: no back and forth', () => {
    const a1 = job('a', 'enterprise');
    const a2 = job('a', 'enterprise');
    const b = job('b', 'enterprise');
    expect(shouldYield(a2, [b], [a1, a2], 2)).toBe(true);
    // After the swap, a's queued job does not take the worker back from b.
    expect(shouldYield(b, [a2], [a1, b], 2)).toBe(false);
    expect(shouldYield(a1, [a2], [a1, b], 2)).toBe(false);
    // One job each: age alone never preempts.
    const c = job('c', 'enterprise');
    expect(shouldYield(b, [c], [a1, b], 2)).toBe(false);
  });
});

describe('export scheduler: round-robin across the keys of one plan', () => {
  /** Owners in the order their jobs start on `workers` workers, each job finishing before the next starts. */
  function startOrder(queued: Schedulable[], workers: number): string[] {
    const turns = new KeyTurns();
    const order: string[] = [];
    let waiting = [...queued];
    while (waiting.length > 0) {
      const next = nextJob(waiting, [], workers, turns)!;
      turns.took(next.owner);
      order.push(next.owner);
      waiting = waiting.filter((j) => j !== next);
    }
    return order;
  }

  it('a key with a queue gets one turn before another key of its plan waits for a second', () => {
    // a queued three jobs before b asked: oldest first started a, a, a, then b.
    const jobs = [job('a', 'x402'), job('a', 'x402'), job('a', 'x402'), job('b', 'x402')];
    expect(startOrder(jobs, 1)).toEqual(['a', 'b', 'a', 'a']);
  });

  it("six free keys' queued executions hold a seventh free key for one job's turn each at most", () => {
    const jobs: Schedulable[] = [];
    for (let round = 0; round < 3; round++) for (let k = 1; k <= 6; k++) jobs.push(job(`f${k}`, 'free'));
    jobs.push(job('f7', 'free'));
    const order = startOrder(jobs, 1);
    expect(order.indexOf('f7')).toBe(6);
    expect(new Set(order.slice(0, 7)).size).toBe(7);
  });

  it('plans and workers held still come before turns', () => {
    const turns = new KeyTurns();
    turns.took('e');
    const ent = job('e', 'enterprise');
    const free = job('f', 'free');
    expect(nextJob([free, ent], [], 2, turns)).toBe(ent);
    const busy = job('x', 'x402');
    const idle = job('y', 'x402');
    turns.took('y');
    // x holds a worker: y goes first although its turn is newer.
    expect(nextJob([busy, idle], [job('x', 'x402')], 4, turns)).toBe(idle);
  });
});

describe('export configuration', () => {
  it('takes the SQL time-out as the limit of each export statement, and refuses a longer one', () => {
    const base = { DATA_DIR: '/tmp/txa-config-test', ADMIN_TOKEN: 'x'.repeat(32) };
    expect(loadConfig(base).exports.statementTimeoutSeconds).toBe(30);
    expect(loadConfig({ ...base, SQL_TIMEOUT_SECONDS: '10' }).exports.statementTimeoutSeconds).toBe(10);
    expect(loadConfig({ ...base, EXPORT_STATEMENT_TIMEOUT_SECONDS: '5' }).exports.statementTimeoutSeconds).toBe(5);
    expect(() => loadConfig({ ...base, EXPORT_STATEMENT_TIMEOUT_SECONDS: '600' })).toThrow(
      /EXPORT_STATEMENT_TIMEOUT_SECONDS must be between 1 and 30, got 600/,
    );
    expect(loadConfig(base).exports.workers).toBe(2);
  });
});
