// The REST interface (base /api/v1): its routes, built from the catalog (api/catalog/: each
// operation with a REST route gives its URL; one declared by its request, REST's words too:
// declared-routes.ts builds its route; the others' are written by hand, hand-routes.ts),
// and its validation messages. Registered with prefix /api/v1 by buildApp, after the
// OpenAPI plugin so the routes are documented from the same schemas Fastify validates with.
import type { FastifyInstance, FastifySchemaValidationError } from 'fastify';
import { answerStatsOf } from '../../services/access/answer-stats.ts';
import { KEY_QUERY_PARAM } from '../../services/access/presented-key.ts';
import { declareRoutes, keyed } from '../../services/access/route-policy.ts';
import { QUOTED_PARAM_MAX_CHARS } from '../../../core/limits/http.ts';
import { Errors, invalidParams, worded, type Wording } from '../../../core/errors.ts';
import { fitsBudget, formatBytes, REST_RESPONSE_BUDGET_BYTES } from '../../../core/limits/answers.ts';
import { ruleOfPattern } from '../../../core/vocabulary/primitives.ts';
import type { Analytics } from '../../analytics/analytics.ts';
import { CATALOG, operationIdOf, type Operation } from '../../catalog/catalog.ts';
import type { X402Door } from '../../services/x402/x402-door.ts';
import { declaredRoute, isDeclaredRest } from './declared-routes.ts';
import type { RestRoute } from './rest-route.ts';

/** REST's names for the analytics layer's logical parameters. */
const REST_WORDING: Wording = {
  params: { protocol: 'protocol_name', protocols: 'protocol_name', range: 'date_from..date_to', cursor: 'cursor', order: 'order' },
  hints: { protocols: 'GET /api/v1/stats lists the available ones', coarserBucket: 'granularity=day' },
  // A query takes one protocol_name (a repeated one is refused), so a list's index is never REST's.
  single: ['protocols'],
};

/** Query parameters the matched route's schema declares as integers, or as dates. */
function paramsOf(schema: unknown, is: (s: { type?: unknown; format?: unknown }) => boolean): string[] {
  const properties =
    (schema as { querystring?: { properties?: Record<string, { type?: unknown; format?: unknown }> } } | undefined)?.querystring?.properties ?? {};
  return Object.entries(properties)
    .filter(([, s]) => is(s))
    .map(([name]) => name);
}

/**
 * A query parameter the route does not declare is refused, never ignored: a misspelt
 * `date_form` or `protocol` would otherwise answer for all time or every protocol. The
 * api-key parameter is every route's (presented-key.ts).
 */
function refuseUnknownParams(schema: unknown, query: Record<string, unknown> | undefined): void {
  const declared = paramsOf(schema, () => true);
  const unknown = Object.keys(query ?? {}).find((k) => k !== KEY_QUERY_PARAM && !declared.includes(k));
  if (unknown === undefined) return;
  const accepted = declared.length === 0 ? 'this route takes none' : `accepted: ${declared.join(', ')}`;
  throw invalidParams(
    `unknown query parameter ${JSON.stringify(unknown.slice(0, QUOTED_PARAM_MAX_CHARS))}; ${accepted}`,
    unknown.slice(0, QUOTED_PARAM_MAX_CHARS),
  );
}

/** "limit must be <= 1000" rather than "querystring/limit must be <= 1000": clients know parameters, not schema paths. */
export function schemaErrorMessage(errors: FastifySchemaValidationError[], dataVar: string): Error {
  const messages = errors.map((e) => {
    const params = e.params as Record<string, unknown>;
    const missing = typeof params.missingProperty === 'string' ? params.missingProperty : undefined;
    const name = missing ?? (e.instancePath.replace(/^\//, '').replace(/\//g, '.') || dataVar);
    if (missing) return `${name} is required`;
    const rule = e.keyword === 'pattern' ? ruleOfPattern(params.pattern) : undefined;
    if (rule !== undefined) return `${name} must be ${rule}`;
    if (e.keyword === 'enum' && Array.isArray(params.allowedValues)) return `${name} must be one of ${params.allowedValues.join(', ')}`;
    return `${name} ${e.message ?? 'is invalid'}`;
  });
  return new Error(messages.join('; '));
}

export interface RestApiOptions {
  analytics: Analytics;
  /** Byte budget of one response; REST_RESPONSE_BUDGET_BYTES (core/limits/) unless set. */
  responseBudgetBytes?: number;
  /** The operations to serve; the service's catalog unless set (tests). */
  catalog?: readonly Operation[];
  /** Routes written by hand for operations not declared by their request, by the operation's name (none in the
   *  service's catalog: every REST route is declared; an operation added without a request brings its own). */
  handRoutes?: Readonly<Record<string, RestRoute>>;
  /** With the x402 plan on: where each route's keyless calls are priced, by their answer's statements. */
  x402?: Pick<X402Door, 'priceByAnswer'>;
}

/** The REST routes of a catalog, each named by its operation (operationIdOf): built from its
 *  request declaration, or the hand-written route of its name. */
export function restRoutesOf(catalog: readonly Operation[], handRoutes: Readonly<Record<string, RestRoute>> = {}): RestRoute[] {
  return catalog.flatMap((op) => {
    if (op.rest === undefined) return [];
    const route = isDeclaredRest(op) ? declaredRoute(op) : handRoutes[op.name];
    if (route === undefined || route.url !== op.rest.url) throw new Error(`operation ${op.name}: no REST route at ${op.rest.url}`);
    return [route.named(operationIdOf(op))];
  });
}

export async function restApi(app: FastifyInstance, opts: RestApiOptions): Promise<void> {
  // Every route of this interface needs a key, at the REST door's budget.
  declareRoutes(app, keyed('rest', 'rest'));
  app.setSchemaErrorFormatter(schemaErrorMessage);
  // Every answer of this interface, whatever route produced it, is checked as serialized:
  // one larger than the budget is replaced by a 400 asking for a smaller page.
  const budget = opts.responseBudgetBytes ?? REST_RESPONSE_BUDGET_BYTES;
  app.addHook('onSend', async (_req, reply, payload) => {
    if (typeof payload !== 'string' || fitsBudget(payload, budget)) return payload;
    const err = Errors.responseTooLarge;
    reply.code(err.http).header('content-type', 'application/json; charset=utf-8');
    return JSON.stringify({
      error: err.title,
      message: `the answer is larger than the ${formatBytes(budget)} budget of one REST response; ask for less (a smaller limit, a shorter date range)`,
    });
  });
  // meta.stats: the answer's statistics, the same figures as its X-Stats-* headers.
  app.addHook('preSerialization', async (req, _reply, payload: unknown) => {
    const stats = answerStatsOf(req.budget);
    if (stats === undefined || payload === null || typeof payload !== 'object') return payload;
    const meta = (payload as { meta?: unknown }).meta;
    if ((payload as { success?: unknown }).success !== true || meta === null || typeof meta !== 'object') return payload;
    return { ...payload, meta: { ...meta, stats } };
  });
  // Whole-number parameters as plain decimal digits: the validator would coerce "0x10",
  // "1e3", "+1" and " 1" to numbers, so a client's typo would silently mean something.
  // (preValidation runs before the schema is checked.)
  app.addHook('preValidation', async (req) => {
    const query = req.query as Record<string, unknown> | undefined;
    refuseUnknownParams(req.routeOptions.schema, query);
    for (const name of paramsOf(req.routeOptions.schema, (s) => s.type === 'integer')) {
      const v = query?.[name];
      if (v === undefined) continue;
      if (typeof v !== 'string' || !/^(0|[1-9][0-9]{0,15})$/.test(v)) {
        throw invalidParams(`${name} must be a whole number written in decimal digits`, name);
      }
    }
    // Days are the one check's (CheckedDay): it converts them before its schema and says which
    // part of a day is broken (not written YYYY-MM-DD, not a calendar day, outside the store).
  });
  // The analytics layer names parameters by logical key; REST words them its own way and
  // hands the error on to the app's handler (an error thrown here goes to the parent's).
  app.setErrorHandler((err) => {
    throw worded(err, REST_WORDING);
  });
  for (const route of restRoutesOf(opts.catalog ?? CATALOG, opts.handRoutes)) {
    route.mount(app, opts.analytics);
    opts.x402?.priceByAnswer(`${app.prefix}${route.url}`, (dry, req) => route.answer(dry, req));
  }
}
