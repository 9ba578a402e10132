// GET/POST /graphql/stream: GraphQL subscriptions over Server-Sent Events, in the
// graphql-sse protocol's "distinct connections" mode (one operation per connection; the
// client ends it by closing the connection). Written here rather than with graphql-sse's
// handler because that handler queues events without bound behind a slow socket and writes
// its own headers; the protocol's events are the same (`next` with an ExecutionResult,
// `complete`, comment lines as heartbeats), and graphql-sse's own client is what the tests use.
//
// Before the stream starts, the request is an ordinary Fastify request: access control has
// already answered 401/403/429 (its root hooks run first), and here a missing
// `accept: text/event-stream` is 406, a request without a query 400, a key over its open
// streams 429 (PLAN_STREAMS). Only then is the reply hijacked, with the headers the onSend
// hooks would have set (x-request-id, X-RateLimit-*, freshness) copied onto it. Problems
// of the GraphQL document itself (syntax, validation, arguments) are reported inside the
// stream, as the protocol asks: one `next` event with `errors`, then `complete`.
//
// Each `next` event of a live stream carries its id twice: as the SSE `id:` (what EventSource
// sends back as Last-Event-ID) and as `extensions.eventId` (graphql-sse's client drops `id:`
// lines, so that is where its users learn it). A reconnect that came back too late for some
// events is told so first in a `next` event without data, `extensions.gap` (graphql-sse's client
// refuses any event but `next` and `complete`), or, asked for with `?gap=event`, in the event
// `gap` of before (EventSource users: addEventListener('gap')).
//
// A stream ends with an error event and `complete` when its key is revoked or deactivated
// (checked on every key-change announcement and every STREAM_KEY_CHECK_MS), when its client
// reads too slowly (its queue of events is full), when a replay spends the key's rate limit
// (replay-meter.ts), or at shutdown.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ExecutionResult, GraphQLSchema } from 'graphql';
import { AppError, Errors, type ErrorKind } from '../../../../core/errors.ts';
import {
  STREAM_CLOSE_GRACE_MS,
  STREAM_HEARTBEAT_MS,
  STREAM_KEY_CHECK_MS,
  STREAM_MAX_DOCUMENT_CHARS,
  STREAM_MAX_QUEUED_EVENTS,
  STREAM_MAX_SELECTIONS,
} from '../../../../core/limits/streams.ts';
import type { Logger } from '../../../../core/logger.ts';
import { PLAN_STREAMS } from '../../../../core/plans.ts';
import { presentedKey } from '../../../services/access/presented-key.ts';
import { setRateLimitHeaders } from '../../../services/access/rate-limit-headers.ts';
import type { Access } from '../../../services/access/access.ts';
import { InFlightLimiter } from '../../../services/access/in-flight.ts';
import { answerStatsOf, setAnswerStatsHeaders } from '../../../services/access/answer-stats.ts';
import { setFreshnessHeaders, type FreshnessWatermark } from '../../../services/freshness.ts';
import { acceptsEventStream, readParams } from '../request-params.ts';
import type { LiveActivity } from './live-activity.ts';
import { LiveStream, sseEvent, type StreamHost, type StreamSource } from './live-stream.ts';
import { parseEventId, type Gap } from './event-log.ts';
import { chargeKey, keyRefusal, ReplayMeter } from './replay-meter.ts';
import { formatError } from '../errors.ts';
import { GRAPHQL_WORDING, subscriptionRoot, type StreamContext, type VisibleProtocols } from './schema.ts';
import { prepareSubscription, type Prepared } from './stream-document.ts';
import { keyed } from '../../../services/access/route-policy.ts';

export const STREAM_PATH = '/graphql/stream';

/** How a reconnect's gap is sent: in a `next` event's extensions (the default), or as the SSE event `gap`. */
export type GapForm = 'next' | 'event';

/** The `gap` query parameter (GET or POST): `next` (default) or `event`; anything else is a 400 before the stream opens. */
function gapFormOf(req: FastifyRequest): GapForm {
  const v = (req.query as Record<string, unknown> | undefined)?.gap;
  if (v === undefined || v === 'next') return 'next';
  if (v === 'event') return 'event';
  throw new AppError(
    Errors.invalidRequest,
    'the query parameter "gap" is "next" (a gap in a next event\'s extensions.gap, the default) or "event" (the SSE event gap), given once',
  );
}

/** The Last-Event-ID header, checked for shape (400 before the stream opens); undefined when absent. */
function lastEventIdOf(req: FastifyRequest): string | undefined {
  const raw = req.headers['last-event-id'];
  const v = Array.isArray(raw) ? raw[0] : raw;
  if (v === undefined || v.trim() === '') return undefined;
  parseEventId(v.trim());
  return v.trim();
}

export interface StreamLimits {
  maxQueued: number;
  heartbeatMs: number;
  keyCheckMs: number;
  closeGraceMs: number;
  maxDocumentChars: number;
  maxSelections: number;
}

export interface GraphqlStreamOptions {
  /** The executable schema: liveStubSchema() until the combined schema replaces it. */
  schema: GraphQLSchema;
  live: LiveActivity;
  analytics: VisibleProtocols;
  access: Access;
  freshness: FreshnessWatermark;
  logger: Logger;
  /** CONNECTION_TIMEOUT_MS: heartbeats come well inside it, so a quiet stream is never cut. */
  connectionTimeoutMs: number;
  /** Tests shrink these; the service runs on core/limits/. */
  limits?: Partial<StreamLimits>;
}

/** The open streams of this process: the per-key cap, revocation checks, shutdown. */
export class GraphqlStreams implements StreamHost {
  readonly limits: StreamLimits;
  readonly logger: Logger;
  private readonly open = new Set<LiveStream>();
  private readonly slots = new InFlightLimiter();
  private readonly root: ReturnType<typeof subscriptionRoot>;
  private checker: NodeJS.Timeout | undefined;
  private checking = false;
  private recheck = false;
  private readonly unlisten: () => void;

  constructor(private readonly opts: GraphqlStreamOptions) {
    const heartbeat = opts.limits?.heartbeatMs ?? STREAM_HEARTBEAT_MS;
    this.limits = {
      maxQueued: STREAM_MAX_QUEUED_EVENTS,
      keyCheckMs: STREAM_KEY_CHECK_MS,
      closeGraceMs: STREAM_CLOSE_GRACE_MS,
      maxDocumentChars: STREAM_MAX_DOCUMENT_CHARS,
      maxSelections: STREAM_MAX_SELECTIONS,
      ...opts.limits,
      // Well inside the idle-connection time-out, whatever it is set to.
      heartbeatMs: opts.connectionTimeoutMs > 0 ? Math.min(heartbeat, Math.floor(opts.connectionTimeoutMs / 3)) : heartbeat,
    };
    this.logger = opts.logger;
    this.root = subscriptionRoot(opts.live, opts.analytics);
    // A key changed here or (with Redis) anywhere: check the open streams' keys now.
    this.unlisten = opts.access.onKeyChange(() => void this.checkKeys());
  }

  /** Open streams, of one key or of all. */
  count(keyId?: string): number {
    return keyId === undefined ? this.open.size : this.slots.inFlight(keyId);
  }

  /** `extensions.freshness` on every event (the figures of the protocols the caller may see). */
  async withExtensions(result: ExecutionResult, eventId?: string): Promise<Record<string, unknown>> {
    let visible: string[] | undefined;
    try {
      visible = await this.opts.analytics.protocols();
    } catch {
      visible = undefined;
    }
    return {
      ...(result.data !== undefined ? { data: result.data } : {}),
      ...(result.errors
        ? { errors: result.errors.map((e) => formatError(e, (err) => this.logger.error({ err }, 'subscription field failed'), GRAPHQL_WORDING)) }
        : {}),
      extensions: {
        ...(eventId === undefined ? {} : { eventId }),
        ...result.extensions,
        ...(visible ? { freshness: this.opts.freshness.extension(visible) } : {}),
      },
    };
  }

  install(app: FastifyInstance): void {
    const handler = (req: FastifyRequest, reply: FastifyReply) => this.handle(req, reply);
    // Live streams are a door of their own (long-lived answers).
    const config = keyed('graphql', 'stream');
    app.get(STREAM_PATH, { config }, handler);
    app.post(STREAM_PATH, { config }, handler);
    // The protocol's "single connection" mode (PUT a reservation, then operations by id) is
    // not served: say so rather than answer 404.
    const reservations = async (): Promise<never> => {
      throw new AppError(
        Errors.methodNotAllowed,
        'only the distinct-connections mode of graphql-sse is served: GET or POST with accept: text/event-stream, one subscription per connection',
      );
    };
    app.put(STREAM_PATH, { config }, reservations);
    app.delete(STREAM_PATH, { config }, reservations);
    // Before the server waits for connections to end: end the streams (they would never).
    app.addHook('preClose', async () => this.closeAll(Errors.unavailable, 'the service is shutting down; reconnect'));
    app.addHook('onClose', async () => {
      this.unlisten();
      clearInterval(this.checker);
    });
  }

  closeAll(kind: ErrorKind, message: string): void {
    for (const s of [...this.open]) s.close([{ message, extensions: { code: kind.graphql } }]);
  }

  private async handle(req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const key = req.apiKey;
    const secret = presentedKey(req);
    // Access control admits no request here without an active key; this is only a guard.
    if (key === null || secret === undefined) throw new AppError(Errors.unauthorized, 'API key required');
    if (!acceptsEventStream(req.headers.accept)) {
      throw new AppError(Errors.notAcceptable, '/graphql/stream answers with an event stream: send accept: text/event-stream (queries go to POST /graphql)');
    }
    const params = readParams(req, 'stream');
    // A reconnect: the id of the last event the client had (EventSource sends it by itself).
    const lastEventId = lastEventIdOf(req);
    const gapForm = gapFormOf(req);
    const cap = PLAN_STREAMS[key.plan];
    const release = this.slots.tryAcquire(key.id, cap);
    if (release === undefined) {
      this.opts.access.metrics.rateLimitRejections.inc({ plan: key.plan });
      throw new AppError(
        Errors.rateLimited,
        `Too many open streams: plan ${key.plan} allows ${cap} open /graphql/stream connections per API key; close one first`,
      );
    }
    let prepared: Prepared;
    let stream: LiveStream | undefined;
    const ctx: StreamContext = {
      maxQueued: this.limits.maxQueued,
      onOverflow: (queued) =>
        stream?.close([
          {
            message: `the client read events too slowly: ${queued} events of earlier writes were still waiting when more arrived (the limit is ${this.limits.maxQueued}); the stream is closed: reconnect, and read faster or subscribe to fewer protocols`,
            extensions: { code: Errors.slowConsumer.graphql },
          },
        ]),
      ...(lastEventId === undefined ? {} : { lastEventId }),
    };
    try {
      prepared = await prepareSubscription(params, ctx, { schema: this.opts.schema, root: this.root, limits: this.limits });
    } catch (err) {
      release();
      throw err;
    }

    const raw = await this.openEventStream(req, reply);
    // A client that hung up while the request was prepared: nothing below would ever release the slot or the feed.
    if (raw === undefined) {
      release();
      if (prepared.kind === 'stream') void prepared.events.return?.().catch(() => undefined);
      return reply;
    }
    if (prepared.kind === 'result') {
      // Errors of the document or its arguments: reported in the stream, which then ends.
      raw.write(sseEvent('next', await this.withExtensions(prepared.result)));
      raw.end(sseEvent('complete'), release);
      raw.once('close', release);
      return reply;
    }
    const source: StreamSource = {
      events: prepared.events,
      eventId: () => ctx.eventId,
      replayed: () => ctx.replayed === true,
      meter: new ReplayMeter(chargeKey(req, (s) => this.opts.access.authenticator.lookup(s), secret)),
    };
    stream = new LiveStream(
      key.id,
      secret,
      raw,
      source,
      this,
      () => {
        release();
        this.open.delete(stream!);
      },
      lastEventId,
    );
    this.open.add(stream);
    this.ensureChecker();
    // Came back too late for some events: say which, then the live stream (its id: where to resume from).
    stream.start(ctx.gap === undefined ? undefined : await this.gapEvent(ctx.gap, gapForm));
    return reply;
  }

  /** The event stream's head: the reply hijacked, with the headers the onSend hooks would have
   *  set copied onto it; undefined (the socket destroyed) when the client has hung up already. */
  private async openEventStream(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply['raw'] | undefined> {
    reply.header('x-request-id', req.id);
    await setRateLimitHeaders(this.opts.access, req, reply);
    await setFreshnessHeaders(req, reply, this.opts.freshness, () => this.opts.analytics.protocols());
    // X-Stats-* as of the stream's start (what opening it read and cost).
    const stats = answerStatsOf(req.budget);
    if (stats !== undefined) setAnswerStatsHeaders(reply, stats);
    reply.hijack();
    const raw = reply.raw;
    // Its 'close' event has passed already, so nothing would ever end the stream.
    if (raw.destroyed || raw.socket === null || raw.socket.destroyed) {
      raw.destroy();
      return undefined;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(reply.getHeaders()))
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
    raw.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      // Proxies such as nginx would otherwise buffer the events.
      'x-accel-buffering': 'no',
      // A stream's connection is not reused: when the stream ends (complete, or closed by the
      // server) the client sees the connection end, and a client that stopped reading is
      // cut at the end of the grace period rather than kept as an idle keep-alive socket.
      connection: 'close',
    });
    return raw;
  }

  /** A reconnect's gap as sent: a `next` event without data holding it in extensions.gap, or the SSE event `gap`; its id either way. */
  private async gapEvent(gap: Gap, form: GapForm): Promise<string> {
    if (form === 'event') return sseEvent('gap', gap, gap.resumeAfterId);
    return sseEvent('next', await this.withExtensions({ extensions: { gap } }, gap.resumeAfterId), gap.resumeAfterId);
  }

  private ensureChecker(): void {
    if (this.checker !== undefined) return;
    this.checker = setInterval(() => {
      if (this.open.size === 0) {
        clearInterval(this.checker);
        this.checker = undefined;
        return;
      }
      void this.checkKeys();
    }, this.limits.keyCheckMs);
    this.checker.unref();
  }

  /** Close the streams whose key is no longer active. One lookup per distinct key, answered
   *  from the key snapshot (reloaded at most once per KEY_CACHE_TTL_MS, by one query). */
  private async checkKeys(): Promise<void> {
    if (this.checking) {
      // A change announced during a check is checked again right after it.
      this.recheck = true;
      return;
    }
    this.checking = true;
    try {
      do {
        this.recheck = false;
        const bySecret = new Map<string, LiveStream[]>();
        for (const s of this.open) bySecret.set(s.secret, [...(bySecret.get(s.secret) ?? []), s]);
        for (const [secret, streams] of bySecret) {
          const message = keyRefusal(await this.opts.access.authenticator.lookup(secret));
          if (message === undefined) continue;
          for (const s of streams) s.close([{ message, extensions: { code: Errors.forbidden.graphql } }]);
        }
      } while (this.recheck);
    } catch (err) {
      // Streams stay open while keys cannot be read; the next check tries again.
      this.logger.warn({ err }, 'checking the keys of open streams failed');
    } finally {
      this.checking = false;
    }
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The open GraphQL streams of this app (tests, the benchmark). */
    liveStreams: GraphqlStreams;
  }
}

/** Register /graphql/stream on `app` (at its root, after access control). */
export function installGraphqlStream(app: FastifyInstance, opts: GraphqlStreamOptions): GraphqlStreams {
  const streams = new GraphqlStreams(opts);
  streams.install(app);
  app.decorate('liveStreams', streams);
  return streams;
}
