// A replay (a reconnect with Last-Event-ID) costs its key in proportion to what it sends, and
// goes at a pace that leaves the event loop to others (the security review's finding: one
// free-key request replayed 83,299 events, 24 MB; 32 replays from 16 free keys pushed another
// key's /health p99 to 1.45 s). The real hub, subscribe and LiveStream (test/support/
// live-harness.ts) with a charge of the test's own; counts only, no clock.
import { describe, expect, it } from 'vitest';
import { chargeKey, keyRefusal } from '../../api/doors/graphql/subscriptions/replay-meter.ts';
import { AppError, Errors } from '../../core/errors.ts';
import { STREAM_REPLAY_BYTES_PER_UNIT, STREAM_REPLAY_EVENTS_PER_TURN, STREAM_REPLAY_EVENTS_PER_UNIT } from '../../core/limits/streams.ts';
import type { ApiKeyRecord } from '../../warehouse/api-key-store.ts';
import { buckets, harness, openStream, turnsUntil, type Harness, type OpenStream } from '../support/live-harness.ts';

/** A hub whose log holds `n` events made after the returned id (a listener keeps them being made). */
async function logged(n: number): Promise<{ h: Harness; from: string; listener: OpenStream }> {
  const h = harness(['jupiter_v6']);
  const listener = await openStream(h, { record: false });
  const from = h.live.events.headId();
  h.live.dataChanged({ buckets: buckets('jupiter_v6', 0, n), newestBlockTimes: [], committedAt: 0 });
  await h.live.idle();
  await turnsUntil(() => listener.count === n);
  return { h, from, listener };
}

const ended = (s: OpenStream) => new Promise<void>((resolve) => (s.sink.writableFinished ? resolve() : s.sink.once('finish', resolve)));

describe('what a replay costs', () => {
  it('one request per block of 100 events, charged before the block; live events cost nothing', async () => {
    const { h, from, listener } = await logged(1000);
    const s = await openStream(h, { lastEventId: from });
    await turnsUntil(() => s.count === 1000);
    expect(s.meter.events).toBe(1000);
    expect(s.meter.units).toBe(1000 / STREAM_REPLAY_EVENTS_PER_UNIT);
    // Live from here: not charged.
    h.live.dataChanged({ buckets: buckets('jupiter_v6', 1, 500), newestBlockTimes: [], committedAt: 0 });
    await h.live.idle();
    await turnsUntil(() => s.count === 1500);
    expect(s.meter.units).toBe(1000 / STREAM_REPLAY_EVENTS_PER_UNIT);
    for (const o of [s, listener]) o.sink.destroy();
  });

  it('or one per 64 KiB of them when events are large (many long aliases)', async () => {
    const { h, from, listener } = await logged(1000);
    const aliases = Array.from({ length: 60 }, (_, i) => `${'a'.repeat(30)}${i}: count`).join(' ');
    const s = await openStream(h, { lastEventId: from, query: `subscription { protocolActivity { ${aliases} } }` });
    await turnsUntil(() => s.count === 1000);
    const largest = Math.max(...s.sent.map((e) => Buffer.byteLength(e.text)));
    expect(largest * STREAM_REPLAY_EVENTS_PER_UNIT).toBeGreaterThan(STREAM_REPLAY_BYTES_PER_UNIT);
    // Every block but the last holds at least 64 KiB, none more than 64 KiB plus one event.
    expect((s.meter.units - 1) * STREAM_REPLAY_BYTES_PER_UNIT).toBeLessThanOrEqual(s.meter.bytes);
    expect(s.meter.bytes).toBeLessThan(s.meter.units * (STREAM_REPLAY_BYTES_PER_UNIT + largest));
    expect(s.meter.units).toBeGreaterThan(1000 / STREAM_REPLAY_EVENTS_PER_UNIT);
    for (const o of [s, listener]) o.sink.destroy();
  });

  it("stops when the key's rate is spent: exactly the paid blocks, then RATE_LIMITED naming where to resume; resuming there sends the rest", async () => {
    const { h, from, listener } = await logged(1000);
    let units = 3;
    const s = await openStream(h, {
      lastEventId: from,
      charge: async () => {
        if (units-- <= 0) throw new AppError(Errors.rateLimited, 'Rate limit exceeded: 100 requests per minute for plan free; retry after 40 s');
      },
    });
    await ended(s);
    const next = s.sent.filter((e) => e.id !== undefined);
    expect(next.length).toBe(3 * STREAM_REPLAY_EVENTS_PER_UNIT);
    const error = JSON.parse(s.sent.at(-1)!.text.split('data: ')[1]!) as { errors: { message: string; extensions: { code: string } }[] };
    expect(error.errors[0]!.extensions.code).toBe('RATE_LIMITED');
    expect(error.errors[0]!.message).toContain('the replay stopped: Rate limit exceeded');
    expect(error.errors[0]!.message).toContain(`Last-Event-ID: ${next.at(-1)!.id}`);
    await turnsUntil(() => h.live.subscribers === 1);
    const rest = await openStream(h, { lastEventId: next.at(-1)!.id });
    await turnsUntil(() => rest.count === 700);
    const seq = (id: string | undefined) => Number(id!.split('-')[1]);
    expect(seq(rest.sent[0]!.id)).toBe(seq(next.at(-1)!.id) + 1);
    for (const o of [rest, listener]) o.sink.destroy();
  });

  it('obeys the key as it is at each charge: refused once revoked, inactive or its account disabled; charged at its current plan', async () => {
    const record = (over: Partial<ApiKeyRecord>): ApiKeyRecord => ({
      id: 'k1',
      keyPrefix: 'txa_',
      name: 'n',
      plan: 'free',
      status: 'active',
      createdAt: '',
      updatedAt: '',
      accountId: '',
      environment: '',
      accountDisabled: false,
      ...over,
    });
    expect(keyRefusal(record({}))).toBeUndefined();
    expect(keyRefusal(record({ status: 'revoked' }))).toBe('API key has been revoked');
    expect(keyRefusal(record({ status: 'inactive' }))).toBe('API key is inactive');
    expect(keyRefusal(record({ accountDisabled: true }))).toBe('API key belongs to a disabled account');
    expect(keyRefusal(undefined)).toBe('API key has been revoked');
    let now = record({});
    const charged: unknown[] = [];
    const req = { consumeRateLimitOf: async (key: unknown) => void charged.push(key) } as never;
    const charge = chargeKey(req, async () => now, 'secret');
    await charge();
    now = record({ plan: 'enterprise' });
    await charge();
    expect(charged).toEqual([
      { id: 'k1', plan: 'free' },
      { id: 'k1', plan: 'enterprise' },
    ]);
    now = record({ status: 'inactive' });
    await expect(charge()).rejects.toMatchObject({ kind: Errors.forbidden, message: 'API key is inactive' });
    // Through a stream: the replay ends with FORBIDDEN before any event of the refused block.
    const { h, from, listener } = await logged(300);
    let calls = 0;
    const s = await openStream(h, {
      lastEventId: from,
      charge: async () => {
        if (++calls > 1) await charge();
      },
    });
    await ended(s);
    expect(s.sent.filter((e) => e.id !== undefined).length).toBe(STREAM_REPLAY_EVENTS_PER_UNIT);
    expect(s.sent.at(-1)!.text).toContain('"code":"FORBIDDEN"');
    listener.sink.destroy();
  });
});

describe('the pace of replays', () => {
  it(`hands out at most ${STREAM_REPLAY_EVENTS_PER_TURN} replayed events per turn of the event loop, all streams together`, async () => {
    const { h, from, listener } = await logged(2000);
    const replays = await Promise.all(Array.from({ length: 8 }, () => openStream(h, { lastEventId: from, record: false })));
    const sent = () => replays.reduce((n, s) => n + s.count, 0);
    let most = 0;
    let turns = 0;
    // Measured from the first whole turn on: the streams took their first events as they opened.
    await new Promise((r) => setImmediate(r));
    const start = sent();
    let before = start;
    while (sent() < 8 * 2000) {
      await new Promise((r) => setImmediate(r));
      most = Math.max(most, sent() - before);
      // Streams take turns: none waits for the others to finish.
      if (replays.some((r) => r.count === 2000)) expect(Math.min(...replays.map((r) => r.count))).toBeGreaterThan(1000);
      before = sent();
      turns += 1;
    }
    // Before: each stream took its own 32 a turn (256 a turn for 8).
    expect(most).toBeLessThanOrEqual(STREAM_REPLAY_EVENTS_PER_TURN);
    expect(turns).toBeGreaterThanOrEqual((8 * 2000 - start) / STREAM_REPLAY_EVENTS_PER_TURN);
    for (const o of [...replays, listener]) o.sink.destroy();
  });
});
