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
// A stream ends with an error event and `complete` when its key is revoked or deactivated
// (checked on every key-change announcement and every STREAM_KEY_CHECK_MS), when its client
// reads too slowly (its queue of events is full), or at shutdown.
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  getOperationAST,
  GraphQLError,
  Kind,
  parse,
  subscribe,
  validate,
  visit,
  type DocumentNode,
  type ExecutionResult,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type GraphQLSchema,
} from 'graphql';
import { AppError, Errors, type ErrorKind } from '../../../core/errors.ts';
import {
  STREAM_CLOSE_GRACE_MS,
  STREAM_HEARTBEAT_MS,
  STREAM_KEY_CHECK_MS,
  STREAM_MAX_DOCUMENT_CHARS,
  STREAM_MAX_QUEUED_EVENTS,
  STREAM_MAX_SELECTIONS,
} from '../../../core/limits.ts';
import type { Logger } from '../../../core/logger.ts';
import { PLAN_STREAMS } from '../../../core/plans.ts';
import { presentedKey, setRateLimitHeaders } from '../../access/access-control.ts';
import type { Access } from '../../access/access.ts';
import { InFlightLimiter } from '../../access/in-flight.ts';
import { setFreshnessHeaders, type FreshnessWatermark } from '../../freshness.ts';
import type { LiveActivity } from './live-activity.ts';
import { formatError, subscriptionRoot, userError, type StreamContext, type VisibleProtocols } from './schema.ts';

export const STREAM_PATH = '/graphql/stream';

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
  /** Tests shrink these; the service runs on core/limits.ts. */
  limits?: Partial<StreamLimits>;
}

type ErrorJson = ReturnType<typeof formatError>;

const sseEvent = (event: 'next' | 'complete', data?: unknown): string =>
  // `data:` even when empty: EventSource drops an event without a data field.
  `event: ${event}\ndata:${data === undefined ? '' : ` ${JSON.stringify(data)}`}\n\n`;

const HEARTBEAT = ':\n\n';

/** Does the Accept header allow an event stream (absent, text/event-stream, text/*, or * / *)? */
function acceptsEventStream(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return accept.split(',').some((part) => {
    const type = part.split(';')[0]!.trim().toLowerCase();
    return type === 'text/event-stream' || type === 'text/*' || type === '*/*';
  });
}

interface RequestParams {
  query: string;
  variables: Record<string, unknown> | undefined;
  operationName: string | undefined;
}

/** The GraphQL-over-HTTP parameters of a GET (query string) or POST (JSON body); 400 when malformed. */
function readParams(req: FastifyRequest): RequestParams {
  const bad = (message: string): AppError => new AppError(Errors.invalidRequest, message);
  let raw: Record<string, unknown>;
  if (req.method === 'GET') {
    const q = (req.query ?? {}) as Record<string, unknown>;
    const one = (name: string): unknown => {
      const v = q[name];
      if (Array.isArray(v)) throw bad(`the query parameter "${name}" is given more than once`);
      return v;
    };
    const json = (name: string): unknown => {
      const v = one(name);
      if (v === undefined) return undefined;
      try {
        return JSON.parse(String(v));
      } catch {
        throw bad(`the query parameter "${name}" is not valid JSON`);
      }
    };
    raw = { query: one('query'), operationName: one('operationName'), variables: json('variables') };
  } else {
    const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') {
      throw new AppError(Errors.unsupportedMediaType, 'send the subscription as application/json {query, variables?, operationName?}, or as GET query parameters');
    }
    if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) throw bad('the request body must be a JSON object {query, variables?, operationName?}');
    raw = req.body as Record<string, unknown>;
  }
  if (typeof raw.query !== 'string' || raw.query.trim() === '') throw bad('"query" must be a non-empty string holding a subscription');
  if (raw.variables !== undefined && raw.variables !== null && (typeof raw.variables !== 'object' || Array.isArray(raw.variables))) throw bad('"variables" must be a JSON object');
  if (raw.operationName !== undefined && raw.operationName !== null && typeof raw.operationName !== 'string') throw bad('"operationName" must be a string');
  return {
    query: raw.query,
    variables: (raw.variables ?? undefined) as Record<string, unknown> | undefined,
    operationName: (raw.operationName ?? undefined) as string | undefined,
  };
}

/** Fields selected anywhere in the document (aliases and fragments included): each is sent with every event. */
function countSelections(doc: DocumentNode): number {
  let n = 0;
  visit(doc, { [Kind.FIELD]: () => void (n += 1) });
  return n;
}

/** Do @skip or @include decide on the root field (directly, or on a fragment holding it)? */
function rootHasSkipOrInclude(doc: DocumentNode, set: SelectionSetNode, seen = new Set<string>()): boolean {
  for (const sel of set.selections) {
    if (sel.directives?.some((d) => d.name.value === 'skip' || d.name.value === 'include')) return true;
    if (sel.kind === Kind.INLINE_FRAGMENT && rootHasSkipOrInclude(doc, sel.selectionSet, seen)) return true;
    if (sel.kind === Kind.FRAGMENT_SPREAD && !seen.has(sel.name.value)) {
      seen.add(sel.name.value);
      const frag = doc.definitions.find((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === sel.name.value);
      if (frag && rootHasSkipOrInclude(doc, frag.selectionSet, seen)) return true;
    }
  }
  return false;
}

type Prepared = { kind: 'stream'; events: AsyncIterator<ExecutionResult> } | { kind: 'result'; result: ExecutionResult };

/** One open stream: its events, heartbeat and closing. */
class LiveStream {
  private closed = false;
  private heartbeat: NodeJS.Timeout | undefined;
  private grace: NodeJS.Timeout | undefined;
  private signalClosed!: () => void;
  private readonly closedSignal = new Promise<void>((resolve) => (this.signalClosed = resolve));

  constructor(
    readonly keyId: string,
    readonly secret: string,
    private readonly raw: ServerResponse,
    private readonly events: AsyncIterator<ExecutionResult>,
    private readonly streams: GraphqlStreams,
    private readonly onGone: () => void,
  ) {}

  start(): void {
    const { limits } = this.streams;
    // The socket's close ends everything, whoever closed it.
    this.raw.once('close', () => {
      this.finish();
      this.onGone();
    });
    // Some clients (Firefox, Safari) want a first byte before they report the stream open.
    this.raw.write(HEARTBEAT);
    this.heartbeat = setInterval(() => {
      // Behind a full socket a heartbeat is pointless and would only add to the backlog.
      if (!this.raw.writableNeedDrain) this.raw.write(HEARTBEAT);
    }, limits.heartbeatMs);
    this.heartbeat.unref();
    void this.pump();
  }

  /** Ends the stream with `errors` in a last `next` event, then `complete`; a client that
   *  does not read them is disconnected after the grace period. */
  close(errors?: ErrorJson[]): void {
    if (this.closed) return;
    if (errors !== undefined && this.raw.writable) this.raw.write(sseEvent('next', { errors }));
    if (this.raw.writable) this.raw.end(sseEvent('complete'));
    this.finish();
    this.grace = setTimeout(() => this.raw.destroy(), this.streams.limits.closeGraceMs);
    this.grace.unref();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    this.signalClosed();
    // Leaves the hub at once, even while a next() is pending.
    void this.events.return?.().catch(() => undefined);
  }

  private async pump(): Promise<void> {
    try {
      for (;;) {
        const r = await Promise.race([this.events.next(), this.closedSignal.then(() => undefined)]);
        if (this.closed || r === undefined) return;
        if (r.done) {
          this.close();
          return;
        }
        this.raw.write(sseEvent('next', await this.streams.withExtensions(r.value)));
        if (this.raw.writableNeedDrain) {
          await Promise.race([new Promise((resolve) => this.raw.once('drain', resolve)), this.closedSignal]);
        }
      }
    } catch (err) {
      this.streams.logger.error({ err }, 'live stream failed');
      this.close([{ message: 'Internal error', extensions: { code: Errors.internal.graphql } }]);
    }
  }
}

/** The open streams of this process: the per-key cap, revocation checks, shutdown. */
export class GraphqlStreams {
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
  async withExtensions(result: ExecutionResult): Promise<Record<string, unknown>> {
    let visible: string[] | undefined;
    try {
      visible = await this.opts.analytics.protocols();
    } catch {
      visible = undefined;
    }
    return {
      ...(result.data !== undefined ? { data: result.data } : {}),
      ...(result.errors ? { errors: result.errors.map(formatError) } : {}),
      extensions: { ...result.extensions, ...(visible ? { freshness: this.opts.freshness.extension(visible) } : {}) },
    };
  }

  install(app: FastifyInstance): void {
    const handler = (req: FastifyRequest, reply: FastifyReply) => this.handle(req, reply);
    app.get(STREAM_PATH, handler);
    app.post(STREAM_PATH, handler);
    // The protocol's "single connection" mode (PUT a reservation, then operations by id) is
    // not served: say so rather than answer 404.
    const reservations = async (): Promise<never> => {
      throw new AppError(Errors.methodNotAllowed, 'only the distinct-connections mode of graphql-sse is served: GET or POST with accept: text/event-stream, one subscription per connection');
    };
    app.put(STREAM_PATH, reservations);
    app.delete(STREAM_PATH, reservations);
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
    const params = readParams(req);
    const cap = PLAN_STREAMS[key.plan];
    const release = this.slots.tryAcquire(key.id, cap);
    if (release === undefined) {
      this.opts.access.metrics.rateLimitRejections.inc({ plan: key.plan });
      throw new AppError(Errors.rateLimited, `Too many open streams: plan ${key.plan} allows ${cap} open /graphql/stream connections per API key; close one first`);
    }
    let prepared: Prepared;
    let stream: LiveStream | undefined;
    const ctx: StreamContext = {
      maxQueued: this.limits.maxQueued,
      onOverflow: (queued) => stream?.close([{
        message: `the client read events too slowly: ${queued} events of earlier writes were still waiting when more arrived (the limit is ${this.limits.maxQueued}); the stream is closed: reconnect, and read faster or subscribe to fewer protocols`,
        extensions: { code: Errors.slowConsumer.graphql },
      }]),
    };
    try {
      prepared = await this.prepare(params, ctx);
    } catch (err) {
      release();
      throw err;
    }

    // From here on the answer is an event stream: set what the onSend hooks would have set.
    reply.header('x-request-id', req.id);
    await setRateLimitHeaders(this.opts.access, req, reply);
    await setFreshnessHeaders(req, reply, this.opts.freshness, () => this.opts.analytics.protocols());
    reply.hijack();
    const raw = reply.raw;
    // A client that hung up while the request was prepared has closed the socket already:
    // its 'close' event has passed, so nothing below would ever release the slot or the feed.
    if (raw.destroyed || raw.socket === null || raw.socket.destroyed) {
      release();
      if (prepared.kind === 'stream') void prepared.events.return?.().catch(() => undefined);
      raw.destroy();
      return reply;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
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
    if (prepared.kind === 'result') {
      // Errors of the document or its arguments: reported in the stream, which then ends.
      raw.write(sseEvent('next', await this.withExtensions(prepared.result)));
      raw.end(sseEvent('complete'), release);
      raw.once('close', release);
      return reply;
    }
    stream = new LiveStream(key.id, secret, raw, prepared.events, this, () => {
      release();
      this.open.delete(stream!);
    });
    this.open.add(stream);
    this.ensureChecker();
    stream.start();
    return reply;
  }

  private async prepare(params: RequestParams, ctx: StreamContext): Promise<Prepared> {
    const fail = (...errors: GraphQLError[]): Prepared => ({ kind: 'result', result: { errors } });
    const { schema } = this.opts;
    if (params.query.length > this.limits.maxDocumentChars) {
      return fail(userError(`the document is ${params.query.length} characters; at most ${this.limits.maxDocumentChars} are allowed on /graphql/stream`));
    }
    let document: DocumentNode;
    try {
      // A token budget bounds parsing work whatever the document holds.
      document = parse(params.query, { maxTokens: 2000 });
    } catch (err) {
      if (err instanceof GraphQLError) return fail(err);
      throw err;
    }
    // Counted before validation, whose cost grows with the square of repeated fields.
    const fields = countSelections(document);
    if (fields > this.limits.maxSelections) {
      return fail(userError(`the subscription selects ${fields} fields; at most ${this.limits.maxSelections} are allowed (each is sent with every event)`));
    }
    const op = getOperationAST(document, params.operationName);
    if (op === null || op === undefined) {
      return fail(userError(params.operationName === undefined
        ? 'the document holds several operations: name the one to run in "operationName"'
        : `no operation named ${JSON.stringify(params.operationName.slice(0, 100))} in the document`));
    }
    if (op.operation !== 'subscription') {
      return fail(userError(`/graphql/stream serves subscriptions only; send ${op.operation === 'query' ? 'queries' : 'mutations'} to POST /graphql`));
    }
    // graphql 16 fails (a TypeError at execution, or a throw from its own validation rule
    // when the condition is a variable) when @skip/@include decide on a subscription's root
    // field; the spec's newer editions forbid them there, and so does this route. Checked
    // before validation for that reason.
    if (rootHasSkipOrInclude(document, op.selectionSet)) {
      return fail(userError('@skip and @include are not allowed on the root field of a subscription'));
    }
    let invalid: readonly GraphQLError[];
    try {
      invalid = validate(schema, document, undefined, { maxErrors: 10 });
    } catch (err) {
      // A validation rule that throws rather than reports (as above) is still the document's fault.
      if (err instanceof GraphQLError) return fail(err);
      throw err;
    }
    if (invalid.length > 0) return fail(...invalid);
    const result = await subscribe({
      schema,
      document,
      rootValue: this.root,
      contextValue: ctx,
      variableValues: params.variables,
      operationName: params.operationName,
    });
    if (Symbol.asyncIterator in result) return { kind: 'stream', events: result[Symbol.asyncIterator]() };
    return { kind: 'result', result };
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
          const record = await this.opts.access.authenticator.lookup(secret);
          // A disabled account's keys are refused like revoked ones (access control does the same).
          if (record !== undefined && record.status === 'active' && !record.accountDisabled) continue;
          const message = record?.accountDisabled === true ? 'API key belongs to a disabled account'
            : record?.status === 'inactive' ? 'API key is inactive' : 'API key has been revoked';
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
