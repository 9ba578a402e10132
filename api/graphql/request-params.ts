// The parameters of a GraphQL request (POST body or GET query string), read strictly here
// rather than by graphql-helix (which reads POST `extension`, a typo), and the media type
// its answer is sent as.
import type { FastifyRequest } from 'fastify';
import { AppError, Errors } from '../../core/errors.ts';

export const GRAPHQL_RESPONSE = 'application/graphql-response+json';
export const JSON_TYPE = 'application/json';

/** The media type of the answer: graphql-response+json when the client accepts it, else JSON. */
export function responseType(accept: string | undefined): string {
  if (accept === undefined) return JSON_TYPE;
  const accepted = accept.split(',').map((p) => p.trim().toLowerCase()).filter((p) => !/;\s*q=0(\.0*)?\s*(;|$)/.test(p));
  return accepted.some((p) => p.startsWith(GRAPHQL_RESPONSE)) ? GRAPHQL_RESPONSE : JSON_TYPE;
}

export interface Params {
  query: string;
  operationName?: string;
  variables?: Record<string, unknown>;
  extensions?: Record<string, unknown>;
}

/** A request GraphQL-over-HTTP calls malformed: always 400, whatever the accepted type. */
const badRequest = (message: string): AppError => new AppError(Errors.invalidRequest, message);

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The request parameters of a POST body or a GET query string, strictly typed. */
export function readParams(req: FastifyRequest): Params {
  let source: Record<string, unknown>;
  const decoded = (name: string, v: unknown): unknown => {
    if (req.method !== 'GET' || v === undefined) return v;
    if (typeof v !== 'string') throw badRequest(`${name} must be given once`);
    if (name === 'query' || name === 'operationName') return v;
    try {
      return JSON.parse(v) as unknown;
    } catch {
      throw badRequest(`${name} must be a JSON object`);
    }
  };
  if (req.method === 'GET') source = (req.query ?? {}) as Record<string, unknown>;
  else if (typeof req.body === 'string') {
    // Fastify parses text/plain into a string; a GraphQL request body is JSON.
    throw new AppError(Errors.unsupportedMediaType, 'send the request as application/json (or use GET with a query string)');
  } else if (isMap(req.body)) source = req.body;
  else throw badRequest('the body must be a JSON object {"query": "...", "variables": {...}, "operationName": "...", "extensions": {...}}');

  const query = decoded('query', source.query);
  if (query === undefined || query === null) throw badRequest('query is required: the GraphQL document as a string');
  if (typeof query !== 'string') throw badRequest('query must be a string');
  const operationName = decoded('operationName', source.operationName);
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') throw badRequest('operationName must be a string');
  const variables = decoded('variables', source.variables);
  if (variables !== undefined && variables !== null && !isMap(variables)) throw badRequest('variables must be a JSON object');
  const extensions = decoded('extensions', source.extensions);
  if (extensions !== undefined && extensions !== null && !isMap(extensions)) throw badRequest('extensions must be a JSON object');
  return {
    query,
    ...(typeof operationName === 'string' ? { operationName } : {}),
    ...(isMap(variables) ? { variables } : {}),
    ...(isMap(extensions) ? { extensions } : {}),
  };
}
