// Route policy: each route declares, in its Fastify route `config` (`config.policy`), whether
// it is public or needs a key, the door whose budget its requests get (core/budget.ts) and the
// interface its usage, metrics and freshness are counted under. Access control and the parts
// that follow it read it from `request.routeOptions.config`, so a route says what it is where
// it is registered, and no table of paths has to agree with the router.
//
// Fail closed: a route that declares nothing needs a key (at the REST door's budget, the
// tightest of the answering doors), and so does a path no route answers (its 404), except a
// discovery document or OAuth endpoint no route serves (isUnservedOAuth) and a method a
// public path does not answer (its 405, allowed-methods.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Door } from '../../../core/limits/answers.ts';

export type Interface = 'rpc' | 'sql' | 'rest' | 'graphql' | 'mcp' | 'other';

export interface RoutePolicy {
  /** `public`: answered without a key (the route holds no data, or checks a credential of its
   *  own: the operator token, a dashboard session, a signed link); `keyed`: an API key, or an
   *  x402 payment where the door takes one. */
  readonly access: 'public' | 'keyed';
  /** The door of the request budget its requests are granted. */
  readonly door: Door;
  /** The interface its usage, request metrics and freshness headers are counted under. */
  readonly interface: Interface;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's policy (route-policy.ts); absent: keyed, at the REST door, interface other. */
    policy?: RoutePolicy;
  }
}

/** What a route that declares nothing gets: it needs a key. */
export const UNDECLARED: RoutePolicy = Object.freeze({ access: 'keyed', door: 'rest', interface: 'other' });

/** A route's `config` declaring that it needs a key, at `door`, counted under `iface`. */
export const keyed = (iface: Interface, door: Door): { policy: RoutePolicy } => ({ policy: Object.freeze({ access: 'keyed', door, interface: iface }) });

/** A route's `config` declaring that it needs no key (counted under `iface`; it has no budget, so it reaches no engine). */
export const open = (iface: Interface = 'other'): { policy: RoutePolicy } => ({ policy: Object.freeze({ access: 'public', door: 'rest', interface: iface }) });

/** The policy a route declared (UNDECLARED when none, or when no route matched). */
export const policyOf = (req: FastifyRequest): RoutePolicy => req.routeOptions.config.policy ?? UNDECLARED;

/** The policy of a route's options as registered (`config.policy`). */
export const declaredPolicy = (route: { config?: unknown }): RoutePolicy => (route.config as { policy?: RoutePolicy } | undefined)?.policy ?? UNDECLARED;

/**
 * Every route registered in `app`'s context from now on (a door's plugin, plugins it
 * registers, Fastify's HEAD twins) that declares no policy of its own gets `config`'s. Only
 * inside an encapsulated context: onRoute hooks are encapsulated, so this never reaches the
 * routes of another door.
 */
export function declareRoutes(app: FastifyInstance, config: { policy: RoutePolicy }): void {
  app.addHook('onRoute', (route) => {
    if (declaredPolicy(route) === UNDECLARED) route.config = { ...(route.config as object | undefined), ...config };
  });
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
 * (`route` undefined): a route added at such a path later needs a key unless it declares
 * itself public, so this stays fail-closed.
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

/** The path of a raw request URL, without the query string. */
export const pathOf = (url: string): string => {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
};
