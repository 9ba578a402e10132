// Resumable live streams (issue 26): every event of /graphql/stream carries an id that orders
// it (slot-based), as its SSE `id:` and as extensions.eventId; a client that reconnects with
// Last-Event-ID is sent exactly what it missed within the replay window, then the live stream,
// with no duplicates; one that comes back after the window (or with an id this server never
// made) is told what was lost, then gets the live stream: in a `next` event's extensions.gap
// (issue 38: what graphql-sse's client accepts), or with ?gap=event in an event `gap`. On a
// real HTTP server and the real engine.
import type net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../api/server/app.ts';
import type { Services } from '../../api/server/services.ts';
import { adminHeaders, createKey } from '../support/api-key.ts';
import { FIXTURE_START, ingest } from '../support/fixtures.ts';
import { liveRecord, parseSse, type SseEvent } from '../support/live-records.ts';
import { startServices } from '../support/services.ts';
import type { IngestRecord } from '../../ingest/record-schema.ts';

const QUERY = 'subscription { protocolActivity { protocolName timestamp count } }';

interface Server {
  services: Services & { cleanup(): Promise<void> };
  app: FastifyInstance;
  base: string;
  key: string;
  active: { protocolName: string; programId: string }[];
}

async function server(env: Record<string, string> = {}, now?: () => number): Promise<Server> {
  const services = await startServices(env, { now });
  const app = await buildApp(services, { streamLimits: { heartbeatMs: 200, closeGraceMs: 2000 } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as net.AddressInfo).port}`;
  const { key } = await createKey(app, 'enterprise', 'resume');
  const active = (await services.registry.list()).filter((p) => p.active);
  return { services, app, base, key, active };
}

/** An open stream: its events as they arrive (heartbeats aside). */
interface Reader {
  status: number;
  events: SseEvent[];
  /** Resolves once `n` events have arrived. */
  until(n: number): Promise<void>;
  close(): void;
}

async function open(s: Server, lastEventId?: string, key = s.key, search = ''): Promise<Reader> {
  const ctrl = new AbortController();
  const res = await fetch(`${s.base}/graphql/stream${search}`, {
    method: 'POST',
    headers: {
      'x-api-key': key,
      accept: 'text/event-stream',
      'content-type': 'application/json',
      ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
    },
    body: JSON.stringify({ query: QUERY }),
    signal: ctrl.signal,
  });
  const events: SseEvent[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  if (res.status === 200) {
    void (async () => {
      const decoder = new TextDecoder();
      let buf = '';
      try {
        for await (const chunk of res.body!) {
          const parsed = parseSse(buf + decoder.decode(chunk as Uint8Array, { stream: true }));
          buf = parsed.rest;
          events.push(...parsed.events);
          for (const w of [...waiters])
            if (events.length >= w.n) {
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve();
            }
        }
      } catch {
        /* aborted */
      }
    })();
  } else await res.text();
  return {
    status: res.status,
    events,
    until: (n) => (events.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }))),
    close: () => ctrl.abort(),
  };
}

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 10));
}

const activity = (e: SseEvent) =>
  (JSON.parse(e.data) as { data: { protocolActivity: { protocolName: string; timestamp: number; count: number } } }).data.protocolActivity;
const seqOf = (id: string | undefined) => Number(String(id).split('-')[1]);
/** A reconnect's gap as sent by default: a `next` event without data, the gap in extensions.gap and its id in extensions.eventId. */
function gapOf(e: SseEvent): Record<string, unknown> & { resumeAfterId: string } {
  expect(e.event, e.data).toBe('next');
  const payload = JSON.parse(e.data) as {
    data?: unknown;
    errors?: unknown;
    extensions: { gap: Record<string, unknown> & { resumeAfterId: string }; eventId: string };
  };
  expect(payload.data).toBeUndefined();
  expect(payload.errors).toBeUndefined();
  expect(payload.extensions.eventId).toBe(payload.extensions.gap.resumeAfterId);
  expect(e.id).toBe(payload.extensions.gap.resumeAfterId);
  return payload.extensions.gap;
}

/** Records of `n` writes' worth: write w puts `per` records in each of two hours of two protocols. */
function batch(s: Server, w: number, per: number, slot0: number): IngestRecord[] {
  const out: IngestRecord[] = [];
  for (const p of s.active.slice(0, 2)) {
    for (const h of [w, w + 1])
      for (let i = 0; i < per; i++) out.push({ ...liveRecord(p, FIXTURE_START + h * 3600 + i, slot0 + out.length), slot: slot0 + out.length });
  }
  return out;
}

/** Ingest a write and wait until its events were made and handed out. */
async function write(s: Server, records: IngestRecord[]): Promise<void> {
  const report = await ingest(s.services, records);
  expect(report.rejected).toEqual([]);
  await s.services.live.idle();
}

describe('a subscriber that disconnects and reconnects with Last-Event-ID', () => {
  let s: Server;
  beforeAll(async () => {
    s = await server();
  });
  afterAll(async () => {
    await s?.app.close();
    await s?.services.cleanup();
  });

  it('receives exactly what it missed, then the live stream: every record counted once, the same events as a subscriber that never left', async () => {
    const control = await open(s);
    const sub = await open(s);
    expect(sub.status).toBe(200);
    // Expected figures, counted independently: records per (protocol, hour).
    const counts = new Map<string, number>();
    const writes: IngestRecord[][] = [];
    for (let w = 0; w < 5; w++) writes.push(batch(s, w * 2, 3 + w, 400_000_000 + w * 1000));
    const add = (records: IngestRecord[]) => {
      for (const r of records) {
        const k = `${r.protocol_name}#${r.block_time - (r.block_time % 3600)}`;
        counts.set(k, (counts.get(k) ?? 0) + 1);
      }
    };
    // Each write changes 4 buckets: 4 events.
    await write(s, writes[0]!);
    add(writes[0]!);
    await sub.until(4);
    sub.close();
    const before = [...sub.events];
    const last = before.at(-1)!.id!;
    // Missed while away: two writes.
    await write(s, writes[1]!);
    add(writes[1]!);
    await write(s, writes[2]!);
    add(writes[2]!);
    const back = await open(s, last);
    expect(back.status).toBe(200);
    await back.until(8);
    // Then live.
    await write(s, writes[3]!);
    add(writes[3]!);
    await write(s, writes[4]!);
    add(writes[4]!);
    await back.until(16);
    await control.until(20);
    back.close();
    control.close();

    const seen = [...before, ...back.events];
    expect(seen.every((e) => e.event === 'next')).toBe(true);
    // The id in the payload too, for clients that drop `id:` lines (graphql-sse's).
    for (const e of seen) expect(JSON.parse(e.data).extensions.eventId).toBe(e.id);
    // Ids order the events, strictly: nothing twice, nothing out of order.
    const seqs = seen.map((e) => seqOf(e.id));
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1]!);
    // Exactly what a subscriber that never left received, event for event (extensions.freshness
    // is as of sending, so a replayed event carries the newer figure).
    const payload = (e: SseEvent) => [e.id, JSON.parse(e.data).data];
    expect(seen.map(payload)).toEqual(control.events.slice(0, seen.length).map(payload));
    expect(seen.length).toBe(control.events.length);
    // Every record counted exactly once: each bucket's last event has its records' count.
    const latest = new Map<string, number>();
    for (const e of seen) {
      const a = activity(e);
      latest.set(`${a.protocolName}#${a.timestamp}`, a.count);
    }
    expect(Object.fromEntries(latest)).toEqual(Object.fromEntries(counts));
    // Slot-based: an event's id starts with the newest slot seen when it was made.
    const lastSlot = Number(seen.at(-1)!.id!.split('-')[0]);
    expect(lastSlot).toBe(Math.max(...writes[4]!.map((r) => Number(r.slot))));
  });

  it('an id this server never made gets its gap (in extensions.gap, or as an event gap when asked), then the live stream; a malformed one is 400', async () => {
    const future = `1-${Number.MAX_SAFE_INTEGER - 1}`;
    const r = await open(s, future);
    const asEvent = await open(s, future, s.key, '?gap=event');
    expect([r.status, asEvent.status]).toEqual([200, 200]);
    await r.until(1);
    const gap = gapOf(r.events[0]!);
    expect(gap).toMatchObject({ lastEventId: future, reason: 'unknown' });
    // The form of before, for a client that asks for it (an EventSource listening for 'gap').
    await asEvent.until(1);
    expect(asEvent.events[0]!.event).toBe('gap');
    expect(JSON.parse(asEvent.events[0]!.data)).toEqual(gap);
    expect(asEvent.events[0]!.id).toBe(gap.resumeAfterId);
    await write(s, batch(s, 40, 1, 500_000_000));
    await r.until(5);
    await asEvent.until(5);
    for (const reader of [r, asEvent]) {
      expect(reader.events.slice(1).every((e) => e.event === 'next' && seqOf(e.id) > seqOf(gap.resumeAfterId))).toBe(true);
      reader.close();
    }
    for (const bad of ['x', '12', '-1-2', '1-2-3', `1-${'9'.repeat(30)}`, 'a'.repeat(100)]) {
      const res = await open(s, bad);
      expect(res.status, bad).toBe(400);
    }
    for (const bad of ['?gap=events', '?gap=', '?gap=event&gap=event']) expect((await open(s, future, s.key, bad)).status, bad).toBe(400);
  });
});

describe('a replay after a protocol was deactivated', () => {
  let s: Server;
  beforeAll(async () => {
    s = await server();
  });
  afterAll(async () => {
    await s?.app.close();
    await s?.services.cleanup();
  });

  it('sends none of its events, though they were made while it was active: replay hides what the live stream and every door hide', async () => {
    const [hidden, shown] = s.active;
    const sub = await open(s);
    await write(s, batch(s, 0, 1, 700_000_000));
    await sub.until(4);
    sub.close();
    const last = sub.events.at(-1)!.id!;
    // Missed while away: two hours of each protocol, then the operator deactivates one.
    await write(s, batch(s, 2, 2, 700_001_000));
    const patch = await s.app.inject({ method: 'PATCH', url: `/admin/protocols/${hidden!.protocolName}`, headers: adminHeaders(), payload: { active: false } });
    expect(patch.statusCode).toBe(200);
    const back = await open(s, last);
    expect(back.status).toBe(200);
    // Then live: the deactivated protocol's records are stored, and not sent.
    await write(s, batch(s, 4, 1, 700_002_000));
    const liveHour = FIXTURE_START + 4 * 3600;
    await back.until(1);
    await until(() => back.events.some((e) => activity(e).timestamp === liveHour));
    back.close();
    const got = back.events.map(activity);
    expect(got.map((a) => a.protocolName)).toEqual(Array(got.length).fill(shown!.protocolName));
    // Exactly the shown protocol's: two replayed hours, then the live write's two.
    expect(got.map((a) => a.timestamp)).toEqual([2, 3, 4, 5].map((h) => FIXTURE_START + h * 3600));
  });
});

describe('what a replay costs a free key', () => {
  // The rate-limit windows' clock stands still: the test's figures never straddle two windows.
  const minute = Date.UTC(2031, 0, 1);
  let now = minute;
  let s: Server;
  beforeAll(async () => {
    s = await server({}, () => now);
  });
  afterAll(async () => {
    await s?.app.close();
    await s?.services.cleanup();
  });

  it('one request per 100 events replayed; with its rate spent the replay ends RATE_LIMITED naming the id to resume from, and resuming there sends the rest', async () => {
    const free = await createKey(s.app, 'free', 'replay');
    const units = async () => 100 - (await s.services.access.limiter.peek(`key:${free.id}`, 100)).remaining;
    const first = await open(s, undefined, free.key);
    await write(s, batch(s, 0, 1, 800_000_000));
    await first.until(4);
    first.close();
    const from = first.events.at(-1)!.id!;
    // Missed while away: 1,000 buckets (500 hours of two protocols), one event each.
    const records = s.active
      .slice(0, 2)
      .flatMap((p, j) => Array.from({ length: 500 }, (_, i) => ({ ...liveRecord(p, FIXTURE_START + (10 + i) * 3600, i), slot: 800_001_000 + j * 500 + i })));
    await write(s, records);
    const spentBefore = await units();
    const back = await open(s, from, free.key);
    await back.until(1000);
    back.close();
    // Opening: 1; the replay: 10 blocks of 100.
    expect(await units()).toBe(spentBefore + 1 + 10);
    const ids = back.events.map((e) => e.id!);

    // The key has 3 requests left: opening takes one, the replay two blocks, then it ends.
    await s.services.access.limiter.consume(`key:${free.id}`, 100, 97 - (await units()));
    const cut = await open(s, from, free.key);
    expect(cut.status).toBe(200);
    await until(() => cut.events.at(-1)?.event === 'complete');
    const sent = cut.events.filter((e) => e.event === 'next' && e.id !== undefined);
    expect(sent.map((e) => e.id)).toEqual(ids.slice(0, 200));
    const error = JSON.parse(cut.events.at(-2)!.data) as { errors: { message: string; extensions: { code: string } }[] };
    expect(error.errors[0]!.extensions.code).toBe('RATE_LIMITED');
    expect(error.errors[0]!.message).toContain('Rate limit exceeded: 100 requests per minute for plan free');
    expect(error.errors[0]!.message).toContain(`Last-Event-ID: ${ids[199]}`);

    // The next minute: resuming from that id sends exactly the other 800.
    now += 60_000;
    const rest = await open(s, ids[199], free.key);
    await rest.until(800);
    rest.close();
    expect(rest.events.map((e) => e.id)).toEqual(ids.slice(200));
  });
});

describe('a subscriber that comes back after the replay window', () => {
  let s: Server;
  beforeAll(async () => {
    s = await server({ STREAM_REPLAY_WINDOW_SECONDS: '1' });
  });
  afterAll(async () => {
    await s?.app.close();
    await s?.services.cleanup();
  });

  it('is told what was lost, then gets only the live stream', async () => {
    const sub = await open(s);
    await write(s, batch(s, 0, 2, 600_000_000));
    await sub.until(4);
    sub.close();
    const last = sub.events.at(-1)!.id!;
    await write(s, batch(s, 2, 2, 600_001_000));
    // Past the window: the events after `last` are dropped as the next ones are made.
    await new Promise((r) => setTimeout(r, 1200));
    await write(s, batch(s, 4, 2, 600_002_000));
    const back = await open(s, last);
    await back.until(1);
    const gap = gapOf(back.events[0]!);
    expect(gap.reason).toBe('window');
    expect(gap.lastEventId).toBe(last);
    expect(seqOf(gap.lostThroughId as string)).toBeGreaterThan(seqOf(last));
    expect(gap.lostThroughSlot).toBeGreaterThanOrEqual(600_001_000);
    expect(gap.message).toMatch(/lost/);
    // Nothing replayed; the next write arrives live.
    await write(s, batch(s, 6, 2, 600_003_000));
    await back.until(5);
    expect(
      back.events
        .slice(1)
        .map((e) => activity(e).timestamp)
        .every((t) => t >= FIXTURE_START + 6 * 3600),
    ).toBe(true);
    back.close();
  });
});
