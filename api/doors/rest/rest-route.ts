// A route of the REST interface: its Fastify schema (what Fastify validates and serialises
// with, and so what OpenAPI shows), its cross-field rules (run on the validated query before
// the handler), and its handler typed from its own schema by the TypeBox type provider
// (@fastify/type-provider-typebox). Built from the catalog's declarations (declared-routes.ts)
// or written by hand (hand-routes.ts); mounted by rest-api.ts.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  ContextConfigDefault,
  FastifyInstance,
  FastifyRequest,
  FastifySchema,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
} from 'fastify';
import type { ResolveFastifyReplyReturnType } from 'fastify/types/type-provider.js';
import { checkRules, rulesDoc, type CrossFieldRule, type RequestValues } from '../../../core/request-rules.ts';
import type { Analytics } from '../../analytics/analytics.ts';

/** A request as the TypeBox type provider types it from the route's schema. */
export type RestRequest<S extends FastifySchema> = FastifyRequest<RouteGenericInterface, RawServerDefault, RawRequestDefaultExpression, S, TypeBoxTypeProvider>;
/** What the handler may answer: the Static of the route's response schemas. */
export type RestAnswer<S extends FastifySchema> = ResolveFastifyReplyReturnType<TypeBoxTypeProvider, S, RouteGenericInterface>;

export interface RestRoute {
  readonly method: 'GET';
  /** Below the REST base /api/v1. */
  readonly url: string;
  /** The route schema: what Fastify validates and serialises with, and so what OpenAPI shows. */
  readonly schema: FastifySchema;
  /** Its cross-field rules: run on the validated query before the handler, and in the document. */
  readonly rules: readonly CrossFieldRule[];
  mount(app: FastifyInstance, a: Analytics): void;
  /** The route's answer to a request already validated, on `a` (the x402 plan prices a call by answering it on a view that runs nothing). */
  answer(a: Analytics, req: FastifyRequest): Promise<unknown>;
  /** The same route with its OpenAPI operationId (its operation's: api/catalog/catalog.ts operationIdOf). */
  named(operationId: string): RestRoute;
}

/** A GET route of the REST interface (tagged REST, so OpenAPI lists it), its handler typed
 *  from its own schema: the validated schema is the documented one. */
export function restGet<const S extends FastifySchema>(d: {
  url: string;
  schema: S;
  rules?: readonly CrossFieldRule[];
  run(a: Analytics, req: RestRequest<S>): RestAnswer<S>;
}): RestRoute {
  const rules = d.rules ?? [];
  const route = (schema: FastifySchema): RestRoute => ({
    method: 'GET',
    url: d.url,
    schema,
    rules,
    mount(app, a) {
      // Each request asks under its own budget (a route without one is refused by the engine side).
      app.withTypeProvider<TypeBoxTypeProvider>().get<RouteGenericInterface, ContextConfigDefault, S>(d.url, { schema: schema as S }, (req) => {
        checkRules(rules, req.query as RequestValues);
        return d.run(a.under(req.budget), req);
      });
    },
    answer: async (a, req) => d.run(a, req as RestRequest<S>),
    named: (operationId) => route({ ...schema, operationId }),
  });
  return route({ ...d.schema, ...rulesDoc(rules), tags: ['REST'] });
}
