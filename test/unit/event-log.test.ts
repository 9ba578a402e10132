// The replay log of /graphql/stream (api/doors/graphql/subscriptions/event-log.ts), on its own with
// a hand-moved clock: ids order events and carry the slot high-water mark; a reconnect gets
// exactly the events after its id; the window and the count bound drop the oldest, and an id
// before them, of an earlier process, or never made is answered with a gap naming the loss.
import { describe, expect, it } from 'vitest';
import type { BucketFigures } from '../../api/analytics/presets/activity-buckets.ts';
import { EventLog, parseEventId } from '../../api/doors/graphql/subscriptions/event-log.ts';
import { STREAM_EVENT_SEQ_PER_MS } from '../../core/limits/streams.ts';

const fig = (i: number, maxSlot: number): BucketFigures => ({
  protocolName: 'jupiter_v6',
  start: i * 3600,
  size: 'hour',
  count: i,
  successCount: i,
  failedCount: 0,
  totalFees: 0,
  totalComputeUnits: 0,
  maxSlot,
});

describe('the replay log', () => {
  it('orders ids by sequence with a slot mark that never goes back, and replays exactly what follows an id', () => {
    let now = 1_000_000;
    const log = new EventLog(60_000, 1000, () => now);
    const a = log.append([fig(1, 500), fig(2, 700)]);
    const b = log.append([fig(3, 600)]); // an older slot: the mark stays at 700
    expect(a.map((e) => e.id.split('-')[0])).toEqual(['500', '700']);
    expect(b[0]!.id.split('-')[0]).toBe('700');
    const seqs = [...a, ...b].map((e) => parseEventId(e.id).seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(seqs[0]).toBe(1_000_000 * STREAM_EVENT_SEQ_PER_MS);
    expect(log.since(a[0]!.id).events.map((e) => e.id)).toEqual([a[1]!.id, b[0]!.id]);
    expect(log.since(b[0]!.id).events).toEqual([]);
    now += 1;
    expect(log.headId()).toBe(b[0]!.id);
  });

  it('answers a gap past the window, naming the newest event lost and where the stream resumes', () => {
    let now = 5_000_000;
    const log = new EventLog(1000, 1000, () => now);
    const first = log.append([fig(1, 10)]);
    now += 500;
    const second = log.append([fig(2, 20)]);
    now += 800; // the first is past the window, the second not
    const r = log.since(first[0]!.id);
    expect(r.gap).toBeUndefined();
    expect(r.events.map((e) => e.id)).toEqual([second[0]!.id]);
    now += 800;
    const third = log.append([fig(3, 30)]);
    const late = log.since(first[0]!.id);
    expect(late.gap).toMatchObject({
      reason: 'window',
      lostThroughId: second[0]!.id,
      lostThroughSlot: 20,
      oldestAvailableId: third[0]!.id,
      resumeAfterId: third[0]!.id,
    });
    // Coming back from the newest lost event is no loss.
    expect(log.since(second[0]!.id).events.map((e) => e.id)).toEqual([third[0]!.id]);
  });

  it('keeps at most its bound of events', () => {
    const log = new EventLog(86_400_000, 3, () => 7_000_000);
    const made = log.append([1, 2, 3, 4, 5].map((i) => fig(i, i)));
    expect(log.size).toBe(3);
    expect(log.since(made[0]!.id).gap?.reason).toBe('window');
    expect(log.since(made[1]!.id).events.map((e) => e.id)).toEqual(made.slice(2).map((e) => e.id));
  });

  it('knows an id of an earlier process, and one it never made', () => {
    const earlier = new EventLog(60_000, 100, () => 1_000);
    const old = earlier.append([fig(1, 1)])[0]!.id;
    const log = new EventLog(60_000, 100, () => 2_000);
    expect(log.since(old).gap?.reason).toBe('restart');
    expect(log.since(`1-${2_000 * STREAM_EVENT_SEQ_PER_MS + 50}`).gap?.reason).toBe('unknown');
  });

  it('refuses ids that are not <slot>-<sequence>', () => {
    for (const bad of ['', 'x', '1', '1-', '-1', '1-2-3', '1.5-2', `1-${'9'.repeat(17)}`, `${'1'.repeat(60)}-1`]) {
      expect(() => parseEventId(bad), bad).toThrow(/Last-Event-ID/);
    }
  });
});
