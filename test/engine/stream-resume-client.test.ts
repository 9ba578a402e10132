// Resuming a live stream from graphql-sse's own client, as docs/graphql-subscriptions.md
// documents it (issue 38, item 5): the recipe of "Resuming with graphql-sse's client" is
// imported from the page as written and run against a real server through a proxy that cuts
// the connection (a network blip): while it is away records land, and on its own reconnect the
// client sends the id it learnt from extensions.eventId and is replayed exactly what it missed;
// a client coming back with an id the server cannot replay from gets the gap in a form
// graphql-sse accepts, and goes on with the live stream.
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../api/server/app.ts';
import type { Services } from '../../api/server/services.ts';
import type { IngestRecord } from '../../ingest/record-schema.ts';
import { createKey } from '../support/api-key.ts';
import { docBlocks } from '../support/doc-examples.ts';
import { FIXTURE_START, ingest } from '../support/fixtures.ts';
import { liveRecord } from '../support/live-records.ts';
import { startServices } from '../support/services.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const QUERY = 'subscription { protocolActivity { protocolName timestamp count } }';

interface Activity {
  protocolName: string;
  timestamp: number;
  count: number;
}
interface Gap {
  reason: string;
  lastEventId: string;
  resumeAfterId: string;
  message: string;
}
interface Follower {
  done: Promise<void>;
  lastEventId(): string | undefined;
  stop(): void;
}
type Follow = (o: {
  url: string;
  apiKey: string;
  query: string;
  from?: string;
  onData(data: { protocolActivity: Activity }, eventId: string): void;
  onGap(gap: Gap): void;
}) => Follower;

/** What one follower received, in order, and how it ended if it did. */
interface Received {
  data: { id: string; activity: Activity }[];
  gaps: Gap[];
  error?: unknown;
  follower: Follower;
}

/**
 * A proxy between the client and the server that can cut every connection through it (as a
 * network failure would) and hold new ones until let through; it records each request's headers.
 */
class CuttingProxy {
  readonly requests: IncomingHttpHeaders[] = [];
  private readonly open = new Set<{ destroy(): void }>();
  private held: Promise<void> = Promise.resolve();
  private release: () => void = () => undefined;
  private readonly server: HttpServer;

  constructor(target: AddressInfo) {
    this.server = createServer((req, res) => {
      this.requests.push(req.headers);
      void this.held.then(() => {
        const up = request({ host: target.address, port: target.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        const pair = {
          destroy: () => {
            up.destroy();
            req.socket.destroy();
          },
        };
        this.open.add(pair);
        res.once('close', () => this.open.delete(pair));
        up.once('error', () => req.socket.destroy());
        req.pipe(up);
      });
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Cut every connection, and hold new ones until `letThrough()`. */
  cut(): void {
    this.held = new Promise((resolve) => (this.release = resolve));
    for (const pair of this.open) pair.destroy();
  }

  letThrough(): void {
    this.release();
  }

  close(): Promise<void> {
    this.letThrough();
    for (const pair of this.open) pair.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let services: Services & { cleanup(): Promise<void> };
let app: FastifyInstance;
let base: string;
let key: string;
let follow: Follow;
let work: string;

beforeAll(async () => {
  services = await startServices();
  app = await buildApp(services, { streamLimits: { heartbeatMs: 200, closeGraceMs: 2000 } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  key = (await createKey(app, 'enterprise', 'resume-client')).key;
  // The recipe as the page shows it, as a module beside the project's node_modules.
  const block = docBlocks(path.join(ROOT, 'docs', 'graphql-subscriptions.md')).find((b) => b.lang === 'js' && b.text.includes('export function follow('));
  if (block === undefined) throw new Error('docs/graphql-subscriptions.md has no js block exporting follow()');
  work = mkdtempSync(path.join(tmpdir(), 'txa-recipe-'));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(work, 'node_modules'));
  writeFileSync(path.join(work, 'follow.mjs'), block.text);
  ({ follow } = (await import(pathToFileURL(path.join(work, 'follow.mjs')).href)) as { follow: Follow });
}, 120_000);

afterAll(async () => {
  await app?.close();
  await services?.cleanup();
  if (work) rmSync(work, { recursive: true, force: true });
});

function start(url: string, from?: string): Received {
  const got: Omit<Received, 'follower'> & { follower?: Follower } = { data: [], gaps: [] };
  const follower = follow({
    url,
    apiKey: key,
    query: QUERY,
    ...(from === undefined ? {} : { from }),
    onData: (data, eventId) => got.data.push({ id: eventId, activity: data.protocolActivity }),
    onGap: (gap) => got.gaps.push(gap),
  });
  // An error ends it (graphql-sse refusing an event, say): kept for the test to show.
  follower.done.catch((err: unknown) => {
    got.error = err;
  });
  got.follower = follower;
  return got as Received;
}

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 10));
}

/** One write's records: `per` records in each of two hours (from `hour`) of two protocols, so four events. */
async function write(hour: number, per: number, slot0: number): Promise<Set<number>> {
  const active = (await services.registry.list()).filter((p) => p.active).slice(0, 2);
  const records: IngestRecord[] = [];
  for (const p of active) {
    for (const h of [hour, hour + 1])
      for (let i = 0; i < per; i++) records.push({ ...liveRecord(p, FIXTURE_START + h * 3600 + i, slot0 + records.length), slot: slot0 + records.length });
  }
  expect((await ingest(services, records)).rejected).toEqual([]);
  await services.live.idle();
  return new Set([hour, hour + 1].map((h) => FIXTURE_START + h * 3600));
}

const streams = (): number => app.liveStreams.count();
const has = (r: Received, hours: Set<number>, n = 4): boolean => r.data.filter((d) => hours.has(d.activity.timestamp)).length >= n;

describe('the graphql-sse recipe of docs/graphql-subscriptions.md', () => {
  it('learns each id, and after a cut connection resumes with Last-Event-ID: it receives what a subscriber that never left received', async () => {
    const proxy = new CuttingProxy(app.server.address() as AddressInfo);
    const url = `${await proxy.listen()}/graphql/stream`;
    const control = start(`${base}/graphql/stream`);
    const sub = start(url);
    try {
      await until(() => streams() === 2);
      const first = await write(0, 2, 800_000_000);
      await until(() => (has(sub, first) && has(control, first)) || sub.error !== undefined);
      expect(sub.error).toBeUndefined();
      const lastBefore = sub.data.at(-1)!.id;
      expect(sub.follower.lastEventId()).toBe(lastBefore);

      // The network fails; records land while the client is away (its reconnect is held).
      proxy.cut();
      await until(() => streams() === 1);
      const missed = await write(2, 3, 800_001_000);
      await until(() => has(control, missed));
      proxy.letThrough();
      // graphql-sse reconnects by itself, sending the id it learnt.
      await until(() => streams() === 2);
      const live = await write(4, 1, 800_002_000);
      await until(() => has(sub, live) && has(control, live));

      expect(proxy.requests.length).toBe(2);
      expect(proxy.requests[0]!['last-event-id']).toBeUndefined();
      expect(proxy.requests[1]!['last-event-id']).toBe(lastBefore);
      // Event for event what the subscriber that never left received: the missed ones replayed, none twice.
      expect(sub.data).toEqual(control.data);
      expect(sub.data.map((d) => d.activity.timestamp).filter((t) => missed.has(t))).toHaveLength(4);
      expect(new Set(sub.data.map((d) => d.id)).size).toBe(sub.data.length);
      expect(sub.gaps).toEqual([]);
    } finally {
      sub.follower.stop();
      control.follower.stop();
      await proxy.close();
    }
    // Stopped by its user: the recipe's loop ends without an error.
    await expect(sub.follower.done).resolves.toBeUndefined();
  });

  it('coming back with an id the server cannot replay from: the gap in extensions.gap, then the live stream, the subscription going on', async () => {
    const unknown = `1-${Number.MAX_SAFE_INTEGER - 1}`;
    const sub = start(`${base}/graphql/stream`, unknown);
    try {
      await until(() => sub.gaps.length === 1 || sub.error !== undefined);
      expect(sub.error).toBeUndefined();
      expect(sub.gaps[0]).toMatchObject({ reason: 'unknown', lastEventId: unknown });
      // The gap's id is where to resume from: learnt like any event's.
      expect(sub.follower.lastEventId()).toBe(sub.gaps[0]!.resumeAfterId);
      const live = await write(10, 1, 800_003_000);
      await until(() => has(sub, live) || sub.error !== undefined);
      expect(sub.error).toBeUndefined();
      const seq = (id: string): number => Number(id.split('-')[1]);
      expect(sub.data.every((d) => seq(d.id) > seq(sub.gaps[0]!.resumeAfterId))).toBe(true);
    } finally {
      sub.follower.stop();
    }
    await expect(sub.follower.done).resolves.toBeUndefined();
  });
});
