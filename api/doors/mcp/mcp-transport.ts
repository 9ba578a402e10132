// The door's Streamable HTTP transport: stateless, JSON answers, POST only. It implements the
// SDK's public Transport interface, so the SDK's own Server (protocol, capabilities, handlers,
// errors) runs on it unchanged; it answers every HTTP-level case as the SDK's
// WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true }) does in stateless mode
// (test/mcp-transport.test.ts compares the two, case by case, so an SDK upgrade shows drift).
// Why our own: the SDK's transport cost more per message than a whole cached JSON-RPC call's
// own work (failing zod parses as type guards, web Headers/Response/ReadableStream), and it
// must be made anew, with a Server, for every request. This one is made once per door and
// serves every request: each request's JSON-RPC ids are given ids of their own on the way in
// (clients of different requests reuse ids, often 1) and their own back on the way out.
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { Errors, RPC_SERVER_ERROR } from '../../../core/errors.ts';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isInitializeRequest,
  JSONRPCMessageSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';

/** What the transport reads of an HTTP POST: three headers (as sent, or absent) and the parsed body. */
export interface McpPost {
  accept: string | undefined;
  contentType: string | undefined;
  protocolVersion: string | undefined;
  body: unknown;
}

/** The HTTP answer: no body for 202. */
export interface McpAnswer {
  status: number;
  /** Only the headers the SDK's transport sets. */
  headers: Record<string, string>;
  body: string | undefined;
}

const JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'content-type': 'application/json' });

/** The SDK transport's error answer (createJsonErrorResponse): same status, body text and key order. */
export const jsonRpcHttpError = (status: number, code: number, message: string): McpAnswer => ({
  status,
  headers: { ...JSON_HEADERS },
  body: JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }),
});

/** One HTTP request in flight: its requests' original ids, their answers as they come, and its context. */
interface Exchange<C> {
  readonly context: C;
  /** The distinct original ids of its requests, in order (the SDK keys its answer by id, so duplicates share one). */
  readonly ids: RequestId[];
  readonly answers: Map<RequestId, JSONRPCMessage>;
  readonly resolve: (answer: McpAnswer) => void;
  /** Our ids given to its requests, to release when it ends. */
  readonly own: number[];
  /** Its requests not answered yet, duplicates of an id included: the POST is answered only when
   *  none runs any more, so its in-flight slot and usage labels cover every call it started. */
  open: number;
}

interface Pending<C> {
  exchange: Exchange<C>;
  original: RequestId;
}

/** A request answered by the door itself (answerDirectly), while it runs: cancelled through its controller. */
interface DirectRun {
  owner: string;
  original: RequestId;
  abort: AbortController;
}

/** A single request exactly as the SDK's JSONRPCMessageSchema takes it unchanged (see plainRequest). */
export interface PlainRequest {
  jsonrpc: '2.0';
  id: string | number;
  method: string;
  params?: Record<string, unknown>;
}

/**
 * What the door answers itself, past the SDK's protocol: a result, or undefined to leave the
 * request to the Server. A rejection is worded as the SDK's protocol words a handler's throw.
 */
export type DirectAnswer<C> = (request: PlainRequest, context: C, cancelled: AbortSignal) => Promise<Record<string, unknown>> | undefined;

/** Whose requests a context carries (an API key): a cancellation names only its own sender's requests. */
export type OwnerOf<C> = (context: C) => string;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/**
 * A request (has a method and an id) among messages that JSONRPCMessageSchema accepted: the
 * union's members are strict, so only the request member has both (what isJSONRPCRequest
 * decides with another zod parse).
 */
const isRequest = (m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId; method: string } => 'method' in m && 'id' in m;

/**
 * `raw` if it is one request that JSONRPCMessageSchema would accept unchanged as a request and
 * that is not `initialize`: exactly the keys jsonrpc "2.0", id (a string or a safe integer, as
 * zod's int() takes), method (a string) and params (an object) if present. Anything else,
 * however valid, is left to the schema (narrower is always safe: the schema is the reference).
 */
function plainRequest(raw: unknown): PlainRequest | undefined {
  if (!isObject(raw) || Array.isArray(raw)) return undefined;
  for (const k in raw) if (k !== 'jsonrpc' && k !== 'id' && k !== 'method' && k !== 'params') return undefined;
  const { jsonrpc, id, method, params } = raw;
  if (jsonrpc !== '2.0' || typeof method !== 'string' || method === 'initialize') return undefined;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
  if (Object.hasOwn(raw, 'params') && (!isObject(params) || Array.isArray(params))) return undefined;
  return raw as unknown as PlainRequest;
}

/** isInitializeRequest, without its failing zod parse for every message that is not `initialize`. */
const isInitialize = (m: JSONRPCMessage): boolean => 'method' in m && m.method === 'initialize' && isInitializeRequest(m);

/** The requests of one POST, as carried to the Server: `C` is what its handlers are told of the caller. */
export class StatelessJsonTransport<C> implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  /** Stateless: no session. */
  readonly sessionId = undefined;

  private readonly pending = new Map<number, Pending<C>>();
  private nextId = 1;
  /** Where requests go: the protocol's onmessage, or its request handling itself (handRequestsTo). */
  private request?: (message: JSONRPCMessage, extra: MessageExtraInfo) => void;
  /** Requests the door answers itself (answerDirectly). */
  private direct?: DirectAnswer<C>;
  /** Requests the door answers itself, while they run. */
  private readonly directRuns = new Set<DirectRun>();

  /** `ownerOf`: whose requests a context carries, so a later POST of the same sender can cancel them. */
  constructor(private readonly ownerOf: OwnerOf<C> = () => '') {}

  /**
   * Lets the door answer single plain requests itself (a POST of one plain request, after the
   * same HTTP checks), with the answer the Server would give: the door's common tool call, past
   * the protocol's per-request machinery (an AbortController, maps, a promise chain, zod parses
   * of the request and of the result), which cost MCP a fifth of JSON-RPC's throughput on a
   * cached call (bench/RESULTS.md). test/mcp.test.ts compares its answers with the Server's.
   */
  answerDirectly(direct: DirectAnswer<C>): void {
    this.direct = direct;
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {
    for (const { exchange } of this.pending.values()) this.end(exchange);
    this.onclose?.();
  }

  /**
   * Hands requests straight to the SDK protocol's request handling (`_onrequest`: what its
   * onmessage calls for a message it finds to be a request), past the type guards its onmessage
   * runs first (isJSONRPCResultResponse and isJSONRPCErrorResponse, two failing zod parses on
   * every request, then isJSONRPCRequest). This transport has already parsed each message with
   * JSONRPCMessageSchema, whose request member alone has both an id and a method, so the guards
   * could only decide "request" again. Everything else still goes through onmessage. Call after
   * `server.connect(transport)`; false (and nothing changed) if this SDK has no such method.
   */
  handRequestsTo(server: object): boolean {
    const onrequest: unknown = (server as { _onrequest?: unknown })._onrequest;
    if (typeof onrequest !== 'function' || this.onmessage === undefined) return false;
    this.request = (message, extra) => onrequest.call(server, message, extra);
    return true;
  }

  /** The client's own id of the request being handled under our id `id`. */
  originalOf(id: RequestId): RequestId | undefined {
    return typeof id === 'number' ? this.pending.get(id)?.original : undefined;
  }

  /** The context of the request being handled under our id `id` (RequestHandlerExtra.requestId). */
  contextOf(id: RequestId): C | undefined {
    return typeof id === 'number' ? this.pending.get(id)?.exchange.context : undefined;
  }

  /** Answers one POST, in the SDK transport's order of checks (handlePostRequest). */
  async handle(post: McpPost, context: C): Promise<McpAnswer> {
    try {
      const accept = post.accept;
      if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) {
        return this.refuse(406, RPC_SERVER_ERROR, 'Not Acceptable: Client must accept both application/json and text/event-stream');
      }
      if (!isJsonContentType(post.contentType ?? null))
        return this.refuse(415, RPC_SERVER_ERROR, 'Unsupported Media Type: Content-Type must be application/json');
      const raw = post.body;
      if (Array.isArray(raw) && raw.length > MAX_BATCH_SIZE) {
        return this.refuse(400, Errors.invalidRequest.rpc, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`);
      }
      if (this.direct !== undefined) {
        const request = plainRequest(raw);
        const answer = request === undefined ? undefined : (this.version(post.protocolVersion) ?? this.answerDirect(request, context));
        if (answer !== undefined) return await answer;
      }
      let messages: JSONRPCMessage[];
      try {
        messages = Array.isArray(raw) ? raw.map((m) => JSONRPCMessageSchema.parse(m)) : [JSONRPCMessageSchema.parse(raw)];
      } catch {
        return this.refuse(400, Errors.parseError.rpc, 'Parse error: Invalid JSON-RPC message');
      }
      if (messages.some(isInitialize)) {
        if (messages.length > 1) return this.refuse(400, Errors.invalidRequest.rpc, 'Invalid Request: Only one initialization request is allowed');
      } else {
        const refused = this.version(post.protocolVersion);
        if (refused !== undefined) return refused;
      }
      if (!messages.some(isRequest)) {
        // Notifications and responses only: 202, no body. A cancellation names a request of an
        // earlier POST of the same sender still running: it stops it, and that POST answers
        // without it (the SDK's transport could only let it run to the end of its time).
        for (const m of messages) {
          if (this.isCancellation(m)) this.cancelEarlier(this.ownerOf(context), m.params.requestId);
          else this.onmessage?.(m, {});
        }
        return { status: 202, headers: {}, body: undefined };
      }
      return await new Promise<McpAnswer>((resolve) => {
        const exchange: Exchange<C> = { context, ids: [], answers: new Map(), resolve, own: [], open: 0 };
        for (const m of messages) {
          if (!isRequest(m)) continue;
          const id = this.nextId++;
          if (!exchange.ids.includes(m.id)) exchange.ids.push(m.id);
          this.pending.set(id, { exchange, original: m.id });
          exchange.own.push(id);
          exchange.open += 1;
          m.id = id;
        }
        for (const m of messages) {
          if (this.isCancellation(m)) {
            // The Server ignores a falsy requestId (0, ''): so must ours, which never is.
            const named = m.params.requestId ? this.lastOwnId(exchange, m.params.requestId) : undefined;
            if (named === undefined) this.cancelEarlier(this.ownerOf(context), m.params.requestId);
            else this.cancel(named);
            continue;
          }
          // Cancelled before it was handed over (its cancellation came first): never run.
          if (isRequest(m) && !this.pending.has(m.id as number)) continue;
          if (this.request !== undefined && isRequest(m)) this.request(m, {});
          else this.onmessage?.(m, {});
        }
      });
    } catch (error) {
      // As the SDK's transport answers anything thrown while handling a POST.
      this.onerror?.(error as Error);
      return {
        status: 400,
        headers: { ...JSON_HEADERS },
        body: JSON.stringify({ jsonrpc: '2.0', error: { code: Errors.parseError.rpc, message: 'Parse error', data: String(error) }, id: null }),
      };
    }
  }

  /**
   * The Server's messages. An answer goes to its request's POST under the original id; once
   * every request of the POST is answered, the POST is (one answer as an object, several as an
   * array, as the SDK's transport does). Anything else (a notification the Server sends) has no
   * stream to go to in a JSON answer and is dropped, as the SDK's transport drops it.
   */
  async send(message: JSONRPCMessage): Promise<void> {
    if (!('id' in message) || 'method' in message || typeof message.id !== 'number') return;
    const pending = this.pending.get(message.id);
    if (pending === undefined) return;
    const { exchange, original } = pending;
    this.pending.delete(message.id);
    exchange.open -= 1;
    // The first answer for an original id is the one the POST gets (as with the SDK's transport).
    if (!exchange.answers.has(original)) {
      message.id = original;
      exchange.answers.set(original, message);
    }
    // The SDK's transport answers once every distinct id is answered, leaving later requests of a
    // reused id running after the POST (and its in-flight slot) ended: this door waits for them.
    if (exchange.open === 0) this.finish(exchange);
  }

  /** Every request of the POST is answered or cancelled: its answer (202 when every one was cancelled). */
  private finish(exchange: Exchange<C>): void {
    this.end(exchange);
    const answers = exchange.ids.filter((id) => exchange.answers.has(id)).map((id) => exchange.answers.get(id));
    if (answers.length === 0) exchange.resolve({ status: 202, headers: {}, body: undefined });
    else exchange.resolve({ status: 200, headers: { ...JSON_HEADERS }, body: JSON.stringify(answers.length === 1 ? answers[0] : answers) });
  }

  /**
   * Cancel the request under our id `id`: the Server's handler is told (its signal aborts, and
   * the protocol sends no answer for it, as MCP asks), and its POST no longer waits for it.
   */
  private cancel(id: number): void {
    const pending = this.pending.get(id);
    if (pending === undefined) return;
    this.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } } as JSONRPCMessage, {});
    this.pending.delete(id);
    const { exchange } = pending;
    exchange.open -= 1;
    if (exchange.open === 0) this.finish(exchange);
  }

  /** Cancel `original`, the last request of that id that `owner` has running in another POST. */
  private cancelEarlier(owner: string, original: RequestId): void {
    if (!original) return;
    for (const run of this.directRuns) if (run.owner === owner && run.original === original) run.abort.abort();
    let last: number | undefined;
    for (const [id, p] of this.pending) if (p.original === original && this.ownerOf(p.exchange.context) === owner) last = id;
    if (last !== undefined) this.cancel(last);
  }

  /** The refusal of an unsupported MCP-Protocol-Version header (absent is accepted), as the SDK's transport answers it. */
  private version(version: string | undefined): McpAnswer | undefined {
    if (version === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;
    return this.refuse(
      400,
      RPC_SERVER_ERROR,
      `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
    );
  }

  /** The door's own answer to `request`, enveloped as the SDK's protocol envelopes a handler's result or throw; undefined if the door leaves it to the Server. */
  private answerDirect(request: PlainRequest, context: C): Promise<McpAnswer> | undefined {
    const run: DirectRun = { owner: this.ownerOf(context), original: request.id, abort: new AbortController() };
    const result = this.direct?.(request, context, run.abort.signal);
    if (result === undefined) return undefined;
    this.directRuns.add(run);
    const { id } = request;
    // Cancelled (by a later POST of its sender): answered at once with no body, as a request
    // whose answer MCP says is not sent; what still runs of it is dropped when it ends.
    const cancelled = new Promise<McpAnswer>((resolve) =>
      run.abort.signal.addEventListener('abort', () => resolve({ status: 202, headers: {}, body: undefined }), { once: true }),
    );
    const answered = result.then(
      (r) => ({ status: 200, headers: { ...JSON_HEADERS }, body: JSON.stringify({ result: r, jsonrpc: '2.0', id }) }),
      (error: { code?: unknown; message?: unknown; data?: unknown }) => ({
        status: 200,
        headers: { ...JSON_HEADERS },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          error: {
            code: Number.isSafeInteger(error.code) ? error.code : Errors.internal.rpc,
            message: error.message ?? 'Internal error',
            ...(error.data !== undefined && { data: error.data }),
          },
        }),
      }),
    );
    return Promise.race([answered, cancelled]).finally(() => this.directRuns.delete(run));
  }

  /** Our id of the last request of `exchange` sent under `original` (the one the SDK's protocol would cancel). */
  private lastOwnId(exchange: Exchange<C>, original: RequestId): number | undefined {
    for (let i = exchange.own.length - 1; i >= 0; i--) {
      const id = exchange.own[i]!;
      if (this.pending.get(id)?.original === original) return id;
    }
    return undefined;
  }

  private isCancellation(m: JSONRPCMessage): m is JSONRPCMessage & { params: { requestId: RequestId } } {
    return 'method' in m && !('id' in m) && m.method === 'notifications/cancelled' && isObject(m.params) && Object.hasOwn(m.params, 'requestId');
  }

  /** Forgets an exchange's ids (answered, or its client gone). */
  private end(exchange: Exchange<C>): void {
    for (const id of exchange.own) this.pending.delete(id);
  }

  private refuse(status: number, code: number, message: string): McpAnswer {
    this.onerror?.(new Error(message));
    return jsonRpcHttpError(status, code, message);
  }
}
