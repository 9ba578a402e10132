// POST and GET /graphql, and the GraphiQL page. graphql-helix runs the request (parse,
// validate, operation selection, execute) behind this thin adapter and nowhere else, so it
// can be swapped; the adapter reads the request parameters itself (request-params.ts),
// sends every answer through Fastify's reply (helix's sendResult writes to the raw socket,
// losing X-RateLimit-* and x-request-id), and sets the status GraphQL-over-HTTP asks for.
// Before anything runs, a guard plans, costs and sizes the request (request-guard.ts); the
// answer is streamed in chunks within its byte budget (answer-stream.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { getOperationAST, GraphQLError, MaxIntrospectionDepthRule, specifiedRules, type DocumentNode, type GraphQLSchema, type ValidationRule } from 'graphql';
import { HttpError, processRequest, type ProcessRequestResult } from 'graphql-helix';
import { AppError, Errors, notFound } from '../../../core/errors.ts';
import { ANSWER_CHUNK_BYTES } from '../../../core/limits/answers.ts';
import {
  GRAPHQL_BODY_LIMIT_BYTES,
  GRAPHQL_MAX_DOCUMENT_POINTS,
  GRAPHQL_ONE_PIECE_ANSWER_ITEMS,
  GRAPHQL_RESPONSE_BUDGET_BYTES,
  GRAPHQL_TIMEOUT_MS,
  GRAPHIQL_QUOTED_NAME_MAX_CHARS,
} from '../../../core/limits/graphql.ts';
import { PLAN_QUERY_BUDGET, type Plan } from '../../../core/plans.ts';
import { keyed, open, pathOf, wantsGraphiql } from '../../services/access/route-policy.ts';
import type { Analytics } from '../../analytics/analytics.ts';
import type { ExportService } from '../../services/exports/export-service.ts';
import type { FreshnessWatermark } from '../../services/freshness.ts';
import { AnswerCache, type AnswerCacheOptions, type Remembered } from './answer-cache.ts';
import { answerStream, onePieceAnswer, rememberedStream } from './answer-stream.ts';
import { DocumentCache } from './document-limits.ts';
import { formatError, graphqlError } from './errors.ts';
import { buildExtensions } from './extensions.ts';
import { answerStatsOf } from '../../services/access/answer-stats.ts';
import { graphiqlAssets } from './graphiql-page.ts';
import { guardedExecute, type GuardOptions, type Ledger } from './request-guard.ts';
import { GRAPHQL_RESPONSE, JSON_TYPE, readParams, responseType, sendGraphqlError, type Params } from './request-params.ts';
import { CATALOG, type Operation } from '../../catalog/catalog.ts';
import { buildExecutableSchema, type RequestContext } from './schema.ts';
import { aliasLimit, depthLimit, introspectionDepthLimit } from './validation-rules.ts';

export interface GraphqlRouteOptions {
  analytics: Analytics;
  /** The executable schema (the one /graphql/stream shares); built from api/doors/graphql/schema/ and the catalog unless given. */
  schema?: GraphQLSchema;
  /** The operations whose declared requests are fields too; the service's catalog unless set (tests). */
  catalog?: readonly Operation[];
  /** Where extensions.freshness comes from (api/services/freshness.ts); left out when absent. */
  freshness?: FreshnessWatermark;
  /** Cost budget per plan; PLAN_QUERY_BUDGET (shared with the SQL sandbox) unless set. */
  budgets?: Readonly<Record<Plan, number>>;
  /** Longest a request may run; GRAPHQL_TIMEOUT_MS unless set. */
  timeoutMs?: number;
  /** Byte budget of one answer; GRAPHQL_RESPONSE_BUDGET_BYTES unless set (tests). */
  responseBudgetBytes?: number;
  /** Items one document may ask for; GRAPHQL_MAX_DOCUMENT_POINTS unless set (tests). */
  maxDocumentPoints?: number;
  /** The answer cache's bounds (GRAPHQL_ANSWER_CACHE_BYTES, GRAPHQL_ANSWER_CACHE_TTL_MS unless set). */
  answerCache?: AnswerCacheOptions;
  /** Export jobs (exportDataset, exportJob, exportJobs, cancelExportJob); those fields answer an error without it. */
  exports?: ExportService;
}

/** What every request of the plugin shares: the schema, the guard's options, the document and answer caches. */
interface Door {
  opts: GraphqlRouteOptions;
  schema: GraphQLSchema;
  budgets: Readonly<Record<Plan, number>>;
  guard: GuardOptions;
  budgetBytes: number;
  rules: readonly ValidationRule[];
  page: ReturnType<typeof graphiqlAssets>;
  documents: DocumentCache;
  answerCache: AnswerCache;
}

/** Any error answered outside an execution result, with the request's cost figures (request-params.ts). */
const sendError = (door: Door, err: unknown, req: FastifyRequest, reply: FastifyReply, ledger?: Ledger): FastifyReply =>
  sendGraphqlError(err, req, reply, { requested: ledger?.requested ?? 0, budget: ledger?.budget ?? (req.apiKey ? door.budgets[req.apiKey.plan] : 0) });

/** The request budget's cost figure (core/budget.ts); tests may lower it per plan. */
const ledgerOf = (door: Door, req: FastifyRequest): Ledger => ({
  requested: 0,
  budget: req.apiKey ? (door.opts.budgets?.[req.apiKey.plan] ?? req.budget?.readRows ?? door.budgets[req.apiKey.plan]) : 0,
  fields: 0,
  query: false,
  points: 0,
});

async function extensionsOf(door: Door, req: FastifyRequest, ledger: Ledger): Promise<Record<string, unknown>> {
  return buildExtensions({
    cost: { requested: ledger.requested, budget: ledger.budget },
    freshness: door.opts.freshness?.extension(await door.opts.analytics.protocols()),
    stats: answerStatsOf(req.budget),
  });
}

/** The answer remembered for an identical query of the same key, again: its fields counted, its extensions fresh. */
async function sendRemembered(
  door: Door,
  req: FastifyRequest,
  reply: FastifyReply,
  ledger: Ledger,
  remembered: Remembered,
  type: string,
): Promise<FastifyReply> {
  try {
    if (remembered.fields > 1) await req.consumeRateLimit(remembered.fields - 1);
  } catch (err) {
    return sendError(door, err, req, reply, ledger);
  }
  ledger.requested = remembered.requested;
  const ext = await extensionsOf(door, req, ledger);
  // A small remembered answer goes out as one text; a large one in chunks.
  const body =
    remembered.data.length <= ANSWER_CHUNK_BYTES
      ? `{"data":${remembered.data.toString('utf8')},"extensions":${JSON.stringify(ext)}}`
      : rememberedStream(remembered.data, ext);
  return reply.code(200).header('content-type', `${type}; charset=utf-8`).send(body);
}

/** The document run by graphql-helix: parsed and validated through the caches, executed by the guard. */
function run(door: Door, req: FastifyRequest, params: Params, ledger: Ledger) {
  return processRequest<RequestContext>({
    // Headers helix reads (accept) only to choose streaming; answers here are single results.
    request: { body: req.body, headers: { accept: JSON_TYPE }, method: req.method, query: req.query },
    query: params.query,
    ...(params.operationName !== undefined ? { operationName: params.operationName } : {}),
    ...(params.variables !== undefined ? { variables: params.variables } : {}),
    ...(params.extensions !== undefined ? { extensions: params.extensions } : {}),
    schema: door.schema,
    parse: (source: string) => door.documents.parse(source),
    validate: (s: GraphQLSchema, document: DocumentNode, validationRules: readonly ValidationRule[]) => {
      const op = getOperationAST(document, params.operationName);
      if (op?.operation === 'mutation' && req.method === 'GET') {
        throw new HttpError(Errors.methodNotAllowed.http, 'mutations are accepted on POST only', {
          headers: [{ name: 'Allow', value: 'POST' }],
          graphqlErrors: [graphqlError(Errors.methodNotAllowed, 'mutations are accepted on POST only')],
        });
      }
      const errors = door.documents.validate(s, document, validationRules);
      if (errors.length === 0 && op?.operation === 'subscription') {
        return [graphqlError(Errors.invalidParams, 'subscriptions are served as Server-Sent Events at /graphql/stream')];
      }
      return errors;
    },
    validationRules: door.rules,
    execute: guardedExecute(door.guard, req, ledger),
  });
}

/** An execution's single result (helix's other kinds stream, which nothing here asks for). */
type ResponseResult = Extract<ProcessRequestResult, { type: 'RESPONSE' }>;

/** Where a kept answer goes: the answerCache key and the data version it was computed at. */
interface Keeping {
  key: string | undefined;
  version: string;
}

/** The execution's result as GraphQL-over-HTTP answers it, in one piece or in chunks, kept when whole. */
async function sendResult(door: Door, req: FastifyRequest, reply: FastifyReply, ledger: Ledger, result: ResponseResult, type: string, keeping: Keeping) {
  for (const h of result.headers) if (['allow', 'retry-after'].includes(h.name.toLowerCase())) reply.header(h.name.toLowerCase(), h.value);
  const payload = result.payload;
  // GraphQL-over-HTTP: a request error (no data: the document did not parse or validate,
  // variables did not coerce, the guard refused it) is 400 under graphql-response+json
  // and 200 under plain JSON; a result with data is 200; helix's 405 and our 429 stay.
  const requestError = payload.data === undefined;
  let status = result.status;
  if (status !== 405 && status !== 429) status = requestError && type === GRAPHQL_RESPONSE ? 400 : 200;
  const errors =
    payload.errors && payload.errors.length > 0
      ? payload.errors.map((e) =>
          formatError(e instanceof GraphQLError ? e : new GraphQLError(String((e as Error).message)), (err) => req.log.error({ err }, 'GraphQL field failed')),
        )
      : undefined;
  // Only whole answers with data and no errors are kept (a field cut for the budget is an error).
  const key = keeping.key !== undefined && ledger.query && status === 200 && !requestError && errors === undefined ? keeping.key : undefined;
  const answer = {
    ...(requestError ? {} : { data: payload.data as Record<string, unknown> | null }),
    ...(errors === undefined ? {} : { errors }),
    extensions: await extensionsOf(door, req, ledger),
  };
  const remember = (data: Buffer) =>
    key !== undefined && door.answerCache.remember(key, { version: keeping.version, fields: ledger.fields, requested: ledger.requested, data });
  // Few items (the common answer: stats, a page of groups): one serialisation costs less than
  // a stream's turns and is far below a noticeable block. Many: written out in chunks.
  if (ledger.points <= GRAPHQL_ONE_PIECE_ANSWER_ITEMS) {
    const whole = onePieceAnswer(answer, door.budgetBytes);
    if (whole !== undefined) {
      if (whole.data !== undefined) remember(whole.data);
      return reply.code(status).header('content-type', `${type}; charset=utf-8`).send(whole.text);
    }
  }
  const stream = answerStream(answer, { budgetBytes: door.budgetBytes, ...(key !== undefined ? { onData: remember } : {}) });
  return reply.code(status).header('content-type', `${type}; charset=utf-8`).send(stream);
}

async function handle(door: Door, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  if (wantsGraphiql(req.method, pathOf(req.url), req.headers.accept)) return door.page.send(reply);
  const ledger = ledgerOf(door, req);
  let params: Params;
  try {
    params = readParams(req);
  } catch (err) {
    return sendError(door, err, req, reply, ledger);
  }
  const type = responseType(req.headers.accept);
  // An identical query of the same key answered a moment ago, with nothing changed since:
  // its answer again. Keyed by the key itself, so no answer can reach another key (export
  // jobs, the plan's budget); export fields are never kept, as their progress moves.
  const key =
    req.apiKey === undefined || req.apiKey === null
      ? undefined
      : `${req.apiKey.id}\u0000${params.operationName ?? ''}\u0000${params.query}\u0000${JSON.stringify(params.variables ?? null)}`;
  const version = door.opts.analytics.answersVersion();
  const remembered = key === undefined ? undefined : door.answerCache.get(key, version);
  if (remembered !== undefined) return sendRemembered(door, req, reply, ledger, remembered, type);
  const result = await run(door, req, params, ledger);
  if (result.type !== 'RESPONSE') {
    // Only subscriptions or @defer would stream, and neither reaches execution here.
    result.unsubscribe();
    return sendError(door, new AppError(Errors.internal, 'unexpected streamed result'), req, reply, ledger);
  }
  return sendResult(door, req, reply, ledger, result, type, { key, version });
}

export async function graphqlRoutes(app: FastifyInstance, opts: GraphqlRouteOptions): Promise<void> {
  const schema: GraphQLSchema = opts.schema ?? buildExecutableSchema(undefined, opts.analytics.measures, opts.catalog);
  const door: Door = {
    opts,
    schema,
    budgets: opts.budgets ?? PLAN_QUERY_BUDGET,
    guard: {
      schema,
      analytics: opts.analytics,
      catalog: opts.catalog ?? CATALOG,
      ...(opts.exports === undefined ? {} : { exports: opts.exports }),
      timeoutMs: opts.timeoutMs ?? GRAPHQL_TIMEOUT_MS,
      maxPoints: opts.maxDocumentPoints ?? GRAPHQL_MAX_DOCUMENT_POINTS,
    },
    budgetBytes: opts.responseBudgetBytes ?? GRAPHQL_RESPONSE_BUDGET_BYTES,
    rules: [...specifiedRules.filter((r) => r !== MaxIntrospectionDepthRule), introspectionDepthLimit, depthLimit(), aliasLimit()],
    page: graphiqlAssets(),
    documents: new DocumentCache(),
    answerCache: new AnswerCache(opts.answerCache),
  };
  app.addHook('onClose', async () => door.answerCache.close());
  // Errors raised before the handler (the access-control hooks, the body parser) are
  // answered in GraphQL's shape too, on every route of this plugin.
  app.setErrorHandler((err, req, reply) => sendError(door, err, req, reply));
  const handler = (req: FastifyRequest, reply: FastifyReply) => handle(door, req, reply);
  // GET /graphql asked by a browser for the GraphiQL page needs no key (wantsGraphiql, access control).
  app.get('/graphql', { config: keyed('graphql', 'graphql') }, handler);
  app.post('/graphql', { bodyLimit: GRAPHQL_BODY_LIMIT_BYTES, config: keyed('graphql', 'graphql') }, handler);
  // GraphiQL's script, style and packaged files, which a browser loads without a key: they hold no data.
  app.get('/graphql/graphiql.js', { config: open('graphql') }, (_req, reply) => door.page.script(reply));
  app.get('/graphql/graphiql.css', { config: open('graphql') }, (_req, reply) => door.page.style(reply));
  app.get<{ Params: { name: string } }>('/graphql/assets/:name', { config: open('graphql') }, async (req, reply) => {
    const sent = door.page.packaged(req.params.name, reply);
    if (sent === undefined) throw notFound(`no GraphiQL asset named ${JSON.stringify(req.params.name.slice(0, GRAPHIQL_QUOTED_NAME_MAX_CHARS))}`);
    return sent;
  });
}
