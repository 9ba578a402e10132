// Live GraphQL subscriptions over SSE (/graphql/stream, graphql-sse distinct connections),
// on the real engine and a real HTTP server, read by graphql-sse's own client and by raw
// sockets: buckets of records ingested after a stream opened arrive with the base table's
// figures; one read per write serves every stream; a revoked key's streams close within
// 1 s (through the key-change bus, and without it as another process's revocation);
// the per-key cap answers 429; a slow consumer is closed by an error event; 401 without a
// key; heartbeats. The hostile corpus is test/fixtures/hostile-graphql-stream.json.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { createClient, type Client, type ExecutionResult } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../api/server/app.ts';
import type { Services } from '../../api/server/services.ts';
import type { FastifyInstance } from 'fastify';
import { PLAN_STREAMS } from '../../core/plans.ts';
import { IngestPipeline } from '../../ingest/pipeline.ts';
import { DataVersion } from '../../warehouse/data-version.ts';
import { createLogger } from '../../core/logger.ts';
import { adminHeaders, createKey } from '../support/api-key.ts';
import { call, signUp } from '../support/dashboard-session.ts';
import { demoRecords, FIXTURE_END, ingest } from '../support/fixtures.ts';
import { liveRecord, parseSse, type SseEvent } from '../support/live-records.ts';
import { startServices } from '../support/services.ts';

const HEARTBEAT_MS = 200;
const MAX_QUEUED = 20;
const JOURNAL_POLL_MS = 300;

let services: Services & { cleanup(): Promise<void> };
let app: FastifyInstance;
let base: string;
let port: number;
let key: string;
let keyId: string;
let active: { protocolName: string; programId: string }[];
const clients: Client[] = [];

beforeAll(async () => {
  services = await startServices({ FRESHNESS_REFRESH_MS: String(JOURNAL_POLL_MS) });
  app = await buildApp(services, { streamLimits: { heartbeatMs: HEARTBEAT_MS, maxQueued: MAX_QUEUED, closeGraceMs: 5000 } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as net.AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  ({ key, id: keyId } = await createKey(app, 'enterprise', 'live'));
  const report = await ingest(services, await demoRecords(services, 300));
  expect(report.rejected).toEqual([]);
  active = (await services.registry.list()).filter((p) => p.active);
});
afterAll(async () => {
  for (const c of clients) c.dispose();
  await app?.close();
  await services?.cleanup();
});

function client(apiKey = key): Client {
  const c = createClient({ url: `${base}/graphql/stream`, headers: { 'x-api-key': apiKey }, retryAttempts: 0 });
  clients.push(c);
  return c;
}

interface Collected {
  results: ExecutionResult<Record<string, unknown>, Record<string, unknown>>[];
  done: Promise<{ error?: unknown; at: number }>;
  stop(): void;
}

function collect(c: Client, query: string, variables?: Record<string, unknown>): Collected {
  const results: Collected['results'] = [];
  let stop!: () => void;
  const done = new Promise<{ error?: unknown; at: number }>((resolve) => {
    stop = c.subscribe(
      { query, variables },
      {
        next: (r) => void results.push(r as Collected['results'][number]),
        error: (error) => resolve({ error, at: Date.now() }),
        complete: () => resolve({ at: Date.now() }),
      },
    );
  });
  return { results, done, stop };
}

async function until(cond: () => boolean | Promise<boolean>, ms = 5000, what = 'condition'): Promise<void> {
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The base table's figures of (protocol, bucket start) buckets. */
async function baseTable(size: 'hour' | 'day', keys: string[]): Promise<Map<string, Record<string, number>>> {
  const b = size === 'day' ? 'toUInt32(toStartOfDay(block_time))' : 'toUInt32(toStartOfHour(block_time))';
  const rows = await services.wh.query<{ k: string; n: string; ok: string; fees: string; cu: string }>(
    `SELECT concat(protocol_name, '#', toString(${b})) AS k, count() AS n, countIf(success) AS ok, sum(fee) AS fees, sum(compute_units) AS cu
     FROM transactions WHERE k IN {keys:Array(String)} GROUP BY k`,
    { params: { keys } },
  );
  return new Map(
    rows.map((r) => [
      r.k,
      { count: Number(r.n), successCount: Number(r.ok), failedCount: Number(r.n) - Number(r.ok), totalFees: Number(r.fees), totalComputeUnits: Number(r.cu) },
    ]),
  );
}

const EVENT_FIELDS = 'protocolName bucket timestamp bucketStart date hour count successCount failedCount totalFees totalComputeUnits';

interface Event {
  protocolName: string;
  bucket: string;
  timestamp: number;
  count: number;
  successCount: number;
  failedCount: number;
  totalFees: number;
  totalComputeUnits: number;
  hour: number | null;
  date: string;
  bucketStart: string;
}

/** The latest event per bucket key. */
function latest(results: Collected['results']): Map<string, Event> {
  const out = new Map<string, Event>();
  for (const r of results) {
    const e = r.data?.protocolActivity as Event | undefined;
    if (e) out.set(`${e.protocolName}#${e.timestamp}`, e);
  }
  return out;
}

describe('protocolActivity over /graphql/stream', () => {
  it('pushes the buckets of records ingested after it opened, with the base table figures, one read per write for every stream', async () => {
    const [p1, p2, p3] = active;
    const hourly = collect(client(), `subscription { protocolActivity(protocols: ["${p1!.protocolName}", "${p2!.protocolName}"]) { ${EVENT_FIELDS} } }`);
    const daily = collect(client(), `subscription($b: ActivityBucketSize) { protocolActivity(bucket: $b) { ${EVENT_FIELDS} } }`, { b: 'DAY' });
    const third = collect(client(), `subscription { protocolActivity(protocols: ["${p3!.protocolName}"]) { count } }`);
    await until(() => services.live.subscribers === 3, 5000, 'three subscribers');
    const readsBefore = services.live.reads;

    // Two hours of p1, one of p2, one of p3, and one hour of an inactive protocol (never sent).
    const h0 = FIXTURE_END + 10 * 3600;
    const hidden = (await services.registry.list()).find((p) => !p.active)!;
    const records = [
      ...Array.from({ length: 6 }, (_, i) => liveRecord(p1!, h0 + 60 * i, i)),
      ...Array.from({ length: 4 }, (_, i) => liveRecord(p1!, h0 + 3600 + 60 * i, i + 6)),
      ...Array.from({ length: 3 }, (_, i) => liveRecord(p2!, h0 + 120 * i, i + 10)),
      ...Array.from({ length: 2 }, (_, i) => liveRecord(p3!, h0 + 7200 + i, i + 13)),
      liveRecord(hidden, h0, 99),
    ];
    const report = await ingest(services, records);
    expect(report.accepted).toBe(records.length);
    await services.live.idle();
    // One write: one read of hour buckets and one of day buckets, whatever the number of streams.
    expect(services.live.reads - readsBefore).toBe(2);

    const hourKeys = [`${p1!.protocolName}#${h0}`, `${p1!.protocolName}#${h0 + 3600}`, `${p2!.protocolName}#${h0}`];
    await until(() => latest(hourly.results).size === 3, 5000, 'hourly events');
    const truthH = await baseTable('hour', hourKeys);
    const gotH = latest(hourly.results);
    expect([...gotH.keys()].sort()).toEqual([...hourKeys].sort());
    for (const k of hourKeys) {
      const e = gotH.get(k)!;
      expect(
        { count: e.count, successCount: e.successCount, failedCount: e.failedCount, totalFees: e.totalFees, totalComputeUnits: e.totalComputeUnits },
        k,
      ).toEqual(truthH.get(k));
      expect(e.bucket).toBe('HOUR');
      expect(e.bucketStart).toBe(new Date(e.timestamp * 1000).toISOString().replace('.000Z', 'Z'));
      expect(e.hour).toBe(new Date(e.timestamp * 1000).getUTCHours());
    }

    const day = h0 - (h0 % 86_400);
    const dayKeys = [p1!, p2!, p3!].map((p) => `${p.protocolName}#${day}`);
    await until(() => latest(daily.results).size === 3, 5000, 'daily events');
    const truthD = await baseTable('day', dayKeys);
    const gotD = latest(daily.results);
    expect([...gotD.keys()].sort()).toEqual([...dayKeys].sort());
    for (const k of dayKeys) {
      const e = gotD.get(k)!;
      expect(
        { count: e.count, successCount: e.successCount, failedCount: e.failedCount, totalFees: e.totalFees, totalComputeUnits: e.totalComputeUnits },
        k,
      ).toEqual(truthD.get(k));
      expect(e.bucket).toBe('DAY');
      expect(e.hour).toBeNull();
    }
    await until(() => third.results.length === 1, 5000, 'third stream');
    expect(third.results[0]!.data).toEqual({ protocolActivity: { count: 2 } });

    // Every event says how fresh the data is: this write's newest visible block_time.
    const newest = Math.max(...records.filter((r) => r.protocol_name !== hidden.protocolName).map((r) => r.block_time));
    for (const r of [...hourly.results, ...daily.results]) {
      expect((r.extensions as { freshness: { newestBlockTime: string } }).freshness.newestBlockTime).toBe(
        new Date(newest * 1000).toISOString().replace('.000Z', 'Z'),
      );
    }

    // A later write to a bucket sends its new totals.
    await ingest(services, [liveRecord(p2!, h0 + 5, 200)]);
    const k2 = `${p2!.protocolName}#${h0}`;
    await until(() => latest(hourly.results).get(k2)!.count === 4, 5000, 'updated bucket');
    expect(latest(hourly.results).get(k2)).toMatchObject((await baseTable('hour', [k2])).get(k2)!);

    for (const s of [hourly, daily, third]) s.stop();
    await until(() => services.live.subscribers === 0 && app.liveStreams.count() === 0, 5000, 'streams to close');
  });

  it('pushes writes of another process (the standalone ingest), learnt from the ingest journal', async () => {
    const p = active[1]!;
    const s = collect(
      client(),
      `subscription { protocolActivity(protocols: ["${p.protocolName}"]) { protocolName timestamp count successCount failedCount totalFees totalComputeUnits } }`,
    );
    await until(() => services.live.subscribers === 1, 5000, 'subscriber');
    // Let the tail take its starting position, as it does one period after the first subscriber.
    await new Promise((r) => setTimeout(r, 2 * JOURNAL_POLL_MS));
    const other = new IngestPipeline(services.wh, services.registry, new DataVersion(), createLogger('silent'), {
      maxRecordBytes: 1 << 20,
      batchRows: 5000,
      writerId: 'standalone-ingest',
    });
    const h = FIXTURE_END + 40 * 3600;
    const report = await other.ingest(
      Array.from({ length: 3 }, (_, i) => ({ value: liveRecord(p, h + i, i), position: { line: i + 1 } })),
      'kafka',
    );
    expect(report.accepted).toBe(3);
    await until(() => s.results.length > 0, 5000, 'event from the journal');
    const k = `${p.protocolName}#${h}`;
    expect(latest(s.results).get(k)).toMatchObject((await baseTable('hour', [k])).get(k)!);
    // Read once: later polls (whose look-back covers it again) do not send it twice.
    await new Promise((r) => setTimeout(r, 3 * JOURNAL_POLL_MS));
    expect(s.results.length).toBe(1);
    s.stop();
    await until(() => services.live.subscribers === 0, 5000, 'stream to close');
  });

  it('sends a write once however long nothing is ingested after it, though every journal read looks back over it', async () => {
    const [p, q] = active;
    const s = collect(client(), `subscription { protocolActivity(protocols: ["${p!.protocolName}", "${q!.protocolName}"]) { protocolName timestamp count } }`);
    await until(() => services.live.subscribers === 1, 5000, 'subscriber');
    const polls = vi.spyOn(services.live, 'pollJournal');
    const pollsPast = async (n: number) => {
      const target = polls.mock.calls.length + n;
      await until(() => polls.mock.calls.length >= target, 5000, `${n} journal polls`);
    };
    await pollsPast(2); // the tail's starting position
    // One write of this process (as POST /admin/ingest) and one of another (the standalone ingest).
    const h = FIXTURE_END + 60 * 3600;
    await ingest(services, [liveRecord(p!, h, 1)]);
    const other = new IngestPipeline(services.wh, services.registry, new DataVersion(), createLogger('silent'), {
      maxRecordBytes: 1 << 20,
      batchRows: 5000,
      writerId: 'standalone-ingest',
    });
    await other.ingest([{ value: liveRecord(q!, h, 2), position: { line: 1 } }], 'kafka');
    await until(() => latest(s.results).size === 2, 5000, 'both writes');
    await pollsPast(2);
    await services.live.idle();
    const sent = s.results.length;
    const reads = services.live.reads;
    const logged = services.live.events.size;
    // A minute of this process's clock with nothing ingested (the delivered ids were forgotten
    // 20 s after they were handled, and the next read sent the write again), two real polls of
    // the journal every 10 s of it.
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    try {
      for (let i = 0; i < 6; i++) {
        vi.setSystemTime(Date.now() + 10_000);
        await pollsPast(2);
      }
      await services.live.idle();
    } finally {
      vi.useRealTimers();
      polls.mockRestore();
    }
    expect(services.live.reads).toBe(reads);
    expect(services.live.events.size).toBe(logged);
    expect(s.results.length).toBe(sent);
    s.stop();
    await until(() => services.live.subscribers === 0, 5000, 'stream to close');
  });

  it("closes a revoked key's streams within 1 s: announced on the key-change bus, and unannounced (another process)", async () => {
    for (const announced of [true, false]) {
      const k = await createKey(app, 'enterprise', `revoked-${announced}`);
      const s = collect(client(k.key), 'subscription { protocolActivity { count } }');
      await until(() => app.liveStreams.count(k.id) === 1, 5000, 'stream open');
      const t0 = Date.now();
      if (announced) {
        const res = await app.inject({ method: 'POST', url: `/admin/keys/${k.id}/revoke`, headers: adminHeaders() });
        expect(res.statusCode).toBe(200);
      } else {
        // Straight to the store, no announcement: as a revocation through another API process without Redis.
        await services.access.keys.update(k.id, { status: 'revoked' });
      }
      const end = await s.done;
      expect(end.at - t0, `announced: ${announced}`).toBeLessThan(1000);
      const last = s.results.at(-1)!;
      expect(last.errors?.[0]?.message).toBe('API key has been revoked');
      expect((last.errors![0] as { extensions?: { code?: string } }).extensions?.code).toBe('FORBIDDEN');
      await until(() => app.liveStreams.count(k.id) === 0, 2000, 'slot released');
      // And the key can open no new stream.
      const again = await fetch(`${base}/graphql/stream`, {
        method: 'POST',
        headers: { 'x-api-key': k.key, accept: 'text/event-stream', 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'subscription { protocolActivity { count } }' }),
      });
      expect(again.status).toBe(403);
    }
  });

  it('answers 401 without a key, 403 with a bad one, 406 without an event-stream accept, before any stream starts', async () => {
    const body = JSON.stringify({ query: 'subscription { protocolActivity { count } }' });
    const post = (headers: Record<string, string>) =>
      fetch(`${base}/graphql/stream`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    const none = await post({ accept: 'text/event-stream' });
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: 'Unauthorized' });
    expect(none.headers.get('x-ratelimit-limit')).not.toBeNull();
    expect(none.headers.get('x-request-id')).not.toBeNull();
    const bad = await post({ accept: 'text/event-stream', 'x-api-key': 'not-a-key' });
    expect(bad.status).toBe(403);
    const json = await post({ accept: 'application/json', 'x-api-key': key });
    expect(json.status).toBe(406);
    expect(await json.json()).toMatchObject({ error: 'Not Acceptable' });
  });

  it('carries x-request-id, X-RateLimit-* and freshness headers on the stream, and sends heartbeats', async () => {
    const ctrl = new AbortController();
    const res = await fetch(
      `${base}/graphql/stream?api-key=${encodeURIComponent(key)}&query=${encodeURIComponent('subscription { protocolActivity { count } }')}`,
      {
        headers: { accept: 'text/event-stream' },
        signal: ctrl.signal,
      },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get('x-ratelimit-plan')).toBe('enterprise');
    expect(Number(res.headers.get('x-ratelimit-remaining'))).toBeGreaterThan(0);
    expect(res.headers.get('x-data-newest-block-time')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const reader = res.body!.getReader();
    let text = '';
    const t0 = Date.now();
    while (Date.now() - t0 < 5 * HEARTBEAT_MS) {
      const { value } = await reader.read();
      text += new TextDecoder().decode(value);
      if (parseSse(text).comments >= 3) break;
    }
    expect(parseSse(text).comments).toBeGreaterThanOrEqual(3);
    ctrl.abort();
    await until(() => app.liveStreams.count() === 0, 2000, 'stream to close');
  });

  it("refuses a stream over the plan's cap with 429 and its headers", async () => {
    const free = await createKey(app, 'free', 'cap');
    const cap = PLAN_STREAMS.free;
    const open = Array.from({ length: cap }, () => collect(client(free.key), 'subscription { protocolActivity { count } }'));
    await until(() => app.liveStreams.count(free.id) === cap, 5000, 'streams open');
    const over = await fetch(`${base}/graphql/stream`, {
      method: 'POST',
      headers: { 'x-api-key': free.key, accept: 'text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'subscription { protocolActivity { count } }' }),
    });
    expect(over.status).toBe(429);
    expect(((await over.json()) as { message: string }).message).toContain(`allows ${cap} open /graphql/stream connections`);
    expect(over.headers.get('x-ratelimit-plan')).toBe('free');
    expect(over.headers.get('x-request-id')).not.toBeNull();
    // Another key is not affected; closing one frees a slot.
    open[0]!.stop();
    await until(() => app.liveStreams.count(free.id) === cap - 1, 5000, 'slot freed');
    const again = collect(client(free.key), 'subscription { protocolActivity { count } }');
    await until(() => app.liveStreams.count(free.id) === cap, 5000, 'slot reused');
    for (const s of [...open, again]) s.stop();
    await until(() => app.liveStreams.count() === 0, 5000, 'streams to close');
  });

  it('closes a slow consumer with an error event once its queue is full', async () => {
    const p = active[0]!;
    // Long aliases make each event about 6 KB, so the socket's buffers fill with fewer events.
    const aliases = Array.from({ length: 60 }, (_, i) => `${'a'.repeat(90)}${i}: count`).join(' ');
    const query = `subscription { protocolActivity(protocols: ["${p.protocolName}"]) { ${aliases} } }`;
    const body = JSON.stringify({ query });
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write(
      `POST /graphql/stream HTTP/1.1\r\nhost: x\r\nx-api-key: ${key}\r\naccept: text/event-stream\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await until(() => services.live.subscribers === 1, 5000, 'subscriber');
    socket.pause(); // reads nothing from here on
    // Many hours of one protocol: one event per hour, far more bytes than the sockets hold.
    const start = FIXTURE_END + 100 * 86_400;
    for (let batch = 0; batch < 6 && services.live.subscribers > 0; batch++) {
      const records = Array.from({ length: 1000 }, (_, i) => liveRecord(p, start + (batch * 1000 + i) * 3600, i));
      await ingest(services, records);
      await services.live.idle();
    }
    expect(services.live.subscribers).toBe(0);
    // Reading again: the events sent so far, then the error event and complete, then the end.
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.resume();
    await new Promise((r) => socket.once('end', r));
    const events = parseSse(text.slice(text.indexOf('\r\n\r\n') + 4)).events;
    const last2 = events.slice(-2);
    expect(last2[1]).toEqual({ event: 'complete', data: '' } satisfies SseEvent);
    const err = JSON.parse(last2[0]!.data) as { errors: { message: string; extensions: { code: string } }[] };
    expect(err.errors[0]!.extensions.code).toBe('RATE_LIMITED');
    expect(err.errors[0]!.message).toContain(`the limit is ${MAX_QUEUED}`);
    expect(events.filter((e) => e.event === 'next').length).toBeGreaterThan(MAX_QUEUED);
    socket.destroy();
    await until(() => app.liveStreams.count() === 0, 5000, 'stream to close');
  });
});

describe('shutdown', () => {
  it('ends open streams with an error event so that closing the server does not wait for them', async () => {
    // A second app on the same services, so the file's app keeps serving.
    const other = await buildApp(services);
    await other.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(other.server.address() as net.AddressInfo).port}/graphql/stream`;
    const c = createClient({ url, headers: { 'x-api-key': key }, retryAttempts: 0 });
    clients.push(c);
    const s = collect(c, 'subscription { protocolActivity { count } }');
    await until(() => other.liveStreams.count() === 1, 5000, 'stream open');
    // Closing resolves at all: a stream left open would hold it (and the test) forever.
    await other.close();
    await s.done;
    const last = s.results.at(-1)!;
    expect((last.errors![0] as { extensions?: { code?: string } }).extensions?.code).toBe('INTERNAL_SERVER_ERROR');
    expect(last.errors?.[0]?.message).toContain('shutting down');
    await until(() => services.live.subscribers === 0, 2000, 'feed gone');
  });
});

interface StreamCase {
  name: string;
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Headers beyond x-api-key (a valid key unless `noKey`). */
  headers?: Record<string, string>;
  noKey?: boolean;
  /** JSON body (POST) or the raw body text (`rawBody`). */
  body?: unknown;
  rawBody?: string;
  /** Query-string parameters (GET). */
  params?: Record<string, string>;
  /**
   * A case staged around the request rather than one request answered:
   * client-gone: the client sends the request and closes the connection `abortAfterMs`
   * (each) later, before or while the stream starts: no stream, slot or subscriber remains.
   * account-disabled: the stream of a dashboard key is open when the operator disables its
   * account: the stream ends with an error event of `expect.code`, within 1 s.
   * replay: see `replay` below.
   */
  stage?: 'client-gone' | 'account-disabled' | 'replay';
  abortAfterMs?: number[];
  /**
   * The test's key streams `body` while one record is written in each of three hours of each of
   * `protocols`; then a free key made for the case resumes (`resumeBody`, else `body`) with the
   * id of the first event of `resumeAt` the first key received, after `deactivate` (if given)
   * was made inactive. It must be sent exactly the first key's later events of
   * `expectProtocols`, with their ids, then the live stream.
   */
  replay?: { protocols: string[]; resumeAt: string; deactivate?: string; resumeBody?: unknown; expectProtocols: string[] };
  expect: { status: number; code?: string; message?: string };
}

const CASES = (JSON.parse(readFileSync(new URL('../fixtures/hostile-graphql-stream.json', import.meta.url), 'utf8')) as { cases: StreamCase[] }).cases;

/** Send a stream request on a raw socket and close it `ms` later (0: at once). */
function hangUp(c: StreamCase, ms: number): Promise<void> {
  const body = JSON.stringify(c.body);
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.resume();
  return new Promise((resolve) =>
    socket.once('connect', () => {
      socket.write(
        `POST /graphql/stream HTTP/1.1\r\nhost: x\r\nx-api-key: ${key}\r\naccept: text/event-stream\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      setTimeout(() => {
        socket.destroy();
        resolve();
      }, ms);
    }),
  );
}

/** A stream read on a socket of its own (no pool: fetch's pool left idle sockets behind that
 *  held the server's close for the keep-alive time): its events with their ids, as they arrive. */
function rawStream(apiKey: string, body: unknown, lastEventId?: string): Promise<{ status: number; events: SseEvent[]; close(): void }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/graphql/stream',
        method: 'POST',
        agent: false,
        headers: {
          'x-api-key': apiKey,
          accept: 'text/event-stream',
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
        },
      },
      (res) => {
        const events: SseEvent[] = [];
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const parsed = parseSse(buf + chunk);
          buf = parsed.rest;
          events.push(...parsed.events);
        });
        res.on('error', () => undefined);
        resolve({ status: res.statusCode ?? 0, events, close: () => req.destroy() });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const activityOf = (e: SseEvent) => (JSON.parse(e.data) as { data: { protocolActivity: { protocolName: string; timestamp: number } } }).data.protocolActivity;

async function replayCase(c: StreamCase, index: number): Promise<void> {
  const r = c.replay!;
  const first = await rawStream(key, c.body);
  await until(() => services.live.subscribers === 1, 5000, 'first stream');
  const h0 = FIXTURE_END + (1000 + index * 10) * 3600;
  const records = r.protocols.flatMap((name, j) => [0, 1, 2].map((h) => liveRecord(active.find((p) => p.protocolName === name)!, h0 + h * 3600, 10 * j + h)));
  await ingest(services, records);
  await until(() => first.events.length === records.length, 5000, "the first key's events");
  const at = first.events.findIndex((e) => activityOf(e).protocolName === r.resumeAt);
  const expected = first.events.slice(at + 1).filter((e) => r.expectProtocols.includes(activityOf(e).protocolName));
  let second: Awaited<ReturnType<typeof rawStream>> | undefined;
  try {
    if (r.deactivate !== undefined) {
      const res = await app.inject({ method: 'PATCH', url: `/admin/protocols/${r.deactivate}`, headers: adminHeaders(), payload: { active: false } });
      expect(res.statusCode).toBe(200);
    }
    const other = await createKey(app, 'free', `replay-${index}`);
    second = await rawStream(other.key, r.resumeBody ?? c.body, first.events[at]!.id);
    expect(second.status).toBe(c.expect.status);
    // A live write follows: once it arrives, every replayed event has.
    const liveHour = h0 + 5 * 3600;
    await ingest(services, [liveRecord(active.find((p) => p.protocolName === r.expectProtocols[0])!, liveHour, 99)]);
    const s2 = second;
    await until(() => s2.events.some((e) => e.event === 'next' && activityOf(e).timestamp === liveHour), 5000, 'the live event');
    const replayed = s2.events.slice(
      0,
      s2.events.findIndex((e) => activityOf(e).timestamp === liveHour),
    );
    const shape = (e: SseEvent) => [e.event, e.id, JSON.parse(e.data).data];
    expect(replayed.map(shape)).toEqual(expected.map(shape));
    expect(s2.events.every((e) => r.expectProtocols.includes(activityOf(e).protocolName))).toBe(true);
  } finally {
    first.close();
    second?.close();
    if (r.deactivate !== undefined)
      await app.inject({ method: 'PATCH', url: `/admin/protocols/${r.deactivate}`, headers: adminHeaders(), payload: { active: true } });
  }
  await until(() => services.live.subscribers === 0, 5000, 'streams to close');
}

async function staged(c: StreamCase, index: number): Promise<void> {
  if (c.stage === 'replay') return replayCase(c, index);
  if (c.stage === 'client-gone') {
    for (const ms of c.abortAfterMs ?? [0]) await hangUp(c, ms);
    await until(() => app.liveStreams.count(keyId) === 0 && services.live.subscribers === 0, 3000, 'no stream left by clients gone');
    return;
  }
  const s = await signUp(app, `stream-${index}@example.com`);
  const made = await call(app, s, 'POST', '/dashboard/api/keys', { name: 'stream', environment: 'production' });
  const doc = c.body as { query: string; variables?: Record<string, unknown> };
  const stream = collect(client(made.json<{ key: string }>().key), doc.query, doc.variables);
  await until(() => services.live.subscribers === 1, 5000, 'stream open');
  const t0 = Date.now();
  const res = await app.inject({ method: 'PATCH', url: `/admin/accounts/${s.accountId}`, headers: adminHeaders(), payload: { status: 'disabled' } });
  expect(res.statusCode).toBe(200);
  const end = await Promise.race([stream.done, new Promise<undefined>((r) => setTimeout(r, 3000))]);
  stream.stop();
  expect(end, 'the stream ended').toBeDefined();
  expect(end!.at - t0).toBeLessThan(1000);
  const last = stream.results.at(-1)!;
  expect((last.errors![0] as { extensions?: { code?: string } }).extensions?.code).toBe(c.expect.code);
  if (c.expect.message) expect(last.errors?.[0]?.message).toContain(c.expect.message);
  await until(() => services.live.subscribers === 0, 2000, 'feed gone');
}

describe('hostile stream inputs (test/fixtures/hostile-graphql-stream.json)', () => {
  it.each(CASES.map((c, i) => [c.name, c, i] as const))('%s', async (_name, c, i) => {
    if (c.stage !== undefined) return staged(c, i);
    const method = c.method ?? 'POST';
    // "__KEY__" stands for the test's valid key (the key in the query string, as EventSource sends it).
    const params = c.params ? Object.fromEntries(Object.entries(c.params).map(([k, v]) => [k, v === '__KEY__' ? key : v])) : undefined;
    const qs = params ? `?${new URLSearchParams(params).toString()}` : '';
    const headers: Record<string, string> = { accept: 'text/event-stream', ...(c.noKey ? {} : { 'x-api-key': key }), ...c.headers };
    if (method === 'POST' && !('content-type' in headers)) headers['content-type'] = 'application/json';
    const res = await fetch(`${base}/graphql/stream${qs}`, {
      method,
      headers,
      body: method === 'GET' ? undefined : (c.rawBody ?? (c.body === undefined ? undefined : JSON.stringify(c.body))),
      signal: AbortSignal.timeout(5000),
    });
    expect(res.status).toBe(c.expect.status);
    const text = await res.text(); // every case ends its answer: none may leave a stream open
    expect(res.headers.get('x-request-id')).not.toBeNull();
    expect(res.headers.get('x-ratelimit-limit')).not.toBeNull();
    if (res.status === 200) {
      const events = parseSse(text).events;
      expect(events.map((e) => e.event)).toEqual(['next', 'complete']);
      const result = JSON.parse(events[0]!.data) as { data?: unknown; errors: { message: string; extensions: { code: string } }[] };
      expect(result.data).toBeUndefined();
      expect(result.errors.length).toBeGreaterThan(0);
      for (const e of result.errors) expect(e.extensions.code).toBe(c.expect.code ?? 'BAD_USER_INPUT');
      if (c.expect.message) expect(result.errors.map((e) => e.message).join('\n')).toContain(c.expect.message);
      // Nothing internal leaks.
      expect(text).not.toMatch(/at .*\.ts:\d+|node_modules|SELECT /);
    } else {
      const body = JSON.parse(text) as { error: string; message: string };
      expect(typeof body.message).toBe('string');
      if (c.expect.message) expect(body.message).toContain(c.expect.message);
    }
    expect(services.live.subscribers).toBe(0);
  });
});
