// Reading a GraphQL-over-HTTP request, for both GraphQL routes: POST/GET /graphql (queries
// and mutations) and GET/POST /graphql/stream (subscriptions). The parameters are read
// strictly here rather than by graphql-helix (which reads POST `extension`, a typo), with
// one set of rules: a GET's parameters come from the query string, each at most once, the
// JSON ones decoded; a POST's from a JSON object body; every parameter's type checked. The
// routes differ only in what they say and in two rules (the `Door` below). Also here: the
// media types each route answers in, and the GraphQL-shaped error answer of /graphql.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, Errors, kindForStatus, type ErrorKind } from '../../../core/errors.ts';
import { GRAPHQL_BODY_LIMIT_BYTES } from '../../../core/limits/graphql.ts';
import { MAX_PARAMS_DEPTH } from '../../../core/limits/http.ts';
import { deeperThan } from '../../services/positional/positional-calls.ts';
import { buildExtensions } from './extensions.ts';

export const GRAPHQL_RESPONSE = 'application/graphql-response+json';
export const JSON_TYPE = 'application/json';

/** The media type of the answer: graphql-response+json when the client accepts it, else JSON. */
export function responseType(accept: string | undefined): string {
  if (accept === undefined) return JSON_TYPE;
  const accepted = accept
    .split(',')
    .map((p) => p.trim().toLowerCase())
    .filter((p) => !/;\s*q=0(\.0*)?\s*(;|$)/.test(p));
  return accepted.some((p) => p.startsWith(GRAPHQL_RESPONSE)) ? GRAPHQL_RESPONSE : JSON_TYPE;
}

/** Does the Accept header allow an event stream (absent, text/event-stream, text/*, or * / *)? */
export function acceptsEventStream(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return accept.split(',').some((part) => {
    const type = part.split(';')[0]!.trim().toLowerCase();
    return type === 'text/event-stream' || type === 'text/*' || type === '*/*';
  });
}

export interface Params {
  query: string;
  operationName?: string;
  variables?: Record<string, unknown>;
  extensions?: Record<string, unknown>;
}

/**
 * Which route reads: `query` is /graphql, `stream` is /graphql/stream. The stream route
 * also refuses a POST that does not say application/json and a blank query (it has no
 * parser error to report them with before the stream starts), and does not read
 * `extensions`; each words its refusals as its documentation does.
 */
export type Door = 'query' | 'stream';

const WORDS: Readonly<
  Record<
    Door,
    {
      repeated(name: string): string;
      notJson(name: string): string;
      mediaType: string;
      notObject: string;
      noQuery: string;
      queryNotString: string;
      notMap(name: string): string;
      notString(name: string): string;
    }
  >
> = {
  query: {
    repeated: (name) => `${name} must be given once`,
    notJson: (name) => `${name} must be a JSON object`,
    mediaType: 'send the request as application/json (or use GET with a query string)',
    notObject: 'the body must be a JSON object {"query": "...", "variables": {...}, "operationName": "...", "extensions": {...}}',
    noQuery: 'query is required: the GraphQL document as a string',
    queryNotString: 'query must be a string',
    notMap: (name) => `${name} must be a JSON object`,
    notString: (name) => `${name} must be a string`,
  },
  stream: {
    repeated: (name) => `the query parameter "${name}" is given more than once`,
    notJson: (name) => `the query parameter "${name}" is not valid JSON`,
    mediaType: 'send the subscription as application/json {query, variables?, operationName?}, or as GET query parameters',
    notObject: 'the request body must be a JSON object {query, variables?, operationName?}',
    noQuery: '"query" must be a non-empty string holding a subscription',
    queryNotString: '"query" must be a non-empty string holding a subscription',
    notMap: (name) => `"${name}" must be a JSON object`,
    notString: (name) => `"${name}" must be a string`,
  },
};

/** A request GraphQL-over-HTTP calls malformed: always 400, whatever the accepted type. */
const badRequest = (message: string): AppError => new AppError(Errors.invalidRequest, message);

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The request parameters of a POST body or a GET query string, strictly typed; 400 (or 415) when malformed. */
export function readParams(req: FastifyRequest, door: Door = 'query'): Params {
  const say = WORDS[door];
  let source: Record<string, unknown>;
  const decoded = (name: string, v: unknown): unknown => {
    if (req.method !== 'GET' || v === undefined) return v;
    if (typeof v !== 'string') throw badRequest(say.repeated(name));
    if (name === 'query' || name === 'operationName') return v;
    try {
      return JSON.parse(v) as unknown;
    } catch {
      throw badRequest(say.notJson(name));
    }
  };
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  if (req.method === 'GET') source = (req.query ?? {}) as Record<string, unknown>;
  // Fastify parses text/plain into a string; a GraphQL request body is JSON.
  else if (typeof req.body === 'string' || (door === 'stream' && type !== JSON_TYPE)) throw new AppError(Errors.unsupportedMediaType, say.mediaType);
  else if (isMap(req.body)) source = req.body;
  else throw badRequest(say.notObject);

  const query = decoded('query', source.query);
  if (query === undefined || query === null) throw badRequest(say.noQuery);
  if (typeof query !== 'string') throw badRequest(say.queryNotString);
  if (door === 'stream' && query.trim() === '') throw badRequest(say.noQuery);
  const operationName = decoded('operationName', source.operationName);
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') throw badRequest(say.notString('operationName'));
  const variables = decoded('variables', source.variables);
  if (variables !== undefined && variables !== null && !isMap(variables)) throw badRequest(say.notMap('variables'));
  // Refused before anything reads them: a value thousands of levels deep overflows the stack
  // of whatever walks it (the answer cache's JSON.stringify did: a 500). No input type nests so deep.
  if (deeperThan(variables, MAX_PARAMS_DEPTH)) {
    throw badRequest(`variables are nested more than ${MAX_PARAMS_DEPTH} levels deep (lists and objects); no argument takes anything that deep`);
  }
  const extensions = door === 'stream' ? undefined : decoded('extensions', source.extensions);
  if (extensions !== undefined && extensions !== null && !isMap(extensions)) throw badRequest(say.notMap('extensions'));
  return {
    query,
    ...(typeof operationName === 'string' ? { operationName } : {}),
    ...(isMap(variables) ? { variables } : {}),
    ...(isMap(extensions) ? { extensions } : {}),
  };
}

/**
 * An error answered outside an execution result on /graphql (authentication, rate limit,
 * body parsing, malformed parameters): the GraphQL error shape with the error's status and
 * the request's cost figures. (/graphql/stream answers these like every other route,
 * `{error, message}`, before its stream starts, and in the stream as a `next` event after.)
 */
export function sendGraphqlError(err: unknown, req: FastifyRequest, reply: FastifyReply, cost: { requested: number; budget: number }): FastifyReply {
  const fe = err as Partial<FastifyError> | null;
  let kind: ErrorKind;
  let message: string;
  if (err instanceof AppError) {
    kind = err.kind;
    message = kind.http >= 500 ? 'Internal error' : err.message;
    if (kind.http >= 500) req.log.error({ err }, 'GraphQL request failed');
  } else if (typeof fe?.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    kind = kindForStatus(fe.statusCode);
    message =
      fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY'
        ? 'request body is not valid JSON'
        : fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
          ? 'request body is empty; send {"query": "..."}'
          : fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
            ? 'send the request as application/json (or use GET with a query string)'
            : fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
              ? `request body is larger than ${GRAPHQL_BODY_LIMIT_BYTES} bytes`
              : String(fe.message ?? kind.title);
  } else {
    req.log.error({ err }, 'GraphQL request failed');
    kind = Errors.internal;
    message = 'Internal error';
  }
  if (err instanceof AppError && err.retryAfterSeconds !== undefined) reply.header('retry-after', String(err.retryAfterSeconds));
  return reply
    .code(kind.http)
    .header('content-type', `${responseType(req.headers.accept)}; charset=utf-8`)
    .send({ errors: [{ message, extensions: { code: kind.graphql } }], extensions: buildExtensions({ cost }) });
}
