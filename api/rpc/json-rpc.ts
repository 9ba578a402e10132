// The JSON-RPC 2.0 envelope, to the letter of https://www.jsonrpc.org/specification:
// single calls and batches, notifications (no id: never answered), and the standard
// errors for parse failures, invalid requests and unknown methods. Independent of HTTP.
// Also the guards against hostile bodies: ids that cannot be echoed exactly, params
// nested too deep, and answers past the response byte budget (core/limits.ts).
import { Errors } from '../../core/errors.ts';
import { fitsBudget, formatBytes, MAX_PARAMS_DEPTH, RPC_BATCH_CONCURRENCY, RPC_MAX_BATCH, RPC_RESPONSE_BUDGET_BYTES } from '../../core/limits.ts';
import { deeperThan } from '../catalog/method-calls.ts';
import { echoesExactly, inexactNestedNumbers, numericIdTokens } from './raw-ids.ts';
import { invalidRequest, methodNotFound, parseError, rpcError, toRpcError, type RpcErrorObject } from './rpc-errors.ts';

export type JsonRpcId = string | number | null;

export type RpcResponse =
  | { jsonrpc: '2.0'; id: JsonRpcId; result: unknown }
  | { jsonrpc: '2.0'; id: JsonRpcId; error: RpcErrorObject };

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
  /** Byte budget of the whole response; RPC_RESPONSE_BUDGET_BYTES unless set (tests). */
  budgetBytes?: number;
  /** Told of each answer once it is final, in request order (not of notifications, which
   *  get none): the call's method as sent (undefined without one) and whether the answer is
   *  an error. Usage records are kept from this (api/access/access-control.ts). */
  onAnswer?(method: string | undefined, error: boolean): void;
  /** Hold an answer's bytes in its plan's answer memory (core/budget.ts) until the response is
   *  sent; false when the plan's answers in flight already fill it (the call then answers busy). */
  reserveAnswer?(bytes: number): boolean;
}

const fail = (id: JsonRpcId, error: RpcErrorObject): RpcResponse => ({ jsonrpc: '2.0', id, error });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const methodOf = (call: unknown): string | undefined =>
  isObject(call) && typeof call.method === 'string' ? call.method : undefined;

const isValidId = (id: unknown): id is JsonRpcId =>
  id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));

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

/** What can make JSON.parse lose digits: a fraction or an exponent (a digit before a decimal
 *  point or an exponent; a number's last integer digit never follows a quote), or 16 digits in
 *  a row (an integer past 2^53 has at least 16); strings that look alike just let the scans
 *  run. The "2.0" every call carries as its version is no number. */
const MAYBE_INEXACT = /(?<!")\d[.eE]|\d[eE]|\d\.(?!0")|\d{16}/;

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
  // integers, was parsed exactly, and the scans of raw-ids.ts (a pass over the text each) are
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
      answer: fail(null, invalidRequest(`id ${String(call.id)} is not the number that was sent: numeric ids must be integers `
        + `within ±${Number.MAX_SAFE_INTEGER} (or numbers that survive a JSON round trip exactly); send large ids as strings`)),
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
    return { answer: fail(id, rpcError(Errors.invalidParams, `params are nested more than ${MAX_PARAMS_DEPTH} levels deep (arrays and objects); no method takes anything that deep`)) };
  }
  const inexact = body.inexactParams.get(at);
  if (inexact !== undefined) {
    return { answer: fail(id, rpcError(Errors.invalidParams, `params: the number ${inexact.slice(0, 40)} cannot be represented exactly (JSON numbers are doubles) and would be read as ${JSON.stringify(Number(inexact))}; send the value you mean, e.g. a whole number of seconds`)) };
  }
  if (isObject(params)) {
    // JSON-RPC allows by-name params, but every method here is specified positionally.
    return { answer: fail(id, rpcError(Errors.invalidParams, 'params must be an array of positional parameters, e.g. "params": [{"limit": 10}]')) };
  }
  return { run: { id, method: call.method, params } };
}

async function run(r: Runnable, methods: MethodTable, ctx: CallContext): Promise<RpcResponse> {
  try {
    return { jsonrpc: '2.0', id: r.id, result: await methods.call(r.method, Array.isArray(r.params) ? r.params : []) };
  } catch (err) {
    const mapped = toRpcError(err, ctx.reference);
    if (mapped.internal) ctx.onInternalError(err, ctx.reference);
    return fail(r.id, mapped.error);
  }
}

const busy = (id: JsonRpcId): string => JSON.stringify(fail(id, rpcError(Errors.rateLimited,
  'the answers of this plan\'s requests in flight fill its answer memory; retry shortly, or ask for fewer records per call')));

/** The call's text, or the busy error when its plan's answer memory cannot hold it. */
const held = (text: string, id: JsonRpcId, ctx: CallContext): string =>
  ctx.reserveAnswer === undefined || ctx.reserveAnswer(Buffer.byteLength(text, 'utf8')) ? text : busy(id);

const overBudget = (id: JsonRpcId, budget: number): string => JSON.stringify(fail(id, rpcError(Errors.responseTooLarge,
  `this answer would take the response past its ${formatBytes(budget)} budget; ask for fewer records `
  + '(a smaller limit, then page with paginationToken) or send fewer calls per batch')));

/** One answer of a batch. */
interface Answered {
  /** Its JSON text; '' for a call not run because the budget was already used up. */
  text: string;
  id: JsonRpcId;
  /** It passed the envelope checks, so past the budget it gets the budget error instead. */
  runnable: boolean;
  error: boolean;
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
  if (!Array.isArray(body)) {
    const e = envelope(parsed, 0, methods);
    if ('answer' in e) {
      if (e.answer !== undefined) ctx.onAnswer?.(methodOf(body), true);
      return e.answer === undefined ? undefined : JSON.stringify(e.answer);
    }
    const response = await run(e.run, methods, ctx);
    const text = JSON.stringify(response);
    const fits = fitsBudget(text, budget);
    const answer = fits ? held(text, e.run.id, ctx) : overBudget(e.run.id, budget);
    ctx.onAnswer?.(e.run.method, answer !== text || 'error' in response);
    return answer;
  }
  if (body.length === 0 || body.length > RPC_MAX_BATCH) ctx.onAnswer?.(undefined, true);
  if (body.length === 0) return JSON.stringify(fail(null, invalidRequest('a batch must hold at least one request')));
  if (body.length > RPC_MAX_BATCH) {
    return JSON.stringify(fail(null, invalidRequest(`a batch may hold at most ${RPC_MAX_BATCH} requests; this one holds ${body.length}`)));
  }

  const answers: (Answered | undefined)[] = new Array(body.length);
  // Bytes of the answers finished so far. They all precede the next call to start, so once
  // they pass the budget no later call can fit: it is not run (its answer would be dropped).
  let finishedBytes = 2;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < body.length) {
      const i = next++;
      const e = envelope(parsed, i, methods);
      if ('answer' in e) {
        answers[i] = e.answer === undefined ? undefined : { text: JSON.stringify(e.answer), id: e.answer.id, runnable: false, error: true };
      } else if (finishedBytes > budget) {
        answers[i] = { text: '', id: e.run.id, runnable: true, error: true };
      } else {
        const response = await run(e.run, methods, ctx);
        const raw = JSON.stringify(response);
        const text = held(raw, e.run.id, ctx);
        answers[i] = { text, id: e.run.id, runnable: true, error: text !== raw || 'error' in response };
        finishedBytes += Buffer.byteLength(text, 'utf8') + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(RPC_BATCH_CONCURRENCY, body.length) }, worker));

  // In request order: keep answers while the running total fits, then budget errors.
  const out: string[] = [];
  let used = 2; // the brackets
  let exhausted = false;
  for (const [i, a] of answers.entries()) {
    if (a === undefined) continue;
    let text = a.text;
    let error = a.error;
    const bytes = text === '' ? Infinity : Buffer.byteLength(text, 'utf8') + 1;
    if (a.runnable && (exhausted || used + bytes > budget)) {
      exhausted = true;
      text = overBudget(a.id, budget);
      error = true;
    } else {
      used += bytes;
    }
    ctx.onAnswer?.(methodOf(body[i]), error);
    out.push(text);
  }
  return out.length === 0 ? undefined : `[${out.join(',')}]`;
}
