// The JSON-RPC 2.0 envelope, to the letter of https://www.jsonrpc.org/specification:
// single calls and batches, notifications (no id: never answered), and the standard
// errors for parse failures, invalid requests and unknown methods. Independent of HTTP.
// Also the guards against hostile bodies: ids that cannot be echoed exactly, params
// nested too deep, and answers past the response byte budget (core/limits/).
import type { Budget } from '../../../core/budget.ts';
import { AppError, Errors } from '../../../core/errors.ts';
import { formatBytes, RPC_RESPONSE_BUDGET_BYTES } from '../../../core/limits/answers.ts';
import { RPC_MAX_BATCH } from '../../../core/limits/batches.ts';
import { MAX_PARAMS_DEPTH } from '../../../core/limits/http.ts';
import { AnswerBatch, setAsideBytes, type MemberOutcome } from '../../services/answers/answer-batch.ts';
import { deeperThan } from '../../services/positional/positional-calls.ts';
import { echoesExactly, inexactNestedNumbers, inexactNumberWords, MAYBE_INEXACT, numericIdTokens } from '../../services/positional/raw-numbers.ts';
import { invalidRequest, methodNotFound, parseError, rpcError, toRpcError, type RpcErrorObject } from './rpc-errors.ts';

export type JsonRpcId = string | number | null;

export type RpcResponse = { jsonrpc: '2.0'; id: JsonRpcId; result: unknown } | { jsonrpc: '2.0'; id: JsonRpcId; error: RpcErrorObject };

/** The body when it was not valid JSON (a marker, since `null` is valid JSON). */
export const PARSE_FAILED: { readonly parseFailed: true } = Object.freeze({ parseFailed: true });

export interface MethodTable {
  has(name: string): boolean;
  /** Run `name` with every statement under `budget` (a call's own: its answer capped at what it reserved). */
  call(name: string, params: readonly unknown[], budget: Budget | null): Promise<unknown>;
}

export interface CallContext {
  /** Called for failures that are not the caller's fault, with the reference given to the client. */
  onInternalError(err: unknown, reference: string): void;
  /** A reference a client can quote to find an internal failure in the logs. */
  reference: string;
  /** Byte budget of the whole response; RPC_RESPONSE_BUDGET_BYTES unless set (tests). */
  budgetBytes?: number;
  /** Told of each answer once it is final, in request order (not of notifications, which
   *  get none): the call's method as sent (undefined without one) and whether the answer is
   *  an error. Usage records are kept from this (api/services/access/access-control.ts). */
  onAnswer?(method: string | undefined, error: boolean): void;
  /** The request's budget: every call runs under it, its answer bytes reserved before it is
   *  built (api/services/answers/answer-batch.ts); null on a bare app without access control. */
  budget: Budget | null;
}

const fail = (id: JsonRpcId, error: RpcErrorObject): RpcResponse => ({ jsonrpc: '2.0', id, error });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const methodOf = (call: unknown): string | undefined => (isObject(call) && typeof call.method === 'string' ? call.method : undefined);

const isValidId = (id: unknown): id is JsonRpcId => id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));

/**
 * A request body as parsed, with what the raw text told of its calls that JSON.parse lost.
 * Calls are named by position (0 for a lone call, the index in a batch).
 */
export interface RpcBody {
  /** The parsed JSON (an array for a batch), or PARSE_FAILED. */
  readonly value: unknown;
  /** Calls whose numeric id JSON.parse could not keep exactly. */
  readonly inexactIds: ReadonlySet<number>;
  /** Calls whose params hold a number JSON.parse could not keep exactly, with its text. */
  readonly inexactParams: ReadonlyMap<number, string>;
}

/** A body that was not valid JSON, or none at all. */
export const unparsedBody = (): RpcBody => ({ value: PARSE_FAILED, inexactIds: new Set(), inexactParams: new Map() });

/**
 * Parse a request body: the parsed JSON (or PARSE_FAILED) with its calls' marks. A call
 * whose numeric id lost digits in parsing is marked (from the raw text), so it is refused
 * rather than answered with an id the client never sent.
 */
export function parseRpcBody(raw: string): RpcBody {
  // One leading UTF-8 byte order mark is no part of the JSON text (RFC 8259 section 8.1 lets a
  // parser ignore it); the other doors' parser (Fastify's, secure-json-parse) drops it too.
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return unparsedBody();
  }
  const calls = Array.isArray(value) ? value : [value];
  const inexactIds = new Set<number>();
  const inexactParams = new Map<number, string>();
  // A body without a fraction, an exponent or a 16-digit run, whose numeric ids are all safe
  // integers, was parsed exactly, and the scans of raw-numbers.ts (a pass over the text each) are
  // skipped. That is the common body, and the cheapest calls feel the scans.
  const maybeInexact = MAYBE_INEXACT.test(text);
  // The scan costs a pass over the text; only bodies with a numeric id need it.
  if (calls.some((c) => isObject(c) && typeof c.id === 'number' && (maybeInexact || !Number.isSafeInteger(c.id)))) {
    const tokens = numericIdTokens(text);
    calls.forEach((c, i) => {
      if (isObject(c) && typeof c.id === 'number' && !echoesExactly(tokens[i], c.id)) inexactIds.add(i);
    });
  }
  if (maybeInexact) {
    inexactNestedNumbers(text).forEach((token, i) => {
      if (token !== undefined && isObject(calls[i])) inexactParams.set(i, token);
    });
  }
  return { value, inexactIds, inexactParams };
}

/** A call that passed the envelope checks, ready to run. */
interface Runnable {
  id: JsonRpcId;
  method: string;
  params: unknown;
}

/** Envelope checks of the request object at `at` of `body`: a final answer (undefined for a notification) or a call to run. */
function envelope(body: RpcBody, at: number, methods: MethodTable): { answer: RpcResponse | undefined } | { run: Runnable } {
  const call = Array.isArray(body.value) ? body.value[at] : body.value;
  if (!isObject(call)) return { answer: fail(null, invalidRequest('a request must be a JSON object')) };
  const hasId = Object.hasOwn(call, 'id');
  // An id of the wrong type cannot be echoed, so the answer carries null (JSON-RPC 2.0 section 5).
  if (hasId && !isValidId(call.id)) return { answer: fail(null, invalidRequest('id must be a string, a number or null')) };
  if (hasId && body.inexactIds.has(at)) {
    return {
      answer: fail(
        null,
        invalidRequest(
          `id ${String(call.id)} is not the number that was sent: numeric ids must be integers ` +
            `within ±${Number.MAX_SAFE_INTEGER} (or numbers that survive a JSON round trip exactly); send large ids as strings`,
        ),
      ),
    };
  }
  const id: JsonRpcId = hasId ? (call.id as JsonRpcId) : null;
  if (call.jsonrpc !== '2.0') return { answer: fail(id, invalidRequest('jsonrpc must be exactly "2.0"')) };
  if (typeof call.method !== 'string') {
    return { answer: fail(id, invalidRequest(Object.hasOwn(call, 'method') ? 'method must be a string' : 'method is required')) };
  }
  const params = call.params;
  if (Object.hasOwn(call, 'params') && !Array.isArray(params) && !isObject(params)) {
    return { answer: fail(id, invalidRequest('params must be an array (positional parameters) when present')) };
  }
  // A well-formed notification is never answered, not even with an error. Every method is
  // a read, so running one whose answer nobody receives would only cost; it is skipped.
  if (!hasId) return { answer: undefined };
  if (!methods.has(call.method)) return { answer: fail(id, methodNotFound(`unknown method "${call.method}"`)) };
  // Before validation: schema checks and error messages recurse into the value.
  if (deeperThan(params, MAX_PARAMS_DEPTH)) {
    return {
      answer: fail(
        id,
        rpcError(Errors.invalidParams, `params are nested more than ${MAX_PARAMS_DEPTH} levels deep (arrays and objects); no method takes anything that deep`),
      ),
    };
  }
  const inexact = body.inexactParams.get(at);
  if (inexact !== undefined) {
    return {
      answer: fail(id, rpcError(Errors.invalidParams, `params: ${inexactNumberWords(inexact)}`)),
    };
  }
  if (isObject(params)) {
    // JSON-RPC allows by-name params, but every method here is specified positionally.
    return { answer: fail(id, rpcError(Errors.invalidParams, 'params must be an array of positional parameters, e.g. "params": [{"limit": 10}]')) };
  }
  return { run: { id, method: call.method, params } };
}

/** A call's answer text, built under its own budget; what it throws goes to the batch executor. */
async function callText(r: Runnable, methods: MethodTable, budget: Budget | null): Promise<string> {
  const result = await methods.call(r.method, Array.isArray(r.params) ? r.params : [], budget);
  return JSON.stringify({ jsonrpc: '2.0', id: r.id, result });
}

const busy = (id: JsonRpcId): string =>
  JSON.stringify(
    fail(
      id,
      rpcError(Errors.rateLimited, "the answers of this plan's requests in flight fill its answer memory; retry shortly, or ask for fewer records per call"),
    ),
  );

const overBudget = (id: JsonRpcId, budget: number): string =>
  JSON.stringify(
    fail(
      id,
      rpcError(
        Errors.responseTooLarge,
        `this answer would take the response past its ${formatBytes(budget)} budget; ask for fewer records ` +
          '(a smaller limit, then page with paginationToken) or send fewer calls per batch',
      ),
    ),
  );

const ended = (id: JsonRpcId): string =>
  JSON.stringify(fail(id, rpcError(Errors.queryTimeout, 'the request ended (its client left, or it ran past its time budget) before this call ran')));

/** A call's outcome from the batch executor as its JSON-RPC answer text, and whether it is an error. */
function worded(o: MemberOutcome, r: Runnable, budget: number, ctx: CallContext): { text: string; error: boolean } {
  if ('text' in o) return { text: o.text, error: false };
  if ('refused' in o) {
    const text = o.refused === 'busy' ? busy(r.id) : o.refused === 'overBudget' ? overBudget(r.id, budget) : ended(r.id);
    return { text, error: true };
  }
  // Too large with all the batch had left: worded as the budget it passed.
  if (o.thrown instanceof AppError && o.thrown.kind === Errors.responseTooLarge) return { text: overBudget(r.id, budget), error: true };
  const mapped = toRpcError(o.thrown, ctx.reference);
  if (mapped.internal) ctx.onInternalError(o.thrown, ctx.reference);
  return { text: JSON.stringify(fail(r.id, mapped.error)), error: true };
}

/**
 * Answer a parsed body, as the JSON text to send: one response, an array of responses (a
 * batch), or undefined when nothing is to be sent (a notification, or a batch of only
 * notifications). The text stays within the byte budget: answers are kept in request
 * order while the running total fits; the call that would pass the budget, and every call
 * after it, is answered with a -32000 error naming the budget instead of its result.
 */
export async function handleBody(parsed: RpcBody, methods: MethodTable, ctx: CallContext): Promise<string | undefined> {
  const body = parsed.value;
  const budget = ctx.budgetBytes ?? RPC_RESPONSE_BUDGET_BYTES;
  if (body === PARSE_FAILED) {
    ctx.onAnswer?.(undefined, true);
    return JSON.stringify(fail(null, parseError('the request body is not valid JSON')));
  }
  const calls = Array.isArray(body) ? body : [body];
  if (Array.isArray(body) && (body.length === 0 || body.length > RPC_MAX_BATCH)) {
    ctx.onAnswer?.(undefined, true);
    return JSON.stringify(
      fail(
        null,
        invalidRequest(
          body.length === 0 ? 'a batch must hold at least one request' : `a batch may hold at most ${RPC_MAX_BATCH} requests; this one holds ${body.length}`,
        ),
      ),
    );
  }
  // The envelope's own answers first: their bytes (an unknown method's name, an id of any
  // length, echoed) are set aside with each call's room for its refusal before any call runs.
  const checked = calls.map((_, i) => {
    const e = envelope(parsed, i, methods);
    return 'answer' in e ? { answer: e.answer === undefined ? undefined : JSON.stringify(e.answer) } : e;
  });
  let fixed = 0;
  for (const e of checked) if ('answer' in e && e.answer !== undefined) fixed += Buffer.byteLength(e.answer) + 1;
  const ids = checked.flatMap((e) => ('run' in e ? [e.run.id] : []));
  // Every call, a lone one too, runs through the batch executor: its answer bytes reserved
  // against the budget before it is built, and none started once the request has ended.
  const batch = new AnswerBatch({ budget: ctx.budget, answerBytes: budget, members: ids.length, setAside: setAsideBytes(ids, fixed) });
  const answers = await Promise.all(
    checked.map(async (e): Promise<{ text: string; error: boolean } | undefined> => {
      if ('answer' in e) return e.answer === undefined ? undefined : { text: e.answer, error: true };
      const r = e.run;
      return worded(await batch.run((b) => callText(r, methods, b)), r, budget, ctx);
    }),
  );
  const out: string[] = [];
  answers.forEach((a, i) => {
    if (a === undefined) return;
    ctx.onAnswer?.(methodOf(calls[i]), a.error);
    out.push(a.text);
  });
  if (!Array.isArray(body)) return out[0];
  return out.length === 0 ? undefined : `[${out.join(',')}]`;
}
