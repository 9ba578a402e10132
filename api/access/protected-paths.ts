// Which requests need an API key, and which interface a request belongs to. Decided by
// path, not by route registration, so routes other modules add later (/v1/rpc,
// /api/v1/*, /v1/query, /graphql) are protected without touching this code.
import { RPC_MAX_BATCH, type Door } from '../../core/limits.ts';
import { RPC_METHOD_NAMES as CATALOG_RPC_METHODS } from '../catalog/catalog.ts';
import { RPC_DISCOVER } from '../catalog/catalog.ts';

/** Signed export download links (api/exports/download-links.ts): the link is the credential,
 *  checked by its route (MAC, expiry, and the issuing key still active). */
export const SIGNED_LINK_PREFIX = '/v1/exports/links/';

/** Paths that never need an API key: the health check, the operator API (its own bearer
 *  token), /metrics (admin or metrics token), the API descriptions (the OpenAPI document and
 *  its docs page, the JSON-RPC OpenRPC document: rpc.discover answers the same to a key holder, and GraphiQL's script, style and packaged files under
 *  /graphql/assets/, which a browser loads without a key; they hold no data), and the dashboard (its pages hold no data; its JSON calls need
 *  a session cookie, api/dashboard/), signed export links, and /.well-known/ and OAuth paths no route serves (a 404, isUnservedOAuth).
 *  Everything else does, other unknown paths included.
 *  `route`, the matched route's pattern when known, must agree for the dashboard: a path
 *  under /dashboard/ that some spelling routes elsewhere is not exempt. */
export function isExempt(path: string, route?: string): boolean {
  if (path === '/dashboard' || path.startsWith('/dashboard/')) {
    return route === undefined || route === '/dashboard' || route.startsWith('/dashboard/');
  }
  return (
    path === '/health' ||
    path.startsWith(SIGNED_LINK_PREFIX) ||
    path === '/graphql/graphiql.js' ||
    path === '/graphql/graphiql.css' ||
    path.startsWith('/graphql/assets/') ||
    path === '/metrics' ||
    path === '/admin' ||
    path.startsWith('/admin/') ||
    path === '/api/v1/openapi.json' ||
    path === '/api/v1/docs' ||
    path.startsWith('/api/v1/docs/') ||
    path === '/v1/openrpc.json' ||
    path === '/llms.txt' ||
    isUnservedOAuth(path, route)
  );
}

/** The OAuth endpoints an MCP client tries at the server's origin when discovery finds no
 *  metadata (the SDK's defaults: dynamic client registration, authorization, token). */
const OAUTH_FALLBACK_PATHS: ReadonlySet<string> = new Set(['/register', '/authorize', '/token']);

/**
 * A discovery document (RFC 8615, `/.well-known/…`) or an OAuth endpoint no route serves: this
 * service has no OAuth (no authorization server, no protected-resource metadata, no client
 * registration), so such a request is the 404 of a path no route answers, not a 401. An MCP
 * client (the SDK's, mcp-remote, the Inspector) reads a 401 on
 * `/.well-known/oauth-protected-resource` as a document behind a login and goes on with OAuth;
 * and mcp-remote, refused `POST /register` with a 401, waits for a browser sign-in that never
 * comes instead of saying that a key is missing (docs/mcp.md). Only while no route matches
 * (`route` undefined): a route added at such a path later needs a key unless it is exempted by
 * name, so this stays fail-closed.
 */
export const isUnservedOAuth = (path: string, route: string | undefined): boolean =>
  route === undefined && (path === '/.well-known' || path.startsWith('/.well-known/') || OAUTH_FALLBACK_PATHS.has(path));

/** Whether an unserved path is one where a client looks for OAuth (its 404 then says how to pass a key instead). */
export const asksForOAuth = (path: string): boolean => OAUTH_FALLBACK_PATHS.has(path) || /^\/\.well-known\/(oauth-|openid-)/.test(path);

/**
 * A browser asking for the GraphiQL page (GET /graphql accepting text/html): the page holds
 * no data and asks for a key itself, so it is served without one. The GraphQL route decides
 * with this same predicate, so a request let through here never gets data.
 */
export function wantsGraphiql(method: string, path: string, accept: string | undefined): boolean {
  return method === 'GET' && path === '/graphql' && typeof accept === 'string' && accept.toLowerCase().includes('text/html');
}

export type Interface = 'rpc' | 'sql' | 'rest' | 'graphql' | 'mcp' | 'other';

/** The SQL interface's routes: SPEC's /v1/query and its REST alias, and /v1/query/csv (the
 *  same query answered as CSV only, for generated clients; api/sql/query-routes.ts). */
export const SQL_QUERY_PATHS: readonly string[] = ['/v1/query', '/api/v1/query', '/v1/query/csv'];

export function interfaceOf(path: string): Interface {
  if (path === '/v1/rpc') return 'rpc';
  if (SQL_QUERY_PATHS.includes(path) || path.startsWith('/v1/query/executions')) return 'sql';
  if (path === '/api/v1' || path.startsWith('/api/v1/')) return 'rest';
  if (path === '/graphql' || path.startsWith('/graphql/')) return 'graphql';
  if (path === '/mcp') return 'mcp';
  return 'other';
}

/**
 * The door of the request budget (core/budget.ts) for a matched route pattern. Export jobs
 * and their downloads are doors of their own (their answers are files); any route not
 * named here gets the REST door's budget, the tightest of the answering doors.
 */
export function doorOf(route: string): Door {
  if (route === '/v1/rpc') return 'rpc';
  // SQL executions answer pages of a client query's rows: the SQL door's answer budget.
  if (SQL_QUERY_PATHS.includes(route) || route.startsWith('/v1/query/executions')) return 'sql';
  if (route === '/graphql/stream') return 'stream';
  if (route === '/graphql') return 'graphql';
  if (route === '/mcp') return 'mcp';
  if (route.endsWith('/files/:name') || route.startsWith(SIGNED_LINK_PREFIX)) return 'download';
  if (route === '/v1/exports' || route.startsWith('/v1/exports/') || route.startsWith('/v1/query/exports')) return 'export';
  return 'rest';
}

/**
 * Polls of an SQL execution's state, which read nothing but memory: charged against a poll
 * window of their own (EXECUTION_POLLS_PER_MINUTE, api/access/execution-polls.ts) instead of
 * the plan's request window; cheap, not free.
 */
export const isExecutionPoll = (method: string, route: string): boolean => method === 'GET' && route === '/v1/query/executions/:id';

/** Routes that also take the key as `Authorization: Bearer <key>`: what Prometheus'
 *  `authorization` block and MCP clients send. Elsewhere that header is the operator's. */
export const BEARER_KEY_ROUTES: ReadonlySet<string> = new Set(['/v1/metrics', '/mcp']);

/** The path of a raw request URL, without the query string. */
export const pathOf = (url: string): string => {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
};

/** The usage label of every JSON-RPC call that names no method of the method table. */
export const UNKNOWN_RPC_METHOD = '(unknown)';

const RPC_METHOD_NAMES: ReadonlySet<string> = new Set([...CATALOG_RPC_METHODS, RPC_DISCOVER]);

/** The usage label of a call's method: the method's name when it is one of the method
 *  table's, else UNKNOWN_RPC_METHOD, so invented names cannot fill the usage table. */
export const rpcUsageMethod = (method: unknown): string => (typeof method === 'string' && RPC_METHOD_NAMES.has(method) ? method : UNKNOWN_RPC_METHOD);

/** Usage labels of a parsed JSON-RPC body that was refused before any call ran (a batch
 *  over the rate limit): one per call that would have been answered (notifications, calls
 *  without an id, never are), or one for a batch refused whole (see rpcCallCount). */
export function rpcUsageMethods(body: unknown): string[] {
  if (!Array.isArray(body) || body.length === 0 || body.length > RPC_MAX_BATCH) {
    return [rpcUsageMethod(Array.isArray(body) ? undefined : (body as { method?: unknown } | null)?.method)];
  }
  return body
    .filter((c) => !(typeof c === 'object' && c !== null && !Array.isArray(c) && !Object.hasOwn(c, 'id')))
    .map((c) => rpcUsageMethod(typeof c === 'object' && c !== null ? (c as { method?: unknown }).method : undefined));
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
