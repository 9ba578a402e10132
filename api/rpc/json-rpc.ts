// The JSON-RPC 2.0 envelope, to the letter of https://www.jsonrpc.org/specification:
// single calls and batches, notifications (no id: never answered), and the standard
// errors for parse failures, invalid requests and unknown methods. Independent of HTTP.
import { Errors } from '../../core/errors.ts';
import { invalidRequest, methodNotFound, parseError, rpcError, toRpcError, type RpcErrorObject } from './rpc-errors.ts';

export type JsonRpcId = string | number | null;

export type RpcResponse =
  | { jsonrpc: '2.0'; id: JsonRpcId; result: unknown }
  | { jsonrpc: '2.0'; id: JsonRpcId; error: RpcErrorObject };

/** Most calls one batch may carry (DESIGN section 4); each call counts for rate limits. */
export const MAX_BATCH = 100;
/** Calls of one batch run at most this many at a time, so one batch cannot hog the engine. */
const BATCH_CONCURRENCY = 4;

/** The body when it was not valid JSON (a marker, since `null` is valid JSON). */
export const PARSE_FAILED: { readonly parseFailed: true } = Object.freeze({ parseFailed: true });

export interface MethodTable {
  has(name: string): boolean;
  call(name: string, params: readonly unknown[]): Promise<unknown>;
}

export interface CallContext {
  /** Called for failures that are not the caller's fault, with the reference given to the client. */
  onInternalError(err: unknown, reference: string): void;
  /** A reference a client can quote to find an internal failure in the logs. */
  reference: string;
}

const fail = (id: JsonRpcId, error: RpcErrorObject): RpcResponse => ({ jsonrpc: '2.0', id, error });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const isValidId = (id: unknown): id is JsonRpcId =>
  id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));

/** How many calls a parsed body carries (for rate limiting: each call of a batch counts). */
export function callCount(body: unknown): number {
  return Array.isArray(body) ? Math.max(body.length, 1) : 1;
}

/** Answer one parsed request object; undefined for a notification. */
async function handleCall(call: unknown, methods: MethodTable, ctx: CallContext): Promise<RpcResponse | undefined> {
  if (!isObject(call)) return fail(null, invalidRequest('a request must be a JSON object'));
  const hasId = Object.hasOwn(call, 'id');
  // An id of the wrong type cannot be echoed, so the answer carries null (JSON-RPC 2.0 section 5).
  if (hasId && !isValidId(call.id)) return fail(null, invalidRequest('id must be a string, a number or null'));
  const id: JsonRpcId = hasId ? (call.id as JsonRpcId) : null;
  if (call.jsonrpc !== '2.0') return fail(id, invalidRequest('jsonrpc must be exactly "2.0"'));
  if (typeof call.method !== 'string') {
    return fail(id, invalidRequest(Object.hasOwn(call, 'method') ? 'method must be a string' : 'method is required'));
  }
  const params = call.params;
  if (Object.hasOwn(call, 'params') && !Array.isArray(params) && !isObject(params)) {
    return fail(id, invalidRequest('params must be an array (positional parameters) when present'));
  }
  // A well-formed notification is never answered, not even with an error. Every method is
  // a read, so running one whose answer nobody receives would only cost; it is skipped.
  if (!hasId) return undefined;
  if (!methods.has(call.method)) return fail(id, methodNotFound(`unknown method "${call.method}"`));
  if (isObject(params)) {
    // JSON-RPC allows by-name params, but every method here is specified positionally.
    return fail(id, rpcError(Errors.invalidParams, 'params must be an array of positional parameters, e.g. "params": [{"limit": 10}]'));
  }
  try {
    return { jsonrpc: '2.0', id, result: await methods.call(call.method, Array.isArray(params) ? params : []) };
  } catch (err) {
    const mapped = toRpcError(err, ctx.reference);
    if (mapped.internal) ctx.onInternalError(err, ctx.reference);
    return fail(id, mapped.error);
  }
}

/**
 * Answer a parsed body: one response, an array of responses (a batch), or undefined when
 * nothing is to be sent (a notification, or a batch of only notifications).
 */
export async function handleBody(body: unknown, methods: MethodTable, ctx: CallContext): Promise<RpcResponse | RpcResponse[] | undefined> {
  if (body === PARSE_FAILED) return fail(null, parseError('the request body is not valid JSON'));
  if (!Array.isArray(body)) return handleCall(body, methods, ctx);
  if (body.length === 0) return fail(null, invalidRequest('a batch must hold at least one request'));
  if (body.length > MAX_BATCH) {
    return fail(null, invalidRequest(`a batch may hold at most ${MAX_BATCH} requests; this one holds ${body.length}`));
  }
  const answers: (RpcResponse | undefined)[] = new Array(body.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < body.length) {
      const i = next++;
      answers[i] = await handleCall(body[i], methods, ctx);
    }
  };
  await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, body.length) }, worker));
  const out = answers.filter((r): r is RpcResponse => r !== undefined);
  return out.length === 0 ? undefined : out;
}
