// Who gets an export worker (api/exports/export-scheduler.ts), without an engine: paid
// plans first, a worker kept for them, a key never holding more than its share, and a
// running job giving its worker up at a chunk boundary only to a better claim (no ping-pong).
import { describe, expect, it } from 'vitest';
import { nextJob, planWorkers, shouldYield, type Schedulable } from '../api/exports/export-scheduler.ts';
import { loadConfig } from '../core/config.ts';
import type { Plan } from '../core/plans.ts';

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

describe('export configuration', () => {
  it('takes the SQL time-out as the limit of each export statement, and refuses a longer one', () => {
    const base = { DATA_DIR: '/tmp/txa-config-test', ADMIN_TOKEN: 'x'.repeat(32) };
    expect(loadConfig(base).exports.statementTimeoutSeconds).toBe(30);
    expect(loadConfig({ ...base, SQL_TIMEOUT_SECONDS: '10' }).exports.statementTimeoutSeconds).toBe(10);
    expect(loadConfig({ ...base, EXPORT_STATEMENT_TIMEOUT_SECONDS: '5' }).exports.statementTimeoutSeconds).toBe(5);
    expect(() => loadConfig({ ...base, EXPORT_STATEMENT_TIMEOUT_SECONDS: '600' })).toThrow(/EXPORT_STATEMENT_TIMEOUT_SECONDS must be between 1 and 30, got 600/);
    expect(loadConfig(base).exports.workers).toBe(2);
  });
});
