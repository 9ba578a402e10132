// 405 Method Not Allowed: a request whose path some route answers, but not with the
// request's method (PUT on a GET route, TRACE, QUERY …), is answered 405 with an `Allow`
// header listing the methods that path does answer (RFC 9110 section 15.5.6), rather than
// the 404 of a path nobody answers. Routes are learnt as they are registered (onRoute), so
// routes other modules add later are covered; the answer is given in onRequest, before any
// body is read (so a QUERY without Content-Type is not refused as a malformed body first).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, Errors } from '../../../core/errors.ts';
import { declaredPolicy, pathOf, UNDECLARED, type RoutePolicy } from './route-policy.ts';
import { QUOTED_PATH_MAX_CHARS } from '../../../core/limits/http.ts';

interface KnownRoute {
  readonly pattern: RegExp;
  readonly methods: Set<string>;
  /** The options each route at this URL was registered with: their policy is read when asked,
   *  as a door's own onRoute hook (route-policy.ts declareRoutes) sets it after this one. */
  readonly registered: { config?: unknown }[];
}

/** The routes registered so far, learnt as they are (shared by the 405 answer, CORS preflights
 *  and access control). */
export type RouteTable = ReadonlyMap<string, KnownRoute>;

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's routes as registered (learnRoutes): what they answer and the policy each declared. */
    routeTable: RouteTable;
  }
}

/** The routes that declare no policy (route-policy.ts), as `METHOD url`: they need a key, at the REST door, under no interface. */
export function undeclaredRoutes(routes: RouteTable): string[] {
  return [...routes].flatMap(([url, known]) =>
    known.registered.filter((r) => declaredPolicy(r) === UNDECLARED).map((r) => `${String((r as { method?: unknown }).method)} ${url}`),
  );
}

/** A route's URL (find-my-way syntax: `:param`, `:param(regex)`, `*`) as a regular expression
 *  over a request path. A path parameter is one non-empty segment; `*` is any rest. */
export function routePattern(url: string): RegExp {
  const segments = url.split('/').map((segment) => {
    if (segment === '*') return '.*';
    if (segment.includes(':')) return '[^/]+';
    return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\\\*$/, '.*');
  });
  return new RegExp(`^${segments.join('/')}$`);
}

/** The methods the routes matching `path` answer, in a stable order ('' when none). */
export function allowedMethods(routes: Iterable<KnownRoute>, path: string): string {
  const methods = new Set<string>();
  for (const route of routes) if (route.pattern.test(path)) for (const m of route.methods) methods.add(m);
  return [...methods].sort().join(', ');
}

/** The policy of the routes matching `path` when they all declare the same access (the 405 of a
 *  public path needs no key); undefined when none matches, keyed when any of them is. */
export function allowedPolicy(routes: Iterable<KnownRoute>, path: string): RoutePolicy | undefined {
  let found: RoutePolicy | undefined;
  for (const route of routes) {
    if (!route.pattern.test(path)) continue;
    for (const r of route.registered) {
      const p = declaredPolicy(r);
      if (p.access !== 'public') return p;
      found = p;
    }
  }
  return found;
}

/** Learn every route registered after this call (its URL pattern and methods). */
export function learnRoutes(app: FastifyInstance): RouteTable {
  const routes = new Map<string, KnownRoute>();
  app.decorate('routeTable', routes);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const known = routes.get(route.url) ?? { pattern: routePattern(route.url), methods: new Set<string>(), registered: [] };
    known.registered.push(route);
    for (const m of methods) {
      known.methods.add(m.toUpperCase());
      // Fastify answers HEAD for every GET route (exposeHeadRoutes).
      if (m.toUpperCase() === 'GET') known.methods.add('HEAD');
    }
    routes.set(route.url, known);
  });
  return routes;
}

/**
 * Install the 405 answer. Call before the routes are registered (it learns them as they
 * are) and after access control (a 405 is a request like any other: authenticated first
 * where its path needs a key, and counted against the rate limit). OPTIONS on an API door's
 * path never gets here: CORS (cors.ts) answers it first.
 */
export function installMethodNotAllowed(app: FastifyInstance, routes: RouteTable): void {
  app.addHook('onRequest', (req: FastifyRequest, reply, done) => {
    if (!req.is404) return done();
    const allow = allowedMethods(routes.values(), pathOf(req.url));
    if (allow === '' || allow.split(', ').includes(req.method)) return done();
    reply.header('allow', allow);
    done(new AppError(Errors.methodNotAllowed, `${req.method} is not a method of ${pathOf(req.url).slice(0, QUOTED_PATH_MAX_CHARS)}; it answers ${allow}`));
  });
}
