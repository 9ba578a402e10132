// buildApp(): the whole HTTP service, assembled from its parts; tests drive it with
// app.inject() and the entry point (main.ts) listens on it.
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { AppError, Errors, httpTitle, kindForStatus, notFound, toAppError } from '../../core/errors.ts';
import { HTTP_BODY_LIMIT_BYTES, QUOTED_HEADER_MAX_CHARS } from '../../core/limits/http.ts';
import { redactUrl } from '../../core/logger.ts';
import { installAccessControl } from '../services/access/access-control.ts';
import { NO_OAUTH_MESSAGE } from '../services/access/presented-key.ts';
import { asksForOAuth, declareRoutes, open } from '../services/access/route-policy.ts';
import { setRateLimitHeaders } from '../services/access/rate-limit-headers.ts';
import { installMethodNotAllowed, learnRoutes } from '../services/access/allowed-methods.ts';
import { installCors } from '../services/access/cors.ts';
import { installJsonBodies } from '../services/access/json-bodies.ts';
import { SampledRefusalLog } from '../services/access/refusal-log.ts';
import { answerBudgetStep, answeringStep, installRequestBudget } from '../services/access/request-budget.ts';
import { answerStatsStep } from '../services/access/answer-stats.ts';
import { executionRoutes } from '../doors/exports/execution-routes.ts';
import { clientErrorHandler, httpServerOptions, installProtocolChecks, PATH_PARAM_TOO_LONG, uriTooLong } from '../services/access/http-protocol.ts';
import { installRequestMetrics } from '../services/access/request-metrics.ts';
import { accountAdminRoutes } from '../doors/admin/account-routes.ts';
import { adminGuard } from '../doors/admin/admin-auth.ts';
import { ingestRoutes } from '../doors/admin/ingest-routes.ts';
import { keyRoutes } from '../doors/admin/key-routes.ts';
import { protocolRoutes } from '../doors/admin/protocol-routes.ts';
import { dashboard } from '../doors/dashboard/dashboard.ts';
import { healthRoutes } from '../doors/probes/health-routes.ts';
import { registerOpenApi } from '../doors/rest/openapi.ts';
import type { Operation } from '../catalog/catalog.ts';
import { restApi } from '../doors/rest/rest-api.ts';
import { sqlRoutes } from '../doors/sql/query-routes.ts';
import { exportRoutes } from '../doors/exports/export-routes.ts';
import { metricsRoutes } from '../doors/probes/metrics-routes.ts';
import { rpcRoutes } from '../doors/rpc/rpc-routes.ts';
import { freshnessStep } from '../services/freshness.ts';
import { installAnswerCaching } from '../services/answers/answer-caching.ts';
import { installAnswerEdge, type EdgeStep } from '../services/answers/answer-edge.ts';
import { installCompression } from '../services/answers/compression.ts';
import { mcpRoutes } from '../doors/mcp/mcp-routes.ts';
import { userMetricsRoutes } from '../doors/user-metrics/user-metrics-routes.ts';
import { installGraphqlStream, type StreamLimits } from '../doors/graphql/subscriptions/stream-route.ts';
import type { GraphQLSchema } from 'graphql';
import { graphqlRoutes, type GraphqlRouteOptions } from '../doors/graphql/graphql-routes.ts';
import { documentCost } from '../doors/graphql/document-cost.ts';
import { buildExecutableSchema } from '../doors/graphql/schema.ts';
import type { Services } from './services.ts';
import { settleStep } from '../services/x402/x402-fastify.ts';
import { x402AdminRoutes } from '../doors/admin/x402-routes.ts';

/** What the app is built from: the services (api/server/services.ts, where each is described), and GraphQL's limits. */
export type AppDeps = Pick<
  Services,
  | 'config'
  | 'logger'
  | 'wh'
  | 'registry'
  | 'analytics'
  | 'sqlSandbox'
  | 'pipeline'
  | 'metrics'
  | 'access'
  | 'exports'
  | 'executions'
  | 'accounts'
  | 'freshness'
  | 'live'
> & {
  /** GraphQL cost budgets and time-out (PLAN_QUERY_BUDGET and 30 s unless set; tests lower them). */
  graphql?: Pick<GraphqlRouteOptions, 'budgets' | 'timeoutMs' | 'responseBudgetBytes' | 'maxDocumentPoints' | 'answerCache'>;
};

export interface AppOptions {
  /** The executable GraphQL schema of /graphql and /graphql/stream (default: every file of api/doors/graphql/schema/). */
  graphqlSchema?: GraphQLSchema;
  /** Smaller stream limits for tests. */
  streamLimits?: Partial<StreamLimits>;
  /** The operations every door offers; the service's catalog unless set (a test adds one). */
  catalog?: readonly Operation[];
}

// Clearer words than the framework's for the errors a client can cause by the shape of
// its request (content type, size, JSON syntax); other framework 4xx keep their message.
const FRAMEWORK_MESSAGES: Readonly<Record<string, (req: FastifyRequest) => string>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => 'request body is larger than the limit for this endpoint',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: (req) =>
    `content type ${JSON.stringify(String(req.headers['content-type'] ?? '').slice(0, QUOTED_HEADER_MAX_CHARS))} is not accepted here; send application/json`,
  FST_ERR_CTP_INVALID_JSON_BODY: () => 'request body is not valid JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: () => 'request body is empty but content-type is application/json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => 'request body size does not match its Content-Length',
  FST_ERR_BAD_URL: () => 'the request path is not valid percent-encoded UTF-8',
  FST_ERR_MAX_PARAM_LENGTH: () => PATH_PARAM_TOO_LONG,
};

/** Map any error to the `{error, message}` body and its status. The title always comes
 *  from the catalog by status (core/errors.ts); a 5xx never shows its cause. */
function httpError(err: unknown, req: FastifyRequest): { status: number; body: { error: string; message: string } } {
  const fe = err as Partial<FastifyError> | null;
  const status = fe?.statusCode;
  if (!(err instanceof AppError) && typeof status === 'number' && status >= 400 && status < 500) {
    const words = fe?.code === undefined ? undefined : FRAMEWORK_MESSAGES[fe.code];
    const message = words ? words(req) : String(fe?.message ?? '') || httpTitle(status);
    return { status, body: { error: kindForStatus(status).title, message } };
  }
  const e = toAppError(err);
  return { status: e.kind.http, body: { error: e.kind.title, message: e.message } };
}

const pathOfUrl = (url: string): string => redactUrl(url.split('?')[0] ?? '');

const requestIdStep: EdgeStep = (req, reply, payload) => {
  reply.header('x-request-id', req.id);
  return payload;
};

const HTML = /^text\/html/i;

const framingStep: EdgeStep = (_req, reply, payload) => {
  const type = reply.getHeader('content-type');
  if (type !== undefined && HTML.test(String(type))) {
    const csp = reply.getHeader('content-security-policy');
    if (csp === undefined) reply.header('content-security-policy', "frame-ancestors 'none'");
    else if (!/frame-ancestors/i.test(String(csp))) reply.header('content-security-policy', `${String(csp)}; frame-ancestors 'none'`);
    reply.header('x-frame-options', 'DENY');
  }
  return payload;
};

/** The Fastify instance: its server options, and every error answered in our shape (routing errors, unknown paths included). */
function createFastify(deps: AppDeps): FastifyInstance {
  // Refused floods are logged one line per key or address per window, not two per request.
  const requestLog = new SampledRefusalLog(deps.logger);
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: requestLog,
    requestIdHeader: 'x-request-id',
    genReqId: () => crypto.randomUUID(),
    bodyLimit: HTTP_BODY_LIMIT_BYTES,
    serializerOpts: { rounding: 'floor' },
    // Request time-out, idle-connection time-out, header size (docs/access.md, "Connections").
    ...httpServerOptions(deps.config),
    // Requests Node's parser refuses never reach a route: answer them in our shape too.
    clientErrorHandler: clientErrorHandler(deps.access, deps.config, deps.logger),
    // Errors met while routing (a path that is not valid percent-encoding, an over-long
    // path parameter) skip the error handler: without this they answer Fastify's own
    // body ({error, code, message, statusCode}; 414 titled "Bad Request").
    // They also bypass the onSend hooks, so their headers are set here.
    frameworkErrors: (err, req, reply) => {
      reply.header('x-request-id', req.id);
      // A URI over the limit is that first, as when no routing error is met.
      const refused = uriTooLong(req, reply) ?? err;
      void setRateLimitHeaders(deps.access, req, reply).then(() => sendError(refused, req, reply));
    },
  });
  function sendError(err: unknown, req: FastifyRequest, reply: FastifyReply): void {
    const { status, body } = httpError(err, req);
    if (status >= 500) req.log.error({ err }, 'request failed');
    if (err instanceof AppError && err.retryAfterSeconds !== undefined) reply.header('retry-after', String(err.retryAfterSeconds));
    reply.code(status).send(body);
  }
  app.setErrorHandler((err, req, reply) => sendError(err, req, reply));
  app.addHook('onClose', (_app, done) => {
    requestLog.flush(true);
    requestLog.stop();
    done();
  });
  app.setNotFoundHandler((req, reply) => {
    const path = pathOfUrl(req.url);
    const message = `no route for ${req.method} ${path}`;
    if (!asksForOAuth(path)) return reply.code(404).send({ error: Errors.notFound.title, message });
    // Where an MCP client looks for OAuth (answered without a key: route-policy.ts isUnservedOAuth), say what it
    // needs instead; also as OAuth's error_description, the words an OAuth client shows.
    const noOAuth = `${message}: ${NO_OAUTH_MESSAGE}`;
    return reply.code(404).send({ error: Errors.notFound.title, message: noOAuth, error_description: noOAuth });
  });
  return app;
}

/** The root hooks, before any route, so that they cover every route registered after them (in any plugin). */
function installRequestPipeline(app: FastifyInstance, deps: AppDeps): void {
  // JSON bodies whose refusal of a "__proto__" key says so (Fastify's says "not valid JSON"):
  // before any route, so every plugin inherits the parser.
  installJsonBodies(app);
  // Before any route: root hooks then cover every route registered after them, in any
  // plugin, including interfaces other modules add later.
  // First of all: the request's budget scope, which every later hook and handler runs in.
  installRequestBudget(app);
  installRequestMetrics(app, deps.metrics);
  // Malformed before unauthenticated: a request without Host is a 400 even without a key.
  installProtocolChecks(app);
  // The routes registered below, as they are: CORS preflights and the 405 answer name their methods.
  const routes = learnRoutes(app);
  // Browsers on other origins: preflights answered without a key, so before access control.
  installCors(app, routes, deps.config.http.corsOrigins);
  const accessStep = installAccessControl(app, deps.access, routes);
  // A path some route answers, asked with another method: 405 with Allow.
  installMethodNotAllowed(app, routes);
  // ETag from the data version, If-None-Match -> 304 before the handler, Cache-Control on the API doors' answers.
  const cachingStep = installAnswerCaching(app, () => `${deps.analytics.answersVersion()}.${deps.freshness.current().ingestedAtMs ?? 0}`);
  // The answer edge: one onSend pass (api/services/answers/answer-edge.ts), its steps in this order.
  installAnswerEdge(app, [
    // The answer is on its way: the request's deadline no longer sends one of its own.
    answeringStep,
    // X-RateLimit-*; the in-flight slot may go once the response ends.
    accessStep,
    // The door's byte budget, a backstop behind each door's own check.
    answerBudgetStep,
    // A paid (x402) answer that succeeded settles its payment before it leaves (PAYMENT-RESPONSE).
    ...(deps.access.x402 === undefined ? [] : [settleStep(deps.access.x402)]),
    // X-Stats-* (elapsed, rows and bytes read, cost) on every metered answer (api/services/access/answer-stats.ts).
    answerStatsStep,
    // Callers and operators correlate a response with its log lines by this id.
    requestIdStep,
    // No page of this service may be framed (clickjacking): every HTML answer, whichever
    // plugin sent it (Swagger UI, GraphiQL, the dashboard, pages added later).
    framingStep,
    // X-Data-Newest-Block-Time / X-Data-Ingested-At on every answer of the analytics interfaces.
    freshnessStep(deps.freshness, { now: () => deps.registry.activeNamesNow(), read: () => deps.analytics.protocols() }),
    cachingStep,
  ]);
}

/** Every door's routes: probes, JSON-RPC, MCP, the operator API, REST with its document, SQL, exports, GraphQL, the dashboard. */
async function registerDoors(app: FastifyInstance, deps: AppDeps, options: AppOptions): Promise<void> {
  await app.register(healthRoutes, {
    wh: deps.wh,
    maxIngestAgeSeconds: deps.config.health.maxIngestAgeSeconds,
    rateLimitStore: deps.access.rateLimitStore,
  });
  await app.register(metricsRoutes, {
    metrics: deps.metrics,
    access: deps.access,
    tokens: [deps.config.adminToken, ...(deps.config.access.metricsToken === undefined ? [] : [deps.config.access.metricsToken])],
  });
  await app.register(rpcRoutes, { analytics: deps.analytics, catalog: options.catalog });
  await app.register(mcpRoutes, {
    analytics: deps.analytics,
    sandbox: deps.sqlSandbox,
    registry: deps.registry,
    freshness: deps.freshness,
    usage: deps.access.usageStore,
    catalog: options.catalog,
  });

  await app.register(async (admin) => {
    // No API key: the operator's bearer token, checked here for every route and unknown path.
    declareRoutes(admin, open());
    admin.addHook('onRequest', adminGuard(deps.access, deps.config.adminToken));
    await admin.register(protocolRoutes, { registry: deps.registry, onChange: () => deps.analytics.invalidate() });
    await admin.register(ingestRoutes, { pipeline: deps.pipeline, maxBodyBytes: deps.config.ingest.maxBodyBytes });
    await admin.register(keyRoutes, { access: deps.access });
    await admin.register(accountAdminRoutes, { access: deps.access, accounts: deps.accounts });
    await admin.register(x402AdminRoutes, { wh: deps.wh });
    // Unknown operator paths and methods are answered behind the token too: without it
    // they would reach the root 404 unguarded and tell anyone which admin routes exist.
    const unknownAdminRoute = async (req: FastifyRequest): Promise<never> => {
      throw notFound(`no route for ${req.method} ${pathOfUrl(req.url)}`);
    };
    admin.all('/admin', unknownAdminRoute);
    admin.all('/admin/*', unknownAdminRoute);
  });

  // OpenAPI first: it documents the routes registered after it.
  await registerOpenApi(app, { protocols: () => deps.analytics.protocols() });
  await app.register(restApi, { prefix: '/api/v1', analytics: deps.analytics, catalog: options.catalog, x402: deps.access.x402 });
  await app.register(sqlRoutes, { sandbox: deps.sqlSandbox });
  await app.register(userMetricsRoutes, { analytics: deps.analytics, freshness: deps.freshness });
  await app.register(exportRoutes, { exports: deps.exports });
  await app.register(executionRoutes, { executions: deps.executions });
  // GraphQL: queries on /graphql, live subscriptions over SSE on /graphql/stream, one schema.
  const graphqlSchema = options.graphqlSchema ?? buildExecutableSchema(undefined, deps.analytics.measures, options.catalog);
  await app.register(graphqlRoutes, {
    analytics: deps.analytics,
    schema: graphqlSchema,
    catalog: options.catalog,
    freshness: deps.freshness,
    exports: deps.exports,
    ...deps.graphql,
  });
  // A keyless query paid per call is priced at what its answer will be charged (docs/x402.md).
  deps.access.x402?.priceWith('/graphql', (req) => documentCost(graphqlSchema, deps.analytics, req));
  installGraphqlStream(app, {
    schema: graphqlSchema,
    live: deps.live,
    analytics: deps.analytics,
    access: deps.access,
    freshness: deps.freshness,
    logger: deps.logger,
    connectionTimeoutMs: deps.config.http.connectionTimeoutMs,
    limits: options.streamLimits,
  });
  // The dashboard: pages without a key, its JSON calls behind a session cookie.
  await app.register(dashboard, { config: deps.config, access: deps.access, accounts: deps.accounts, wh: deps.wh });
}

export async function buildApp(deps: AppDeps, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = createFastify(deps);
  installRequestPipeline(app, deps);
  await registerDoors(app, deps, options);
  // Last of all: a root onSend hook added now runs after every other one (each door's own
  // budget check included), so it codes the answer exactly as they left it.
  installCompression(app);

  return app;
}
