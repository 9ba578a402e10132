// buildApp(): the whole HTTP service, assembled from its parts; tests drive it with
// app.inject() and the entry point (main.ts) listens on it.
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import type { Config } from '../core/config.ts';
import { AppError, Errors, toAppError } from '../core/errors.ts';
import { redactUrl, type Logger } from '../core/logger.ts';
import type { IngestPipeline } from '../ingest/pipeline.ts';
import type { ProtocolRegistry } from '../views/protocol-registry.ts';
import type { Warehouse } from '../views/warehouse.ts';
import { installAccessControl } from './access/access-control.ts';
import type { Access } from './access/access.ts';
import type { Metrics } from './access/metrics.ts';
import { installRequestMetrics } from './access/request-metrics.ts';
import { adminGuard } from './admin/admin-auth.ts';
import { ingestRoutes } from './admin/ingest-routes.ts';
import { keyRoutes } from './admin/key-routes.ts';
import { protocolRoutes } from './admin/protocol-routes.ts';
import type { Analytics } from './analytics/analytics.ts';
import { healthRoutes } from './health-routes.ts';
import { registerOpenApi } from './rest/openapi.ts';
import { restApi } from './rest/rest-api.ts';
import { sqlRoutes } from './sql/query-routes.ts';
import { metricsRoutes } from './metrics-routes.ts';
import { rpcRoutes } from './rpc/rpc-routes.ts';

export interface AppDeps {
  config: Config;
  logger: Logger;
  wh: Warehouse;
  registry: ProtocolRegistry;
  analytics: Analytics;
  pipeline: IngestPipeline;
  metrics: Metrics;
  access: Access;
}

/** Map any error to the `{error, message}` body and its status. */
function httpError(err: unknown): { status: number; body: { error: string; message: string } } {
  const fe = err as FastifyError;
  if (!(err instanceof AppError) && typeof fe?.statusCode === 'number' && fe.statusCode < 500) {
    const kind = fe.statusCode === 413 ? Errors.payloadTooLarge : fe.statusCode === 404 ? Errors.notFound : Errors.invalidParams;
    const message = fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 'request body is larger than the limit for this endpoint' : fe.message;
    return { status: fe.statusCode, body: { error: kind.title, message } };
  }
  const e = toAppError(err);
  return { status: e.kind.http, body: { error: e.kind.title, message: e.message } };
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    requestIdHeader: 'x-request-id',
    genReqId: () => crypto.randomUUID(),
    bodyLimit: 1024 * 1024,
    serializerOpts: { rounding: 'floor' },
    // Errors the router raises before any hook or handler runs (a path segment over 100
    // characters, malformed percent-encoding): the same {error, message} body as every
    // other error, without echoing the URL (it may carry the api-key query parameter).
    frameworkErrors: (err, _req, reply) => {
      const status = typeof err.statusCode === 'number' && err.statusCode < 500 ? err.statusCode : 400;
      const message = err.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? 'a path parameter is longer than 100 characters'
        : 'the URL is not valid (malformed percent-encoding)';
      void (reply as FastifyReply).code(status).send({ error: status === 414 ? 'URI Too Long' : 'Bad Request', message });
    },
  });
  app.setErrorHandler((err, req, reply) => {
    const { status, body } = httpError(err);
    if (status >= 500) req.log.error({ err }, 'request failed');
    reply.code(status).send(body);
  });
  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send({ error: 'Not Found', message: `no route for ${req.method} ${redactUrl(req.url.split('?')[0] ?? '')}` });
  });

  // Before any route: root hooks then cover every route registered after them, in any
  // plugin, including interfaces other modules add later.
  installRequestMetrics(app, deps.metrics);
  installAccessControl(app, deps.access);
  // Callers and operators correlate a response with its log lines by this id.
  app.addHook('onSend', async (req, reply, payload) => {
    reply.header('x-request-id', req.id);
    return payload;
  });

  await app.register(healthRoutes, {
    wh: deps.wh,
    maxIngestAgeSeconds: deps.config.health.maxIngestAgeSeconds,
    rateLimitStore: deps.access.rateLimitStore,
  });
  await app.register(metricsRoutes, {
    metrics: deps.metrics,
    tokens: [deps.config.adminToken, ...(deps.config.access.metricsToken === undefined ? [] : [deps.config.access.metricsToken])],
  });
  await app.register(rpcRoutes, { analytics: deps.analytics });

  await app.register(async (admin) => {
    admin.addHook('onRequest', adminGuard(deps.config.adminToken));
    await admin.register(protocolRoutes, { registry: deps.registry, onChange: () => deps.analytics.cache.clear() });
    await admin.register(ingestRoutes, { pipeline: deps.pipeline, maxBodyBytes: deps.config.ingest.maxBodyBytes });
    await admin.register(keyRoutes, { access: deps.access });
  });

  // OpenAPI first: it documents the routes registered after it.
  await registerOpenApi(app);
  await app.register(restApi, { prefix: '/api/v1', analytics: deps.analytics });
  await app.register(sqlRoutes, { analytics: deps.analytics });

  return app;
}
