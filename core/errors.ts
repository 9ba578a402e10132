// One error catalog for every interface. Each entry has a stable code and its mapping
// to HTTP, JSON-RPC 2.0 and GraphQL, so the four adapters never invent their own.

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

export const Errors = {
  invalidParams: kind({ code: 'ERR_INVALID_PARAMS', http: 400, title: 'Bad Request', rpc: -32602, rpcMessage: 'Invalid params', graphql: 'BAD_USER_INPUT' }),
  invalidQuery: kind({ code: 'ERR_INVALID_QUERY', http: 400, title: 'Invalid query', rpc: -32602, rpcMessage: 'Invalid params', graphql: 'BAD_USER_INPUT' }),
  unparsableFilter: kind({ code: 'ERR_UNPARSABLE_FILTER', http: 400, title: 'Bad Request', rpc: -32000, rpcMessage: 'Server error', graphql: 'BAD_USER_INPUT' }),
  parseError: kind({ code: 'ERR_PARSE', http: 400, title: 'Bad Request', rpc: -32700, rpcMessage: 'Parse error', graphql: 'BAD_USER_INPUT' }),
  invalidRequest: kind({ code: 'ERR_INVALID_REQUEST', http: 400, title: 'Bad Request', rpc: -32600, rpcMessage: 'Invalid Request', graphql: 'BAD_USER_INPUT' }),
  methodNotFound: kind({ code: 'ERR_METHOD_NOT_FOUND', http: 404, title: 'Not Found', rpc: -32601, rpcMessage: 'Method not found', graphql: 'BAD_USER_INPUT' }),
  notFound: kind({ code: 'ERR_NOT_FOUND', http: 404, title: 'Not Found', rpc: -32602, rpcMessage: 'Invalid params', graphql: 'NOT_FOUND' }),
  unauthorized: kind({ code: 'ERR_UNAUTHORIZED', http: 401, title: 'Unauthorized', rpc: -32000, rpcMessage: 'Server error', graphql: 'UNAUTHENTICATED' }),
  forbidden: kind({ code: 'ERR_FORBIDDEN', http: 403, title: 'Forbidden', rpc: -32000, rpcMessage: 'Server error', graphql: 'FORBIDDEN' }),
  rateLimited: kind({ code: 'ERR_RATE_LIMITED', http: 429, title: 'Too Many Requests', rpc: -32000, rpcMessage: 'Server error', graphql: 'RATE_LIMITED' }),
  payloadTooLarge: kind({ code: 'ERR_PAYLOAD_TOO_LARGE', http: 413, title: 'Payload Too Large', rpc: -32600, rpcMessage: 'Invalid Request', graphql: 'BAD_USER_INPUT' }),
  // An answer past the interface's byte budget (core/limits.ts): the caller must ask for less.
  // JSON-RPC keeps to SPEC's codes: -32000 Server error, data naming the budget.
  responseTooLarge: kind({ code: 'ERR_RESPONSE_TOO_LARGE', http: 400, title: 'Response Too Large', rpc: -32000, rpcMessage: 'Server error', graphql: 'BAD_USER_INPUT' }),
  queryTimeout: kind({ code: 'ERR_QUERY_TIMEOUT', http: 408, title: 'Query Timeout', rpc: -32000, rpcMessage: 'Server error', graphql: 'QUERY_TOO_COMPLEX' }),
  unavailable: kind({ code: 'ERR_UNAVAILABLE', http: 503, title: 'Service Unavailable', rpc: -32000, rpcMessage: 'Server error', graphql: 'INTERNAL_SERVER_ERROR' }),
  internal: kind({ code: 'ERR_INTERNAL', http: 500, title: 'Internal Server Error', rpc: -32603, rpcMessage: 'Internal error', graphql: 'INTERNAL_SERVER_ERROR' }),
} as const;

export type ErrorKindName = keyof typeof Errors;

/** An error a client may see. `message` is safe to show; internals go in `cause` only. */
export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    options?: { cause?: unknown; field?: string },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.field = options?.field;
  }
  readonly field: string | undefined;
}

export const invalidParams = (message: string, field?: string): AppError =>
  new AppError(Errors.invalidParams, message, { field });

export const notFound = (message: string): AppError => new AppError(Errors.notFound, message);

/** Turn anything thrown into an AppError, hiding internals of unexpected failures. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError(Errors.internal, 'Internal error', { cause: err });
}
