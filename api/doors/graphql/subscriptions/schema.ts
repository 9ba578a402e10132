// The subscription part of the GraphQL schema and its resolvers. The SDL lives in
// api/doors/graphql/schema/subscription.graphql, so the combined schema (every *.graphql file of
// that folder) holds it; resolvers come as a root value, so they work on any schema built
// from that SDL without touching how the query resolvers are attached.
// liveStubSchema() is the subscription SDL plus a placeholder Query, for as long as the
// query schema is not on this branch: the stream route takes whichever schema it is given.
import { readFileSync } from 'node:fs';
import { Type } from '@sinclair/typebox';
import { buildSchema, GraphQLError, type GraphQLSchema } from 'graphql';
import { Errors, type Wording } from '../../../../core/errors.ts';
import { request } from '../../../../core/request-check.ts';
import type { Analytics } from '../../../analytics/analytics.ts';
import { STREAM_MAX_PROTOCOLS } from '../../../../core/limits/streams.ts';
import { inputFields, type InputTypes } from '../input-sdl.ts';
import type { BucketFigures, BucketSize } from '../../../analytics/presets/activity-buckets.ts';
import type { Gap } from './event-log.ts';
import type { Feed } from './feed.ts';
import type { LiveActivity } from './live-activity.ts';

/**
 * The request of `protocolActivity`, declared once and checked by the one check: the
 * protocols (a list, each active, duplicates dropped: protocol-scope's `list`) and the bucket
 * size. Names are plain strings, so that any name the registry lacks is refused by protocol-scope.
 */
export const PROTOCOL_ACTIVITY = request(
  Type.Object({
    protocols: Type.Optional(
      Type.Array(Type.String(), {
        minItems: 1,
        maxItems: STREAM_MAX_PROTOCOLS,
        description: 'Protocols to follow (omitted: every visible protocol); at least one when given, each active',
        'x-refusal': {
          minItems: 'the list is empty; name at least one protocol, or leave the argument out for every protocol',
          maxItems: `at most ${STREAM_MAX_PROTOCOLS} names`,
        },
      }),
    ),
    bucket: Type.Optional(
      Type.Unsafe<'HOUR' | 'DAY'>({
        type: 'string',
        enum: ['HOUR', 'DAY'],
        title: 'ActivityBucketSize',
        default: 'HOUR',
        description: 'Size of a live activity bucket: an hour, or a UTC day',
      }),
    ),
  }),
  'list',
);

/** The Subscription type: its field's arguments and their input types derived from the declaration. */
export function subscriptionFieldsSdl(): string {
  const types: InputTypes = new Map();
  const args = inputFields(PROTOCOL_ACTIVITY.schema, types, {}, '    ');
  const doc = `Each new or changed activity bucket of the named protocols (omitted: every visible protocol) as records are ingested. Nothing is sent for buckets no write touches. An empty list, an unknown or inactive protocol, or more than ${STREAM_MAX_PROTOCOLS} names: BAD_USER_INPUT.`;
  return [...types.values(), `type Subscription {\n  ${JSON.stringify(doc)}\n  protocolActivity(\n${args.join('\n')}\n  ): ActivityEvent!\n}`].join('\n\n');
}

export const SUBSCRIPTION_SDL = `${readFileSync(new URL('../schema/subscription.graphql', import.meta.url), 'utf8')}\n${subscriptionFieldsSdl()}`;

/** The subscription SDL with a stand-in Query type (a schema must have one). */
export function liveStubSchema(): GraphQLSchema {
  return buildSchema(`type Query {\n  "Placeholder until the query schema joins: always true."\n  _live: Boolean\n}\n\n${SUBSCRIPTION_SDL}`);
}

/** The subscription's wording of the core's parameter keys (its arguments sit at the top level,
 *  not under filters as in queries: api/doors/graphql/errors.ts) and hints. */
export const GRAPHQL_WORDING: Wording = {
  params: { protocol: 'protocols', protocols: 'protocols', range: 'dateRange', cursor: 'after', order: 'sort' },
  hints: { protocols: 'query { protocols } lists the available ones', coarserBucket: 'bucket: DAY' },
};

/** A client error as GraphQL reports it: message and extensions.code from the catalog. */
export function userError(message: string, kind = Errors.invalidParams): GraphQLError {
  return new GraphQLError(message, { extensions: { code: kind.graphql } });
}

/** What the stream route hands every resolver. */
export interface StreamContext {
  /** Events one stream may queue (STREAM_MAX_QUEUED_EVENTS, or a test's figure). */
  maxQueued: number;
  /** The feed overflowed: the route closes the stream with an error event. */
  onOverflow(queued: number): void;
  /** The client's Last-Event-ID (a reconnect), already checked for shape by the route. */
  lastEventId?: string;
  /** Set by the resolver: the client came back too late for some events (sent as a `gap` event first). */
  gap?: Gap;
  /** The id of the event being executed (a stream takes its events one at a time): its SSE `id:`. */
  eventId?: string;
  /** Whether that event is replayed (a reconnect's), which the key pays for (replay-meter.ts). */
  replayed?: boolean;
}

/** The analytics the resolvers validate against: the names a caller may see, and the one check of a request against them. */
export type VisibleProtocols = Pick<Analytics, 'protocols' | 'check'>;

export interface ActivityEvent {
  protocolName: string;
  bucket: 'HOUR' | 'DAY';
  timestamp: number;
  bucketStart: string;
  date: string;
  hour: number | null;
  count: number;
  successCount: number;
  failedCount: number;
  totalFees: number;
  totalComputeUnits: number;
}

export function toActivityEvent(f: BucketFigures): ActivityEvent {
  const iso = new Date(f.start * 1000).toISOString().replace('.000Z', 'Z');
  return {
    protocolName: f.protocolName,
    bucket: f.size === 'day' ? 'DAY' : 'HOUR',
    timestamp: f.start,
    bucketStart: iso,
    date: iso.slice(0, 10),
    hour: f.size === 'hour' ? new Date(f.start * 1000).getUTCHours() : null,
    count: f.count,
    successCount: f.successCount,
    failedCount: f.failedCount,
    totalFees: f.totalFees,
    totalComputeUnits: f.totalComputeUnits,
  };
}

/**
 * Each figure as the payload GraphQL executes the selection on: { protocolActivity: event }.
 * An iterator object rather than an async generator: a generator's return() waits behind
 * its pending next(), so a quiet stream closed by its client would keep its feed for good.
 */
function asPayloads(feed: Feed, ctx: StreamContext, analytics: VisibleProtocols): AsyncIterableIterator<{ protocolActivity: ActivityEvent }> {
  const it: AsyncIterableIterator<{ protocolActivity: ActivityEvent }> = {
    async next() {
      for (;;) {
        const r = await feed.next();
        if (r.done) return { value: undefined, done: true };
        // Visible as of sending, not as of making: an event kept for replay (or queued) before
        // its protocol was deactivated is not sent, as no other door shows that protocol.
        if (!(await analytics.protocols()).includes(r.value.figures.protocolName)) continue;
        ctx.eventId = r.value.id;
        ctx.replayed = feed.replayed;
        return { value: { protocolActivity: toActivityEvent(r.value.figures) }, done: false };
      }
    },
    async return() {
      await feed.return();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]: () => it,
  };
  return it;
}

interface ProtocolActivityArgs {
  protocols?: readonly string[] | null;
  bucket?: 'HOUR' | 'DAY' | null;
}

/** The root value serving `subscription { protocolActivity(...) }`. */
export function subscriptionRoot(live: LiveActivity, analytics: VisibleProtocols) {
  return {
    async protocolActivity(args: ProtocolActivityArgs, ctx: StreamContext) {
      // The arguments checked once (PROTOCOL_ACTIVITY); a refusal names the argument (`protocols: …`).
      const checked = await analytics.check(PROTOCOL_ACTIVITY, { values: { ...args } }, (path) => `${path}:`);
      const size: BucketSize = checked.bucket === 'DAY' ? 'day' : 'hour';
      const protocols = args.protocols === undefined || args.protocols === null ? undefined : checked.protocols;
      const feed = live.subscribe({ protocols, size, maxQueued: ctx.maxQueued, onOverflow: (n) => ctx.onOverflow(n) }, ctx.lastEventId);
      ctx.gap = feed.gap;
      return asPayloads(feed, ctx, analytics);
    },
  };
}
