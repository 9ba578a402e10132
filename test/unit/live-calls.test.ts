// A backfill call steps back further while live is behind (issue 40: live freshness beside a
// replay). Fake timers and a fake clock: what is asserted is the order of events, never speed.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LiveCalls } from '../../ingest/write-queue.ts';

const BOUNDS = { freshMs: 250, lagMs: 500, laggingMs: 5000 };

let clock = 0;
beforeEach(() => {
  vi.useFakeTimers();
  clock = 0;
});
afterEach(() => vi.useRealTimers());

/** A live call that is in hand until `finish` is called, `tookMs` by the fake clock. */
function liveCall(calls: LiveCalls, tookMs: number): { finish: () => void; done: Promise<void> } {
  let finish!: () => void;
  const held = new Promise<void>((r) => (finish = r));
  const done = calls.run('live', async () => {
    await held;
    clock += tookMs;
  });
  return { finish, done };
}

/** A live call that took `tookMs` by the fake clock, already stored. */
async function storedLiveCall(calls: LiveCalls, tookMs: number): Promise<void> {
  const call = liveCall(calls, tookMs);
  call.finish();
  await call.done;
}

/** Starts a backfill call; `started()` tells whether it has begun. */
function backfillCall(calls: LiveCalls): { started: () => boolean; done: Promise<void> } {
  let began = false;
  const done = calls.run('backfill', async () => {
    began = true;
  });
  return { started: () => began, done };
}

describe('a backfill call beside live calls', () => {
  it('starts at once when no live call is in hand', async () => {
    const calls = new LiveCalls(BOUNDS, () => clock);
    const b = backfillCall(calls);
    await vi.advanceTimersByTimeAsync(0);
    expect(b.started()).toBe(true);
  });

  it('waits for the live calls in hand, and starts as soon as they are stored', async () => {
    const calls = new LiveCalls(BOUNDS, () => clock);
    const live = liveCall(calls, 100);
    const b = backfillCall(calls);
    await vi.advanceTimersByTimeAsync(100);
    expect(b.started()).toBe(false);
    live.finish();
    await live.done;
    await vi.advanceTimersByTimeAsync(0);
    expect(b.started()).toBe(true);
  });

  it('while live keeps up, starts anyway after the short bound', async () => {
    const calls = new LiveCalls(BOUNDS, () => clock);
    await storedLiveCall(calls, 200);
    expect(calls.lagging).toBe(false);
    const busy = liveCall(calls, 0);
    const b = backfillCall(calls);
    await vi.advanceTimersByTimeAsync(BOUNDS.freshMs - 1);
    expect(b.started()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(b.started()).toBe(true);
    busy.finish();
  });

  it('while live is behind, waits up to the long bound, and still moves', async () => {
    const calls = new LiveCalls(BOUNDS, () => clock);
    await storedLiveCall(calls, BOUNDS.lagMs + 1);
    expect(calls.lagging).toBe(true);
    const busy = liveCall(calls, 0);
    const b = backfillCall(calls);
    await vi.advanceTimersByTimeAsync(BOUNDS.freshMs);
    expect(b.started()).toBe(false);
    await vi.advanceTimersByTimeAsync(BOUNDS.laggingMs - BOUNDS.freshMs);
    expect(b.started()).toBe(true);
    busy.finish();
  });

  it('while live is behind, waits for a fast live call even when none is in hand', async () => {
    const calls = new LiveCalls(BOUNDS, () => clock);
    await storedLiveCall(calls, BOUNDS.lagMs + 1);
    const b = backfillCall(calls);
    await vi.advanceTimersByTimeAsync(BOUNDS.freshMs);
    expect(b.started()).toBe(false);
    await storedLiveCall(calls, BOUNDS.lagMs);
    await vi.advanceTimersByTimeAsync(0);
    expect(calls.lagging).toBe(false);
    expect(b.started()).toBe(true);
  });

  it('forgets a slow live call once no live call came for the long bound', async () => {
    const calls = new LiveCalls(BOUNDS, () => clock);
    await storedLiveCall(calls, BOUNDS.lagMs + 1);
    expect(calls.lagging).toBe(true);
    clock += BOUNDS.laggingMs;
    expect(calls.lagging).toBe(false);
    const b = backfillCall(calls);
    await vi.advanceTimersByTimeAsync(0);
    expect(b.started()).toBe(true);
  });
});
