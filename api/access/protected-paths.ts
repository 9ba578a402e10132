// Which requests need an API key, and which interface a request belongs to. Decided by
// path, not by route registration, so routes other modules add later (/v1/rpc,
// /api/v1/*, /v1/query, /graphql) are protected without touching this code.
import { RPC_MAX_BATCH } from '../../core/limits.ts';

/** Paths that never need an API key: the health check, the operator API (its own bearer
 *  token), /metrics (admin or metrics token), and the REST/SQL API description (the OpenAPI
 *  document and its docs page, which a browser loads without a key; they hold no data).
 *  Everything else does, unknown paths included. */
export function isExempt(path: string): boolean {
  return path === '/health' || path === '/metrics' || path === '/admin' || path.startsWith('/admin/') ||
    path === '/api/v1/openapi.json' || path === '/api/v1/docs' || path.startsWith('/api/v1/docs/');
}

export type Interface = 'rpc' | 'sql' | 'rest' | 'graphql' | 'other';

export function interfaceOf(path: string): Interface {
  if (path === '/v1/rpc') return 'rpc';
  if (path === '/v1/query' || path === '/api/v1/query') return 'sql';
  if (path === '/api/v1' || path.startsWith('/api/v1/')) return 'rest';
  if (path === '/graphql' || path.startsWith('/graphql/')) return 'graphql';
  return 'other';
}

/** The path of a raw request URL, without the query string. */
export const pathOf = (url: string): string => {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
};

const RPC_METHOD = /^[A-Za-z][A-Za-z0-9_.]{0,63}$/;

/** JSON-RPC method names of a parsed request body (one per call of a batch); names that
 *  could not be real methods are folded into one value so labels stay few. */
export function rpcMethods(body: unknown): string[] {
  const calls = Array.isArray(body) ? body : [body];
  return calls.map((c) => {
    const m = typeof c === 'object' && c !== null ? (c as { method?: unknown }).method : undefined;
    return typeof m === 'string' && RPC_METHOD.test(m) ? m : '(invalid)';
  });
}

/**
 * How many requests a parsed JSON-RPC body counts for against the rate limit: each call of
 * a batch counts, but a batch refused as a whole (empty, or more than RPC_MAX_BATCH calls)
 * runs no call and counts once, like any other refused request.
 */
export function rpcCallCount(body: unknown): number {
  if (!Array.isArray(body)) return 1;
  return body.length === 0 || body.length > RPC_MAX_BATCH ? 1 : body.length;
}
