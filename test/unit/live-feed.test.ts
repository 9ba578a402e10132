// A live stream's feed hands out a write's thousands of events without holding the event
// loop: every STREAM_EVENTS_PER_TURN events the next waits for a turn of the loop, so I/O
// (other requests, /health) runs between (the security review's stream fan-out finding).
import { describe, expect, it } from 'vitest';
import { Feed } from '../../api/doors/graphql/subscriptions/feed.ts';
import type { BucketFigures } from '../../api/analytics/presets/activity-buckets.ts';
import { STREAM_EVENTS_PER_TURN } from '../../core/limits/streams.ts';

describe('a live feed draining a large write', () => {
  it('lets the event loop turn while a consumer takes thousands of queued events', async () => {
    const feed = new Feed({ protocols: undefined, size: 'hour', maxQueued: 10_000, onOverflow: () => {} }, () => {});
    const figures = Array.from({ length: 2000 }, (_, i) => ({
      id: `0-${i}`,
      seq: i,
      at: 0,
      figures: { protocolName: 'jupiter_v6', start: i * 3600 } as unknown as BucketFigures,
    }));
    feed.deliver(figures);
    let turns = 0;
    const ticker = setInterval(() => (turns += 1), 0);
    let taken = 0;
    for (;;) {
      const r = await feed.next();
      taken += 1;
      if (taken === figures.length) break;
      if (r.done === true) break;
    }
    clearInterval(ticker);
    expect(taken).toBe(figures.length);
    // Without the yield, the 2000 events resolve as one chain of microtasks and no timer runs.
    expect(turns).toBeGreaterThan(0);
    expect(STREAM_EVENTS_PER_TURN).toBeLessThan(figures.length);
  });
});
