// The live-stream machinery without an engine or a network: the real hub (LiveActivity), the
// real GraphQL subscribe of /graphql/stream's documents and real LiveStreams, writing into
// sinks that count what they are sent. The bucket reader makes figures up for the keys asked.
import type { ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import type { ExecutionResult } from 'graphql';
import type { BucketFigures, BucketKey, BucketSize } from '../../api/analytics/presets/activity-buckets.ts';
import { LiveActivity } from '../../api/doors/graphql/subscriptions/live-activity.ts';
import { LiveStream, type StreamHost } from '../../api/doors/graphql/subscriptions/live-stream.ts';
import { ReplayMeter, type ReplayCharge } from '../../api/doors/graphql/subscriptions/replay-meter.ts';
import { liveStubSchema, subscriptionRoot, type StreamContext } from '../../api/doors/graphql/subscriptions/schema.ts';
import { prepareSubscription } from '../../api/doors/graphql/subscriptions/stream-document.ts';
import { createLogger } from '../../core/logger.ts';
import { checkRequest } from '../../core/request-check.ts';
import type { ChangedBucket } from '../../core/observers.ts';

export const QUERY = 'subscription { protocolActivity { protocolName timestamp count } }';

/** Figures for every key asked, of the protocols `visible` holds (as the analytics facade answers). */
export function fakeReader(visible: Set<string>): { activityBuckets(keys: readonly BucketKey[], size: BucketSize): Promise<BucketFigures[]> } {
  let slot = 0;
  return {
    activityBuckets: async (keys, size) =>
      keys
        .filter((k) => visible.has(k.protocolName))
        .map((k) => ({
          ...k,
          size,
          count: 1,
          successCount: 1,
          failedCount: 0,
          totalFees: 5000,
          totalComputeUnits: 100_000,
          maxSlot: ++slot,
        })),
  };
}

/** `n` distinct hour buckets of `protocol`, the `w`th write's. */
export function buckets(protocol: string, w: number, n: number): ChangedBucket[] {
  return Array.from({ length: n }, (_, i) => ({ protocolName: protocol, hourStart: (w * n + i) * 3600 }));
}

export interface Harness {
  live: LiveActivity;
  /** The active protocols (change it to deactivate one). */
  visible: Set<string>;
  host: StreamHost;
}

export function harness(protocols: string[], replay: { maxEvents?: number } = {}): Harness {
  const visible = new Set(protocols);
  const live = new LiveActivity(fakeReader(visible), createLogger('silent'), replay);
  const host: StreamHost = {
    limits: { heartbeatMs: 3_600_000, closeGraceMs: 1000 },
    logger: createLogger('silent'),
    withExtensions: async (r: ExecutionResult) => ({ data: r.data }),
  };
  return { live, visible, host };
}

/** One open stream: what its sink was sent, and the results its iterator gave (tapped). */
export interface OpenStream {
  stream: LiveStream;
  ctx: StreamContext;
  sink: Writable;
  /** `next` events written, with their SSE ids (none kept with `record: false`). */
  sent: { id: string | undefined; text: string }[];
  /** `next` events written. */
  count: number;
  /** What its replay was charged. */
  meter: ReplayMeter;
  /** Every result the stream took from its iterator, or only while `tap.on` is true. */
  tap: { on: boolean; taken: (r: ExecutionResult) => void };
}

export async function openStream(
  h: Harness,
  opts: { query?: string; lastEventId?: string; record?: boolean; charge?: ReplayCharge } = {},
): Promise<OpenStream> {
  const ctx: StreamContext = {
    maxQueued: 1_000_000,
    onOverflow: () => undefined,
    ...(opts.lastEventId === undefined ? {} : { lastEventId: opts.lastEventId }),
  };
  // The facade's two reads the subscription makes, over the harness's visible names.
  const root = subscriptionRoot(h.live, {
    protocols: async () => [...h.visible],
    check: async (decl, input, nameOf) => checkRequest(decl, input, [...h.visible], nameOf),
  });
  const prepared = await prepareSubscription({ query: opts.query ?? QUERY } as never, ctx, {
    schema: liveStubSchema(),
    root,
    limits: { maxDocumentChars: 8192, maxSelections: 64 },
  });
  if (prepared.kind !== 'stream') throw new Error(JSON.stringify(prepared.result.errors));
  const source = prepared.events;
  const tap: OpenStream['tap'] = { on: true, taken: () => undefined };
  const events: AsyncIterator<ExecutionResult> = {
    next: async () => {
      const r = await source.next();
      if (r.done !== true && tap.on) tap.taken(r.value);
      return r;
    },
    return: () => source.return!(),
  };
  const sent: OpenStream['sent'] = [];
  const record = opts.record ?? true;
  const sink = new Writable({
    write(chunk: Buffer, _enc, callback) {
      const text = chunk.toString();
      if (/^event: next$/m.test(text)) {
        open.count += 1;
        if (record) sent.push({ id: /^id: (.*)$/m.exec(text)?.[1], text });
      }
      callback();
    },
  });
  const meter = new ReplayMeter(opts.charge ?? (async () => undefined));
  const streamSource = { events, eventId: () => ctx.eventId, replayed: () => ctx.replayed === true, meter };
  const stream = new LiveStream('key', 'secret', sink as unknown as ServerResponse, streamSource, h.host, () => undefined, opts.lastEventId);
  const open: OpenStream = { stream, ctx, sink, sent, count: 0, meter, tap };
  stream.start();
  return open;
}

/** Turns of the event loop until `cond` holds (no clock: a stream that cannot progress fails by the test's time-out). */
export async function turnsUntil(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setImmediate(r));
}
