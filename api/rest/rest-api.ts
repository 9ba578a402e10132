// The REST interface (base /api/v1): its routes and its validation messages. Registered
// with prefix /api/v1 by buildApp, after the OpenAPI plugin so the routes are documented.
import type { FastifyInstance, FastifySchemaValidationError } from 'fastify';
import { Errors } from '../../core/errors.ts';
import { fitsBudget, formatBytes, REST_RESPONSE_BUDGET_BYTES } from '../../core/limits.ts';
import type { Analytics } from '../analytics/analytics.ts';
import { analyticsRoutes } from './analytics-routes.ts';
import { DATE_PATTERN } from './schemas.ts';
import { statsRoutes } from './stats-routes.ts';
import { transactionsRoutes } from './transactions-routes.ts';

/** "limit must be <= 1000" rather than "querystring/limit must be <= 1000": clients know parameters, not schema paths. */
export function schemaErrorMessage(errors: FastifySchemaValidationError[], dataVar: string): Error {
  const messages = errors.map((e) => {
    const params = e.params as Record<string, unknown>;
    const missing = typeof params.missingProperty === 'string' ? params.missingProperty : undefined;
    const name = missing ?? (e.instancePath.replace(/^\//, '').replace(/\//g, '.') || dataVar);
    if (missing) return `${name} is required`;
    if (e.keyword === 'pattern' && params.pattern === DATE_PATTERN) return `${name} must be a date written YYYY-MM-DD`;
    if (e.keyword === 'enum' && Array.isArray(params.allowedValues)) return `${name} must be one of ${params.allowedValues.join(', ')}`;
    return `${name} ${e.message ?? 'is invalid'}`;
  });
  return new Error(messages.join('; '));
}

export interface RestApiOptions {
  analytics: Analytics;
  /** Byte budget of one response; REST_RESPONSE_BUDGET_BYTES (core/limits.ts) unless set. */
  responseBudgetBytes?: number;
}

export async function restApi(app: FastifyInstance, opts: RestApiOptions): Promise<void> {
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
  // Not `opts` itself: it carries the prefix, which would apply a second time.
  const deps = { analytics: opts.analytics };
  await app.register(transactionsRoutes, deps);
  await app.register(analyticsRoutes, deps);
  await app.register(statsRoutes, deps);
}
