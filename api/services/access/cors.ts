// CORS for the API doors (docs/browser-clients.md): a page on another origin may call
// JSON-RPC, REST, SQL, GraphQL (its SSE stream included, EventSource or fetch), the MCP door
// (a browser-based agent or the MCP Inspector), /llms.txt, and the export routes and file
// downloads. Keys travel in the x-api-key header, `Authorization: Bearer` (MCP and
// /v1/metrics) or the api-key query parameter, never in a cookie, so opening these doors to any origin gives a page no
// power its user's key does not already give: the default is any origin (CORS_ORIGINS).
// Credentials mode is never allowed. The dashboard, the operator API and /metrics stay
// same-origin: no CORS header is ever sent on them, and their preflights keep the 405.
//
// A preflight (OPTIONS on a door's path) is answered here, before access control: a browser
// sends it without the key, so it needs none, and it runs no work (it is not counted against
// any rate limit). An ordinary request gets Access-Control-Allow-Origin and the headers a
// page may read; they are set in onRequest, so error answers (401, 429) and hijacked streams,
// which copy the reply's headers, carry them too: a page can read why it was refused.
import type { FastifyInstance } from 'fastify';
import { CORS_PREFLIGHT_MAX_AGE_SECONDS } from '../../../core/limits/http.ts';
import { allowedMethods, type RouteTable } from './allowed-methods.ts';
import { pathOf } from './route-policy.ts';

/** Paths whose answers other origins may read: every API door. Not /dashboard, /admin, /metrics, /health. */
export function isApiDoorPath(path: string): boolean {
  return (
    path === '/v1/rpc' ||
    path.startsWith('/v1/') ||
    path === '/api/v1' ||
    path.startsWith('/api/v1/') ||
    path === '/graphql' ||
    path.startsWith('/graphql/') ||
    path === '/mcp' ||
    path === '/llms.txt'
  );
}

/** Request headers a page may send (anything else fails its preflight: an allow-list). An MCP
 *  client sends `authorization` (its key as a bearer token), `mcp-protocol-version` after
 *  initialize, and `mcp-session-id` / `last-event-id` where a server gave it a session or an
 *  event stream (this stateless door gives neither, but a client may send them anyway). */
export const CORS_ALLOWED_HEADERS = [
  'accept',
  'content-type',
  'x-api-key',
  'x-request-id',
  'if-none-match',
  'range',
  'last-event-id',
  'authorization',
  'mcp-protocol-version',
  'mcp-session-id',
] as const;

/** Answer headers a page may read beyond the CORS-safelisted ones. */
export const CORS_EXPOSED_HEADERS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-ratelimit-plan',
  'retry-after',
  'x-data-newest-block-time',
  'x-data-ingested-at',
  'x-request-id',
  'etag',
  'content-disposition',
  'content-range',
  'accept-ranges',
  'content-encoding',
  // A 401's challenge (api/services/access/presented-key.ts, keyChallenge): an MCP client reads it.
  'www-authenticate',
] as const;

/** The Access-Control-Allow-Origin value for `origin`, or undefined when it may not read answers. */
export function allowOriginFor(origin: string | undefined, allowed: '*' | readonly string[]): string | undefined {
  if (allowed === '*') return '*';
  return origin !== undefined && allowed.includes(origin) ? origin : undefined;
}

/** Install CORS. Call before access control (preflights need no key) with the route table the 405 answer uses. */
export function installCors(app: FastifyInstance, routes: RouteTable, allowed: '*' | readonly string[]): void {
  const exposed = CORS_EXPOSED_HEADERS.join(', ');
  app.addHook('onRequest', (req, reply, done) => {
    const path = pathOf(req.url);
    if (!isApiDoorPath(path)) return done();
    const origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
    const allowOrigin = allowOriginFor(origin, allowed);
    // A list of origins makes the answer depend on Origin: caches must keep them apart.
    if (allowed !== '*') reply.header('vary', 'Origin');
    if (req.method === 'OPTIONS') {
      const methods = allowedMethods(routes.values(), path);
      // A path no route answers: left to the 401/404 of any unknown path.
      if (methods === '') return done();
      const allow = `${methods}, OPTIONS`;
      reply.header('allow', allow);
      if (allowOrigin !== undefined && origin !== undefined) {
        reply.header('access-control-allow-origin', allowOrigin);
        reply.header('access-control-allow-methods', allow);
        reply.header('access-control-allow-headers', CORS_ALLOWED_HEADERS.join(', '));
        reply.header('access-control-max-age', String(CORS_PREFLIGHT_MAX_AGE_SECONDS));
      }
      // Answered here: a callback hook that replies does not call done.
      void reply.code(204).send();
      return;
    }
    if (allowOrigin !== undefined && origin !== undefined) {
      reply.header('access-control-allow-origin', allowOrigin);
      reply.header('access-control-expose-headers', exposed);
    }
    done();
  });
}
