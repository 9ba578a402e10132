// The SQL sandbox's admission rules, on the gate alone: one running query per key with a
// short queue behind it, a bounded queue in total, slots handed to the oldest waiter whose
// key has nothing running, and a 429 with Retry-After for everything past the queues.
import { describe, expect, it } from 'vitest';
import { AppError } from '../core/errors.ts';
import { ConcurrencyGate } from '../api/sql/concurrency-gate.ts';

const refused = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => (e instanceof AppError ? { status: e.kind.http, retryAfter: e.retryAfterSeconds, message: e.message } : e),
  );

describe('SQL concurrency gate', () => {
  it('runs one query per key; the next of that key waits, and past the per-key queue is refused with 429', async () => {
    const gate = new ConcurrencyGate(['s1', 's2'], { queuePerKey: 1, queueTotal: 10, maxWaitMs: 60_000 });
    const a1 = await gate.acquire('A');
    const a2 = gate.acquire('A'); // waits although a slot is free: one per key
    expect(gate.stats()).toEqual({ running: 1, waiting: 1 });
    const a3 = await refused(gate.acquire('A'));
    expect(a3).toMatchObject({ status: 429, retryAfter: 2 });
    // Another key still gets the free slot at once.
    const b1 = await gate.acquire('B');
    expect(gate.stats()).toEqual({ running: 2, waiting: 1 });
    a1.release();
    const lease = await a2;
    expect(['s1', 's2']).toContain(lease.slot);
    lease.release();
    b1.release();
    expect(gate.stats()).toEqual({ running: 0, waiting: 0 });
  });

  it('bounds the total queue: once every slot is busy and the queue is full, new keys get 429', async () => {
    const gate = new ConcurrencyGate(['only'], { queuePerKey: 2, queueTotal: 2, maxWaitMs: 60_000 });
    const a = await gate.acquire('A');
    const b = gate.acquire('B');
    const c = gate.acquire('C');
    expect(await refused(gate.acquire('D'))).toMatchObject({ status: 429, message: expect.stringMatching(/busy/) });
    a.release();
    (await b).release();
    (await c).release();
    expect(gate.stats()).toEqual({ running: 0, waiting: 0 });
  });

  it('hands a freed slot to the oldest waiter whose key has nothing running', async () => {
    const gate = new ConcurrencyGate(['only'], { queuePerKey: 2, queueTotal: 10, maxWaitMs: 60_000 });
    const a = await gate.acquire('A');
    const order: string[] = [];
    const a2 = gate.acquire('A').then((l) => (order.push('A'), l));
    const b = gate.acquire('B').then((l) => (order.push('B'), l));
    a.release();
    // A's second query waited first, but A's first just ended: both are eligible, oldest wins.
    (await a2).release();
    (await b).release();
    expect(order).toEqual(['A', 'B']);
  });

  it('tells a caller that waited too long to retry, and forgets it', async () => {
    const gate = new ConcurrencyGate(['only'], { queuePerKey: 2, queueTotal: 10, maxWaitMs: 50 });
    const a = await gate.acquire('A');
    expect(await refused(gate.acquire('B'))).toMatchObject({ status: 429, message: expect.stringMatching(/no SQL session became free/) });
    expect(gate.stats()).toEqual({ running: 1, waiting: 0 });
    a.release();
  });

  it('releases a slot once however often release is called', async () => {
    const gate = new ConcurrencyGate(['only'], { queuePerKey: 0, queueTotal: 0, maxWaitMs: 50 });
    const a = await gate.acquire('A');
    a.release();
    a.release();
    const b = await gate.acquire('B');
    expect(await refused(gate.acquire('C'))).toMatchObject({ status: 429 });
    b.release();
  });
});
