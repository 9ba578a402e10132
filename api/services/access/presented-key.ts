// How a caller presents its API key, and what a request without one is told: the header
// (x-api-key), `Authorization: Bearer <key>` on the routes that take it (BEARER_KEY_ROUTES),
// or the api-key query parameter; the 401's message and its WWW-Authenticate challenge.
import type { FastifyRequest } from 'fastify';
import { pathOf } from './route-policy.ts';

/** Routes that also take the key as `Authorization: Bearer <key>`: what Prometheus'
 *  `authorization` block and MCP clients send. Elsewhere that header is the operator's. */
export const BEARER_KEY_ROUTES: ReadonlySet<string> = new Set(['/v1/metrics', '/mcp']);

export const MISSING_KEY_MESSAGE = 'API key required: send it in the x-api-key header or the api-key query parameter';
/** The same on the routes that also take `Authorization: Bearer <key>` (BEARER_KEY_ROUTES): their docs
 *  give that form first (a Prometheus scrape, an MCP client), so the refusal names it too. */
export const MISSING_KEY_MESSAGE_BEARER =
  'API key required: send it as "Authorization: Bearer <key>", in the x-api-key header or in the api-key query parameter';

/** The 404 of a path where a client looks for OAuth (route-policy.ts, asksForOAuth): there is
 *  none; the key is what it needs. */
export const NO_OAUTH_MESSAGE = `this service has no OAuth (no authorization server, no client registration). ${MISSING_KEY_MESSAGE_BEARER.replace('"Authorization: Bearer <key>"', '"Authorization: Bearer <key>" (on /mcp and /v1/metrics)')}`;

/** The realm of the challenge below: the service's name (its MCP server's too). */
export const KEY_REALM = 'solana-tx-analytics';

/**
 * The WWW-Authenticate challenge of a missing key's 401 (RFC 9110 section 11.6.1: a 401 sends
 * one): the API-key scheme and where the key goes, and on the routes that take it the Bearer
 * form. Never OAuth parameters (`resource_metadata`, `scope`, `error`): there is no
 * authorization server, and an MCP client that finds one goes off to OAuth instead of saying
 * that a key is missing (the SDK's client parses a challenge only when it starts with Bearer,
 * so the API-key one comes first).
 */
export const keyChallenge = (bearer: boolean): string =>
  `ApiKey realm="${KEY_REALM}", header="x-api-key", query="api-key"${bearer ? `, Bearer realm="${KEY_REALM}"` : ''}`;

/** Whether a request may send its key as `Authorization: Bearer <key>`: by its matched route, or,
 *  when no route matched (GET /mcp, answered 405 once authenticated), by its path. */
export const takesBearer = (req: FastifyRequest): boolean => BEARER_KEY_ROUTES.has(req.routeOptions.url ?? pathOf(req.url));

function firstString(v: unknown): string | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  return typeof s === 'string' && s.trim() !== '' ? s.trim() : undefined;
}

/** The presented key: the header wins when both forms are sent (SPEC.md prefers it); on
 *  the routes of BEARER_KEY_ROUTES `Authorization: Bearer <key>` comes next. */
/** The query parameter a key may come in, on every route. */
export const KEY_QUERY_PARAM = 'api-key';

export function presentedKey(req: FastifyRequest): string | undefined {
  const fromHeader = firstString(req.headers['x-api-key']);
  if (fromHeader !== undefined) return fromHeader;
  if (takesBearer(req)) {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(firstString(req.headers.authorization) ?? '');
    if (bearer !== null) return bearer[1];
  }
  const query = req.query as Record<string, unknown> | undefined;
  return firstString(query?.[KEY_QUERY_PARAM]);
}
