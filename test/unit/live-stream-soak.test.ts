// An open live stream keeps nothing it has sent (the security review's finding: every open
// stream retained each event it delivered, ~1.3 KB an event, until it closed; 32 streams and
// one 4,900-bucket write drove the heap out of memory). Streams are held open across many
// writes (tens of thousands of deliveries); the results delivered early must be collected
// while the streams are still open, and the heap, after a full collection, must not grow
// with the events sent. Counts and bytes only: nothing here depends on the clock.
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { buckets, harness, openStream, turnsUntil, type OpenStream } from '../support/live-harness.ts';

// A full collection on demand, without starting the worker with --expose-gc.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

async function collectedHeap(): Promise<number> {
  // A turn first: WeakRefs dereferenced in this job keep their targets until it ends.
  await new Promise((r) => setImmediate(r));
  gc();
  return process.memoryUsage().heapUsed;
}

const STREAMS = 8;
const WRITES = 10;
const PER_WRITE = 500;

describe('open live streams across many writes', () => {
  it('keep none of the events they sent: early events are collected while the streams stay open, and the heap stays flat', async () => {
    const h = harness(['jupiter_v6'], { maxEvents: 100 }); // a small replay log: it is not what is measured
    const streams: OpenStream[] = [];
    const early: WeakRef<object>[] = [];
    for (let s = 0; s < STREAMS; s++) {
      const o = await openStream(h, { record: false });
      o.tap.taken = (r) => void early.push(new WeakRef(r));
      streams.push(o);
    }
    const sent = () => streams.reduce((n, s) => n + s.count, 0);
    let heapBefore = 0;
    for (let w = 0; w < WRITES; w++) {
      h.live.dataChanged({ buckets: buckets('jupiter_v6', w, PER_WRITE), newestBlockTimes: [], committedAt: 0 });
      await h.live.idle();
      await turnsUntil(() => sent() === STREAMS * PER_WRITE * (w + 1));
      if (w === 1) {
        // Only the first two writes' results are tracked, so the tracking does not grow the heap measured.
        for (const s of streams) s.tap.on = false;
        heapBefore = await collectedHeap();
      }
    }
    const heapAfter = await collectedHeap();
    expect(sent()).toBe(STREAMS * PER_WRITE * WRITES);
    expect(h.live.subscribers).toBe(STREAMS);
    // Before the fix, every one of the 8,000 early results was still reachable here.
    expect(early.length).toBe(STREAMS * PER_WRITE * 2);
    expect(early.filter((r) => r.deref() !== undefined).length).toBe(0);
    // 32,000 deliveries since the first measure: about 860 bytes each were kept before the
    // fix (27 MB); allow 64 bytes a delivery for the collector's slack.
    const deliveries = STREAMS * PER_WRITE * (WRITES - 2);
    expect(heapAfter - heapBefore).toBeLessThan(64 * deliveries);
    for (const s of streams) s.sink.destroy();
    await turnsUntil(() => h.live.subscribers === 0);
  });
});
