// One error catalog for every interface. Each entry has a stable code and its mapping
// to HTTP, JSON-RPC 2.0 and GraphQL, so the four adapters never invent their own.
import { QUOTED_PARAM_VALUE_MAX_CHARS } from './limits/questions.ts';

export interface ErrorKind {
  /** Stable machine code, e.g. ERR_INVALID_PARAMS. Never renamed once published. */
  code: string;
  /** HTTP status for REST/SQL/admin answers. */
  http: number;
  /** Short HTTP error title used as the `error` field of `{error, message}` bodies. */
  title: string;
  /** JSON-RPC 2.0 error code. */
  rpc: number;
  /** JSON-RPC error message (the spec's fixed names). */
  rpcMessage: string;
  /** GraphQL extensions.code. */
  graphql: string;
}

const kind = (k: ErrorKind): ErrorKind => Object.freeze(k);

/** x402's status: the HTTP answer to an unpaid call, and the code its MCP transport gives the
 *  same refusal inside a tool error. */
export const PAYMENT_REQUIRED_STATUS = 402;
/** JSON-RPC's implementation-defined "Server error": what MCP's transport answers for a refusal at the HTTP level, as the SDK's does. */
export const RPC_SERVER_ERROR = -32000;

/** The HTTP reason phrase of each status the service answers with: the `error` field of
 *  every `{error, message}` body comes from here (via a kind's `title`), so a 415 can never
 *  again say "Bad Request". Two kinds keep a title of their own: SPEC.md names
 *  `Invalid query` for rejected SQL, and the SQL time-out predates this table. */
export const HTTP_TITLES: Readonly<Record<number, string>> = Object.freeze({
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  411: 'Length Required',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  417: 'Expectation Failed',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  507: 'Insufficient Storage',
});

/** The title for any status: the table above, else the class's generic phrase. */
export function httpTitle(status: number): string {
  return HTTP_TITLES[status] ?? (status >= 500 ? 'Internal Server Error' : 'Bad Request');
}

/** A kind whose HTTP title is the standard one for its status. */
const std = (k: Omit<ErrorKind, 'title'>): ErrorKind => kind({ ...k, title: httpTitle(k.http) });

export const Errors = {
  invalidParams: std({ code: 'ERR_INVALID_PARAMS', http: 400, rpc: -32602, rpcMessage: 'Invalid params', graphql: 'BAD_USER_INPUT' }),
  invalidQuery: kind({ code: 'ERR_INVALID_QUERY', http: 400, title: 'Invalid query', rpc: -32602, rpcMessage: 'Invalid params', graphql: 'BAD_USER_INPUT' }),
  unparsableFilter: std({ code: 'ERR_UNPARSABLE_FILTER', http: 400, rpc: -32000, rpcMessage: 'Server error', graphql: 'BAD_USER_INPUT' }),
  parseError: std({ code: 'ERR_PARSE', http: 400, rpc: -32700, rpcMessage: 'Parse error', graphql: 'BAD_USER_INPUT' }),
  invalidRequest: std({ code: 'ERR_INVALID_REQUEST', http: 400, rpc: -32600, rpcMessage: 'Invalid Request', graphql: 'BAD_USER_INPUT' }),
  methodNotFound: std({ code: 'ERR_METHOD_NOT_FOUND', http: 404, rpc: -32601, rpcMessage: 'Method not found', graphql: 'BAD_USER_INPUT' }),
  notFound: std({ code: 'ERR_NOT_FOUND', http: 404, rpc: -32602, rpcMessage: 'Invalid params', graphql: 'NOT_FOUND' }),
  unauthorized: std({ code: 'ERR_UNAUTHORIZED', http: 401, rpc: -32000, rpcMessage: 'Server error', graphql: 'UNAUTHENTICATED' }),
  forbidden: std({ code: 'ERR_FORBIDDEN', http: 403, rpc: -32000, rpcMessage: 'Server error', graphql: 'FORBIDDEN' }),
  /** The request clashes with what exists (an account with this email). */
  conflict: std({ code: 'ERR_CONFLICT', http: 409, rpc: -32000, rpcMessage: 'Server error', graphql: 'BAD_USER_INPUT' }),
  rateLimited: std({ code: 'ERR_RATE_LIMITED', http: 429, rpc: -32000, rpcMessage: 'Server error', graphql: 'RATE_LIMITED' }),
  payloadTooLarge: std({ code: 'ERR_PAYLOAD_TOO_LARGE', http: 413, rpc: -32600, rpcMessage: 'Invalid Request', graphql: 'BAD_USER_INPUT' }),
  /** An answer over the interface's byte budget (core/limits/): the request must ask for less. */
  responseTooLarge: kind({
    code: 'ERR_RESPONSE_TOO_LARGE',
    http: 400,
    title: 'Response Too Large',
    rpc: -32000,
    rpcMessage: 'Server error',
    graphql: 'BAD_USER_INPUT',
  }),
  /** A GraphQL request over one of its limits (depth, aliases, document size) or over its
   *  plan's cost budget: refused before anything runs. */
  queryTooComplex: std({ code: 'ERR_QUERY_TOO_COMPLEX', http: 400, rpc: -32602, rpcMessage: 'Invalid params', graphql: 'QUERY_TOO_COMPLEX' }),
  queryTimeout: kind({ code: 'ERR_QUERY_TIMEOUT', http: 408, title: 'Query Timeout', rpc: -32000, rpcMessage: 'Server error', graphql: 'QUERY_TOO_COMPLEX' }),
  /** A live stream whose client did not read its events fast enough (its buffer filled): closed. */
  slowConsumer: kind({ code: 'ERR_SLOW_CONSUMER', http: 429, title: 'Too Many Requests', rpc: -32000, rpcMessage: 'Server error', graphql: 'RATE_LIMITED' }),
  unavailable: std({ code: 'ERR_UNAVAILABLE', http: 503, rpc: -32000, rpcMessage: 'Server error', graphql: 'INTERNAL_SERVER_ERROR' }),
  /** The disk under the store is full: a write was not stored; retry once space is freed. */
  storageFull: std({ code: 'ERR_STORAGE_FULL', http: 507, rpc: -32000, rpcMessage: 'Server error', graphql: 'INTERNAL_SERVER_ERROR' }),
  // Raised by the HTTP framework itself (content-type parsing, routing); no interface
  // throws these, but their bodies must carry the right title all the same.
  methodNotAllowed: std({ code: 'ERR_METHOD_NOT_ALLOWED', http: 405, rpc: -32600, rpcMessage: 'Invalid Request', graphql: 'BAD_USER_INPUT' }),
  notAcceptable: std({ code: 'ERR_NOT_ACCEPTABLE', http: 406, rpc: -32600, rpcMessage: 'Invalid Request', graphql: 'BAD_USER_INPUT' }),
  uriTooLong: std({ code: 'ERR_URI_TOO_LONG', http: 414, rpc: -32600, rpcMessage: 'Invalid Request', graphql: 'BAD_USER_INPUT' }),
  unsupportedMediaType: std({ code: 'ERR_UNSUPPORTED_MEDIA_TYPE', http: 415, rpc: -32600, rpcMessage: 'Invalid Request', graphql: 'BAD_USER_INPUT' }),
  internal: std({ code: 'ERR_INTERNAL', http: 500, rpc: -32603, rpcMessage: 'Internal error', graphql: 'INTERNAL_SERVER_ERROR' }),
} as const;

export type ErrorKindName = keyof typeof Errors;

/** An error a client may see. `message` is safe to show; internals go in `cause` only. */
export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    options?: { cause?: unknown; field?: string; retryAfterSeconds?: number },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.field = options?.field;
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
  readonly field: string | undefined;
  /** For "come back later" errors (429, 503): the Retry-After the answer carries, in whole seconds. */
  readonly retryAfterSeconds: number | undefined;
}

export const invalidParams = (message: string, field?: string): AppError => new AppError(Errors.invalidParams, message, { field });

export const notFound = (message: string): AppError => new AppError(Errors.notFound, message);

/** Turn anything thrown into an AppError, hiding internals of unexpected failures. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError(Errors.internal, 'Internal error', { cause: err });
}

const BY_STATUS = new Map<number, ErrorKind>(
  [
    Errors.invalidRequest,
    Errors.unauthorized,
    Errors.forbidden,
    Errors.notFound,
    Errors.methodNotAllowed,
    Errors.notAcceptable,
    Errors.payloadTooLarge,
    Errors.uriTooLong,
    Errors.unsupportedMediaType,
    Errors.rateLimited,
    Errors.internal,
    Errors.unavailable,
  ].map((k) => [k.http, k]),
);

/** The catalog kind for an HTTP status raised outside our code (the framework's 4xx):
 *  its standard-titled kind, or one made for that status. */
export function kindForStatus(status: number): ErrorKind {
  return (
    BY_STATUS.get(status) ??
    kind({ code: `ERR_HTTP_${status}`, http: status, title: httpTitle(status), rpc: -32600, rpcMessage: 'Invalid Request', graphql: 'BAD_USER_INPUT' })
  );
}

// ---- Parameter names: codes in the core, words at the edge ------------------------------
// The analytics layer names the parameter at fault by a logical key (the protocol, the
// protocols list, the range, the cursor) and never by an interface's spelling; each
// interface words it (JSON-RPC `options.protocolName`, REST `protocol_name`, GraphQL
// `protocols`) and adds its own hints (where to find the list of protocols).

/** Logical parameter keys the core may name; `protocols[2]` names one element of the list.
 *  `cursorBefore` is the cursor a backward page ends before (GraphQL's pagination.before). */
export type ParamKey = 'protocol' | 'protocols' | 'range' | 'cursor' | 'cursorBefore' | 'order' | ExportParamKey;

/**
 * The parts of an export job's configuration (api/services/exports/), by logical key: GraphQL words
 * them `config.columns`, `config.sampling.rate`…, the SQL export route by its body's names.
 */
export type ExportParamKey =
  | 'format'
  | 'filters'
  | 'filters.protocols'
  | 'filters.dateRange'
  | 'columns'
  | 'sampling'
  | 'sampling.strategy'
  | 'sampling.rate'
  | 'sampling.seed'
  | 'sampling.stratifyBy'
  | 'preprocessing'
  | 'preprocessing.normalize'
  | 'preprocessing.normalizeMethod'
  | 'preprocessing.oneHotEncode'
  | 'splits'
  | 'seed'
  | 'query'
  | 'job';

/** Advice only an interface can word: where the protocol list is; how to ask for coarser buckets. */
export type HintName = 'protocols' | 'coarserBucket';

/** A parameter's place in a core message, for the interface to fill in. */
export const param = (key: ParamKey, index?: number): string => `\u27e8${key}${index === undefined ? '' : `[${index}]`}\u27e9`;

/** A value as a refusal quotes it, cut short: a number JSON cannot write (Infinity) as itself, and
 *  one nested past the stack (from a door that does not bound its depth first) by its kind, never a 500. */
export function quoted(v: unknown): string {
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  try {
    return (JSON.stringify(v) ?? String(v)).slice(0, QUOTED_PARAM_VALUE_MAX_CHARS);
  } catch {
    return Array.isArray(v) ? '[…]' : '{…}';
  }
}

/** A hint's place in a core message (e.g. where the list of protocols is). */
export const hint = (name: HintName): string => `\u27e8hint:${name}\u27e9`;

export interface Wording {
  /** The interface's name for a logical key (the key itself when it has none). */
  params: Partial<Record<ParamKey, string>>;
  hints: Record<HintName, string>;
  /** Keys the interface takes one value of where the request holds a list (REST's one
   *  protocol_name): an item's index is not shown, as that parameter has none. */
  single?: readonly ParamKey[];
}

/** The message with every placeholder in the interface's words. */
export function wordMessage(message: string, words: Wording): string {
  return message.replace(/\u27e8(hint:)?([a-zA-Z.]+)(\[\d+\])?\u27e9/g, (_m, isHint: string | undefined, key: string, index: string | undefined) =>
    isHint
      ? (words.hints[key as HintName] ?? key)
      : `${words.params[key as ParamKey] ?? key}${index === undefined || words.single?.includes(key as ParamKey) ? '' : index}`,
  );
}

/** An AppError worded for an interface (other errors pass through unchanged). */
export function worded(err: unknown, words: Wording): unknown {
  if (!(err instanceof AppError) || !err.message.includes('\u27e8')) return err;
  const out = new AppError(err.kind, wordMessage(err.message, words), { cause: err.cause, field: err.field, retryAfterSeconds: err.retryAfterSeconds });
  return out;
}

// ---- The engine's own error codes (ClickHouse), which the warehouse translates ----------

/** ClickHouse error codes the service reacts to. */
export const ClickHouseCode = {
  SYNTAX_ERROR: 62,
  TIMEOUT_EXCEEDED: 159,
  QUERY_WAS_CANCELLED: 394,
  TOO_MANY_ROWS: 158,
  /** Result or read rows/bytes over a limit (the newer code of TOO_MANY_ROWS). */
  TOO_MANY_ROWS_OR_BYTES: 396,
  /** A join's in-memory table over max_rows_in_join / max_bytes_in_join. */
  SET_SIZE_LIMIT_EXCEEDED: 191,
  MEMORY_LIMIT_EXCEEDED: 241,
  READONLY: 164,
  NOT_ENOUGH_SPACE: 243,
  /** A table of that name exists (the migration lock is held: migration-lock.ts). */
  TABLE_ALREADY_EXISTS: 57,
  UNKNOWN_TABLE: 60,
} as const;

/** ClickHouse error codes of reading an insert's input itself: the input's fault, not the store's. */
export const CLICKHOUSE_INPUT_FORMAT_CODES: readonly number[] = [
  6, // CANNOT_PARSE_TEXT
  26, // CANNOT_PARSE_QUOTED_STRING
  27, // CANNOT_PARSE_INPUT_ASSERTION_FAILED
  32, // ATTEMPT_TO_READ_AFTER_EOF
  38, // CANNOT_PARSE_DATE
  41, // CANNOT_PARSE_DATETIME
  69, // ARGUMENT_OUT_OF_BOUND
  70, // CANNOT_CONVERT_TYPE
  72, // CANNOT_PARSE_NUMBER
  117, // INCORRECT_DATA
  130, // CANNOT_READ_ARRAY_FROM_TEXT
  131, // TOO_LARGE_STRING_SIZE
];
