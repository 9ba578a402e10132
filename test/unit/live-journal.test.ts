// The live hub's reads of the ingest journal send each batch once (the security review's
// finding: with nothing ingested, every ~24 s the last write's ~4,900 bucket events were sent
// again to every subscriber and appended to the replay log, until the log held nothing else).
// Each read looks back STREAM_JOURNAL_LOOKBACK_MS before the newest batch seen, so it returns
// the last batches again and again; the ids delivered were forgotten 4 look-backs after they
// were handled (process clock). Here the journal is a stand-in and only Date is faked: polls
// are called by hand, the clock moved by hand.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { FinishedBatch } from '../../warehouse/journal-reader.ts';
import type { JournalSource } from '../../api/doors/graphql/subscriptions/live-activity.ts';
import { DeliveredBatches } from '../../api/doors/graphql/subscriptions/delivered-batches.ts';
import { STREAM_JOURNAL_LOOKBACK_MS, STREAM_JOURNAL_UNSEEN_KEEP_MS } from '../../core/limits/streams.ts';
import { buckets, harness, openStream, turnsUntil } from '../support/live-harness.ts';

/** The journal as readFinishedBatches answers: the batches whose 'done' is at or after `since`. */
class Journal implements JournalSource {
  clockMs = 1_700_000_000_000;
  readonly batches: FinishedBatch[] = [];
  async clock(): Promise<number> {
    return this.clockMs;
  }
  async finishedSince(sinceMs: number): Promise<FinishedBatch[]> {
    return this.batches.filter((b) => b.at >= sinceMs).sort((a, b) => a.at - b.at);
  }
  done(batchId: string, b: FinishedBatch['buckets'], afterMs: number): void {
    this.batches.push({ batchId, at: this.clockMs + afterMs, buckets: b });
  }
  advance(ms: number): void {
    this.clockMs += ms;
    vi.setSystemTime(Date.now() + ms);
  }
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(1_700_000_000_000);
});
afterEach(() => vi.useRealTimers());

describe('a live stream with nothing ingested', () => {
  it('sends nothing again, and the replay log does not grow, across many journal polls after one write', async () => {
    const h = harness(['jupiter_v6', 'pump_amm']);
    const s = await openStream(h, { record: false });
    const journal = new Journal();
    await h.live.pollJournal(journal); // the tail's starting position
    // One write of this process (the operator's NDJSON ingest: told by its pipeline, its 'done'
    // row in the journal too) and one of another process (learnt from the journal only).
    const own = buckets('pump_amm', 0, 2450);
    h.live.dataChanged({ batchId: 'own-write', buckets: own, newestBlockTimes: [], committedAt: Date.now() });
    journal.done('own-write', own, 10);
    journal.done('other-process', buckets('jupiter_v6', 0, 2450), 20);
    journal.advance(1000);
    await h.live.pollJournal(journal);
    await h.live.idle();
    await turnsUntil(() => s.count === 4900);
    const reads = h.live.reads;
    expect(h.live.events.size).toBe(4900);
    // Quiet for 100 s of polls, every 2 s as FRESHNESS_REFRESH_MS polls (the re-send came every ~24 s).
    for (let i = 0; i < 50; i++) {
      journal.advance(2000);
      await h.live.pollJournal(journal);
      await h.live.idle();
    }
    await new Promise((r) => setImmediate(r));
    expect(h.live.reads).toBe(reads);
    expect(h.live.events.size).toBe(4900);
    expect(s.count).toBe(4900);
    // A new write after the quiet time is news.
    journal.done('later', buckets('jupiter_v6', 10, 3), 0);
    journal.advance(1000);
    await h.live.pollJournal(journal);
    await h.live.idle();
    await turnsUntil(() => s.count === 4903);
    expect(h.live.events.size).toBe(4903);
    s.sink.destroy();
  });
});

describe('the batches remembered as delivered', () => {
  it('are those a read can still return, plus own batches not yet read back, for a bounded time', () => {
    let now = 5_000_000;
    const d = new DeliveredBatches(() => now);
    // A batch a second for ten minutes, each read back once: only the last look-back's are kept.
    for (let i = 0; i < 600; i++) {
      expect(d.read(`b${i}`, now)).toBe(true);
      expect(d.read(`b${i}`, now)).toBe(false);
      d.prune(now - STREAM_JOURNAL_LOOKBACK_MS);
      now += 1000;
    }
    expect(d.size).toBeLessThanOrEqual(STREAM_JOURNAL_LOOKBACK_MS / 1000 + 1);
    // Told by the pipeline, not yet in the journal: kept (a read later is not news) ...
    d.told('own');
    d.prune(now);
    expect(d.read('own', now + 1)).toBe(false);
    // ... and one whose journal rows never come is forgotten after STREAM_JOURNAL_UNSEEN_KEEP_MS.
    d.told('lost');
    now += STREAM_JOURNAL_UNSEEN_KEEP_MS + 1;
    d.prune(now - STREAM_JOURNAL_LOOKBACK_MS);
    expect(d.size).toBe(0);
  });
});
