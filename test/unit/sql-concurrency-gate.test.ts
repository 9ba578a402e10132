// The SQL sandbox's admission rules, on the gate alone: one running query per key with a
// short queue behind it, a bounded queue in total, slots handed round-robin across keys (the
// waiter whose key's last turn is the oldest, then the oldest waiter) among those whose key has
// nothing running, and a 429 with Retry-After for everything past the queues.
import { describe, expect, it } from 'vitest';
import { AppError, Errors } from '../../core/errors.ts';
import { ConcurrencyGate } from '../../api/services/sql/concurrency-gate.ts';
import { KeyTurns } from '../../api/services/sql/key-turns.ts';

const refused = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => (e instanceof AppError ? { status: e.kind.http, retryAfter: e.retryAfterSeconds, message: e.message } : e),
  );

/** The order in which `asks` (key, group; asked in this order) are granted by a gate of one slot, each lease released once granted. */
async function grantOrder(gate: ConcurrencyGate<string>, asks: [key: string, group: string][]): Promise<string[]> {
  const order: string[] = [];
  const granted = new Set<number>();
  const leases = asks.map(([key, group], j) => gate.acquire(key, group).then((lease) => ({ j, key, lease })));
  while (granted.size < leases.length) {
    // One slot: exactly one pending lease is granted after each release.
    const next = await Promise.race(leases.filter((_l, j) => !granted.has(j)));
    granted.add(next.j);
    order.push(next.key);
    next.lease.release();
  }
  return order;
}

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

  it('hands a freed slot to a key that has not had a turn before a key that just had one', async () => {
    const gate = new ConcurrencyGate(['only'], { queuePerKey: 2, queueTotal: 10, maxWaitMs: 60_000 });
    // A's second query waited first, but A just had its turn: B's comes first (it was A, oldest first, before).
    expect(
      await grantOrder(gate, [
        ['A', ''],
        ['A', ''],
        ['B', ''],
      ]),
    ).toEqual(['A', 'B', 'A']);
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

describe('SQL concurrency gate: fair shares between plans', () => {
  const shares = {
    queuePerKey: 1,
    queueTotal: 10,
    maxWaitMs: 60_000,
    groupCap: (g: string, slots: number) => (g === 'free' ? Math.max(1, Math.floor(slots / 2)) : slots),
    groupPriority: (g: string) => (g === 'enterprise' ? 2 : g === 'x402' ? 1 : 0),
  };

  it('free keys together hold at most their share: a third free key waits while a session stays free, and an enterprise key takes it at once', async () => {
    const gate = new ConcurrencyGate(['s1', 's2'], shares);
    const f1 = await gate.acquire('F1', 'free');
    const f2 = gate.acquire('F2', 'free'); // another free key: the free share (1 of 2) is held
    expect(gate.stats()).toEqual({ running: 1, waiting: 1 });
    const e1 = await gate.acquire('E1', 'enterprise'); // no wait: the second session is kept for other plans
    expect(gate.stats()).toEqual({ running: 2, waiting: 1 });
    e1.release();
    // The freed session is not the free plan's to take while a free query runs.
    expect(gate.stats()).toEqual({ running: 1, waiting: 1 });
    f1.release();
    (await f2).release();
    expect(gate.stats()).toEqual({ running: 0, waiting: 0 });
  });

  it('a freed session goes to the waiter of the highest plan first, even if it came later', async () => {
    const gate = new ConcurrencyGate(['only'], shares);
    const e0 = await gate.acquire('E0', 'enterprise');
    const order: string[] = [];
    const f = gate.acquire('F', 'free').then((l) => {
      order.push('free');
      return l;
    });
    const x = gate.acquire('X', 'x402').then((l) => {
      order.push('x402');
      return l;
    });
    const e = gate.acquire('E', 'enterprise').then((l) => {
      order.push('enterprise');
      return l;
    });
    e0.release();
    (await e).release();
    (await x).release();
    (await f).release();
    expect(order).toEqual(['enterprise', 'x402', 'free']);
  });

  it('with a single session every plan still gets it in turn (a share is at least one)', async () => {
    const gate = new ConcurrencyGate(['only'], shares);
    const f = await gate.acquire('F', 'free');
    f.release();
    const e = await gate.acquire('E', 'enterprise');
    e.release();
    expect(gate.stats()).toEqual({ running: 0, waiting: 0 });
  });
});

describe('SQL concurrency gate: round-robin across the keys of one plan', () => {
  it("a key with a queue gets one turn before any key of its plan gets its second, whatever the queue's age", async () => {
    const gate = new ConcurrencyGate(['only'], { queuePerKey: 3, queueTotal: 20, maxWaitMs: 60_000, groupPriority: () => 0 });
    // A queued three before B and C asked: oldest first gave A, A, A, B, C (B waited three of A's turns).
    expect(
      await grantOrder(gate, [
        ['A', 'free'],
        ['A', 'free'],
        ['A', 'free'],
        ['B', 'free'],
        ['A', 'free'],
        ['C', 'free'],
      ]),
    ).toEqual(['A', 'B', 'C', 'A', 'A', 'A']);
    expect(gate.stats()).toEqual({ running: 0, waiting: 0 });
  });

  it("six free keys' queues hold a seventh free key for one turn each at most, and plans still come first", async () => {
    const shares = { queuePerKey: 3, queueTotal: 40, maxWaitMs: 60_000, groupPriority: (g: string) => (g === 'enterprise' ? 2 : 0) };
    const gate = new ConcurrencyGate(['only'], shares);
    const heavy: [string, string][] = [];
    for (let round = 0; round < 3; round++) for (let k = 1; k <= 6; k++) heavy.push([`F${k}`, 'free']);
    const order = await grantOrder(gate, [...heavy, ['F7', 'free'], ['E', 'enterprise']]);
    // The first heavy query took the free session at once; the enterprise one comes next, then
    // every free key once (F7 included) before any gets a second turn.
    expect(order.slice(0, 2)).toEqual(['F1', 'E']);
    expect(order.indexOf('F7')).toBeLessThanOrEqual(7);
    const firstTurns = order.slice(2, 8);
    expect(new Set(firstTurns).size).toBe(6);
    expect(firstTurns).toContain('F7');
  });

  it("remembers only keys that are busy or served after the oldest busy key's turn (bounded state)", async () => {
    const gate = new ConcurrencyGate(['only'], { queuePerKey: 1, queueTotal: 10, maxWaitMs: 60_000 });
    for (let i = 0; i < 50; i++) (await gate.acquire(`K${i}`)).release();
    expect((gate as unknown as { turns: KeyTurns }).turns.size()).toBe(0);
  });

  it('forgetting an idle key never moves it ahead of a key it did not come before', () => {
    const turns = new KeyTurns();
    turns.took('A');
    turns.took('B');
    turns.took('C');
    // B waits again; A and C are idle. A came before B: forgotten, it still comes before B.
    // C came after B: kept, so it cannot pass B.
    turns.forgetIdle(['B']);
    expect(turns.size()).toBe(2);
    expect(turns.of('A')).toBeLessThan(turns.of('B'));
    expect(turns.of('C')).toBeGreaterThan(turns.of('B'));
    turns.forgetIdle([]);
    expect(turns.size()).toBe(0);
  });
});

describe('SQL concurrency gate: a holder that never lets go', () => {
  it('gets its slot taken back after maxHoldMs, so a request stuck in JavaScript cannot keep a session for good', async () => {
    const gate = new ConcurrencyGate(['only'], { queuePerKey: 0, queueTotal: 10, maxWaitMs: 60_000, maxHoldMs: 50 });
    await gate.acquire('stuck'); // never released by its holder
    const next = await gate.acquire('B');
    expect(next.slot).toBe('only');
    next.release();
    expect(gate.stats()).toEqual({ running: 0, waiting: 0 });
  });
  // Issue 35 review: a cancelled MCP run_sql (or one whose request ended) waited out its turn
  // in the queue, then ran: its POST was answered and its in-flight slot freed meanwhile.
  it('a query given up (its signal aborted) leaves the queue at once, and one given up before never waits', async () => {
    const gate = new ConcurrencyGate(['only'], { queuePerKey: 2, queueTotal: 10, maxWaitMs: 60_000 });
    const held = await gate.acquire('A');
    const abort = new AbortController();
    const waiting = refused(gate.acquire('B', '', abort.signal, () => new AppError(Errors.queryTimeout, 'given up')));
    const behind = gate.acquire('C');
    expect(gate.stats()).toEqual({ running: 1, waiting: 2 });
    abort.abort();
    expect(await waiting).toMatchObject({ status: Errors.queryTimeout.http, message: 'given up' });
    expect(gate.stats()).toEqual({ running: 1, waiting: 1 });
    // The slot goes to the next waiter, not to the query given up.
    held.release();
    (await behind).release();
    expect(await refused(gate.acquire('D', '', abort.signal, () => new AppError(Errors.queryTimeout, 'given up')))).toMatchObject({ message: 'given up' });
    expect(gate.stats()).toEqual({ running: 0, waiting: 0 });
  });
});
