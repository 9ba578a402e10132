// POST and GET /graphql, and the GraphiQL page. graphql-helix runs the request (parse,
// validate, operation selection, execute) behind this thin adapter and nowhere else, so it
// can be swapped; the adapter reads the request parameters itself (helix reads POST
// `extension`, a typo), sends every answer through Fastify's reply (helix's sendResult
// writes to the raw socket, losing X-RateLimit-* and x-request-id), and sets the status
// GraphQL-over-HTTP asks for. Before anything runs, a guard plans each top-level field,
// counts it against the rate limit, costs it with the one cost model and refuses the
// request over the plan's budget (docs/graphql.md).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  execute,
  getArgumentValues,
  getDirectiveValues,
  getOperationAST,
  getVariableValues,
  GraphQLError,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  MaxIntrospectionDepthRule,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FieldNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationRule,
} from 'graphql';
import { HttpError, processRequest } from 'graphql-helix';
import { AppError, Errors, kindForStatus, notFound, type ErrorKind } from '../../core/errors.ts';
import {
  GRAPHQL_BODY_LIMIT_BYTES,
  GRAPHQL_MAX_DOCUMENT_CHARS,
  GRAPHQL_MAX_ROOT_FIELDS,
  GRAPHQL_MAX_TOKENS,
  GRAPHQL_TIMEOUT_MS,
} from '../../core/limits.ts';
import { PLAN_QUERY_BUDGET, type Plan } from '../../core/plans.ts';
import { pathOf, wantsGraphiql } from '../access/protected-paths.ts';
import type { Analytics } from '../analytics/analytics.ts';
import { fieldError, formatError, graphqlError } from './errors.ts';
import type { FreshnessWatermark } from '../freshness.ts';
import { buildExtensions } from './extensions.ts';
import { planField, type FieldPlan } from './field-plans.ts';
import { planExportField } from './export-plans.ts';
import type { ExportService } from '../exports/export-service.ts';
import { buildExecutableSchema, type RequestContext } from './schema.ts';
import { aliasLimit, depthLimit, introspectionDepthLimit } from './validation-rules.ts';

export interface GraphqlRouteOptions {
  analytics: Analytics;
  /** The executable schema (the one /graphql/stream shares); built from api/graphql/schema/ unless given. */
  schema?: GraphQLSchema;
  /** Where extensions.freshness comes from (api/freshness.ts); left out when absent. */
  freshness?: FreshnessWatermark;
  /** Cost budget per plan; PLAN_QUERY_BUDGET (shared with the SQL sandbox) unless set. */
  budgets?: Readonly<Record<Plan, number>>;
  /** Longest a request may run; GRAPHQL_TIMEOUT_MS unless set. */
  timeoutMs?: number;
  /** Export jobs (exportDataset, exportJob, exportJobs, cancelExportJob); those fields answer an error without it. */
  exports?: ExportService;
}

const GRAPHQL_RESPONSE = 'application/graphql-response+json';
const JSON_TYPE = 'application/json';

/** The media type of the answer: graphql-response+json when the client accepts it, else JSON. */
function responseType(accept: string | undefined): string {
  if (accept === undefined) return JSON_TYPE;
  const accepted = accept.split(',').map((p) => p.trim().toLowerCase()).filter((p) => !/;\s*q=0(\.0*)?\s*(;|$)/.test(p));
  return accepted.some((p) => p.startsWith(GRAPHQL_RESPONSE)) ? GRAPHQL_RESPONSE : JSON_TYPE;
}

interface Params {
  query: string;
  operationName?: string;
  variables?: Record<string, unknown>;
  extensions?: Record<string, unknown>;
}

/** A request GraphQL-over-HTTP calls malformed: always 400, whatever the accepted type. */
const badRequest = (message: string): AppError => new AppError(Errors.invalidRequest, message);

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The request parameters of a POST body or a GET query string, strictly typed. */
function readParams(req: FastifyRequest): Params {
  let source: Record<string, unknown>;
  const decoded = (name: string, v: unknown): unknown => {
    if (req.method !== 'GET' || v === undefined) return v;
    if (typeof v !== 'string') throw badRequest(`${name} must be given once`);
    if (name === 'query' || name === 'operationName') return v;
    try {
      return JSON.parse(v) as unknown;
    } catch {
      throw badRequest(`${name} must be a JSON object`);
    }
  };
  if (req.method === 'GET') source = (req.query ?? {}) as Record<string, unknown>;
  else if (typeof req.body === 'string') {
    // Fastify parses text/plain into a string; a GraphQL request body is JSON.
    throw new AppError(Errors.unsupportedMediaType, 'send the request as application/json (or use GET with a query string)');
  } else if (isMap(req.body)) source = req.body;
  else throw badRequest('the body must be a JSON object {"query": "...", "variables": {...}, "operationName": "...", "extensions": {...}}');

  const query = decoded('query', source.query);
  if (query === undefined || query === null) throw badRequest('query is required: the GraphQL document as a string');
  if (typeof query !== 'string') throw badRequest('query must be a string');
  const operationName = decoded('operationName', source.operationName);
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') throw badRequest('operationName must be a string');
  const variables = decoded('variables', source.variables);
  if (variables !== undefined && variables !== null && !isMap(variables)) throw badRequest('variables must be a JSON object');
  const extensions = decoded('extensions', source.extensions);
  if (extensions !== undefined && extensions !== null && !isMap(extensions)) throw badRequest('extensions must be a JSON object');
  return {
    query,
    ...(typeof operationName === 'string' ? { operationName } : {}),
    ...(isMap(variables) ? { variables } : {}),
    ...(isMap(extensions) ? { extensions } : {}),
  };
}

const tooComplex = (message: string): GraphQLError => graphqlError(Errors.queryTooComplex, message);

/**
 * Parsed documents by text, and validation results by document: clients send the same few
 * documents over and over, and validation (some thirty rules) was most of a cached answer's
 * CPU time. Bounded: the oldest entry goes once there are DOCUMENT_CACHE_ENTRIES.
 */
const DOCUMENT_CACHE_ENTRIES = 500;
const parsedDocuments = new Map<string, DocumentNode>();
const validations = new WeakMap<DocumentNode, readonly GraphQLError[]>();

function cachedParse(source: string): DocumentNode {
  const hit = parsedDocuments.get(source);
  if (hit !== undefined) return hit;
  const document = parseDocument(source);
  if (parsedDocuments.size >= DOCUMENT_CACHE_ENTRIES) parsedDocuments.delete(parsedDocuments.keys().next().value as string);
  parsedDocuments.set(source, document);
  return document;
}

function parseDocument(source: string): DocumentNode {
  if (source.length > GRAPHQL_MAX_DOCUMENT_CHARS) {
    throw tooComplex(`the document is ${source.length} characters long; at most ${GRAPHQL_MAX_DOCUMENT_CHARS} are allowed`);
  }
  try {
    return parse(source, { maxTokens: GRAPHQL_MAX_TOKENS, noLocation: false });
  } catch (err) {
    // graphql 16 words it "more that N tokens"; match the number and the word only.
    if (err instanceof GraphQLError && /\d+ tokens/.test(err.message)) {
      throw tooComplex(`the document has more than ${GRAPHQL_MAX_TOKENS} tokens; send a smaller document`);
    }
    throw err;
  }
}

/** Top-level fields of the operation by response key, after fragments and @skip/@include. */
function topLevelFields(document: DocumentNode, op: OperationDefinitionNode, variables: Record<string, unknown>): Map<string, FieldNode> {
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  const out = new Map<string, FieldNode>();
  const included = (node: Parameters<typeof getDirectiveValues>[1]): boolean =>
    getDirectiveValues(GraphQLSkipDirective, node, variables)?.if !== true && getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false;
  const visit = (set: SelectionSetNode, seen: Set<string>): void => {
    for (const s of set.selections) {
      if (!included(s)) continue;
      if (s.kind === Kind.FIELD) {
        const key = s.alias?.value ?? s.name.value;
        if (!out.has(key)) out.set(key, s);
      } else if (s.kind === Kind.INLINE_FRAGMENT) visit(s.selectionSet, seen);
      else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        const f = fragments.get(s.name.value);
        if (f) visit(f.selectionSet, seen);
      }
    }
  };
  visit(op.selectionSet, new Set());
  return out;
}

/** What one request's guard learned, for its answer's extensions. */
interface Ledger {
  requested: number;
  budget: number;
  /** Top-level fields, each one request against the rate limit (0 until the guard ran). */
  fields: number;
  /** The operation was a query whose answer may be reused: not a mutation, and no export job
   *  field (those answer per key, and change as jobs run, with no data version to tell). */
  query: boolean;
}

/** A complete answer of a query, kept to answer the identical request again. */
interface Remembered {
  version: string;
  at: number;
  fields: number;
  requested: number;
  data: unknown;
}

/**
 * Whole answers of identical query requests (same API key, document, operation and variables)
 * while no data has landed and the registry is unchanged (Analytics.answersVersion), and
 * for ANSWER_MEMO_MS at most (writes of other processes). A dashboard polling one query
 * then costs what a cached JSON-RPC call costs: no parse, validation, planning, costing or
 * execution. The rate limit and the answer's extensions are as for a first answer: each
 * top-level field is charged again and the remembered cost is reported. Only answers with
 * data and no errors are kept; bounded by count.
 */
const ANSWER_MEMO_MS = 2000;
const ANSWER_MEMO_ENTRIES = 1000;
class AnswerMemo {
  private readonly entries = new Map<string, Remembered>();

  get(key: string, version: string): Remembered | undefined {
    const hit = this.entries.get(key);
    if (hit === undefined) return undefined;
    if (hit.version !== version || Date.now() - hit.at >= ANSWER_MEMO_MS) {
      this.entries.delete(key);
      return undefined;
    }
    return hit;
  }

  set(key: string, value: Remembered): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    // Oldest first: a Map iterates in insertion order.
    while (this.entries.size > ANSWER_MEMO_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
  }
}

export async function graphqlRoutes(app: FastifyInstance, opts: GraphqlRouteOptions): Promise<void> {
  const schema: GraphQLSchema = opts.schema ?? buildExecutableSchema();
  const budgets = opts.budgets ?? PLAN_QUERY_BUDGET;
  const timeoutMs = opts.timeoutMs ?? GRAPHQL_TIMEOUT_MS;
  const rules = [...specifiedRules.filter((r) => r !== MaxIntrospectionDepthRule), introspectionDepthLimit, depthLimit(), aliasLimit()];
  const page = graphiqlAssets();
  const memo = new AnswerMemo();

  /** Any error answered outside an execution result (authentication, rate limit, body
   *  parsing, malformed parameters): the GraphQL error shape with the same status. */
  function sendError(err: unknown, req: FastifyRequest, reply: FastifyReply, ledger?: Ledger): FastifyReply {
    const fe = err as Partial<FastifyError> | null;
    let kind: ErrorKind;
    let message: string;
    if (err instanceof AppError) {
      kind = err.kind;
      message = kind.http >= 500 ? 'Internal error' : err.message;
      if (kind.http >= 500) req.log.error({ err }, 'GraphQL request failed');
    } else if (typeof fe?.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
      kind = kindForStatus(fe.statusCode);
      message = fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ? 'request body is not valid JSON'
        : fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'request body is empty; send {"query": "..."}'
          : fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? 'send the request as application/json (or use GET with a query string)'
            : fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? `request body is larger than ${GRAPHQL_BODY_LIMIT_BYTES} bytes`
              : String(fe.message ?? kind.title);
    } else {
      req.log.error({ err }, 'GraphQL request failed');
      kind = Errors.internal;
      message = 'Internal error';
    }
    if (err instanceof AppError && err.retryAfterSeconds !== undefined) reply.header('retry-after', String(err.retryAfterSeconds));
    const budget = ledger?.budget ?? (req.apiKey ? budgets[req.apiKey.plan] : 0);
    return reply
      .code(kind.http)
      .header('content-type', `${responseType(req.headers.accept)}; charset=utf-8`)
      .send({ errors: [{ message, extensions: { code: kind.graphql } }], extensions: buildExtensions({ cost: { requested: ledger?.requested ?? 0, budget } }) });
  }

  // Errors raised before the handler (the access-control hooks, the body parser) are
  // answered in GraphQL's shape too, on every route of this plugin.
  app.setErrorHandler((err, req, reply) => sendError(err, req, reply));

  /** The guard, then execution: helix calls this as its `execute`. */
  const guardedExecute = (req: FastifyRequest, ledger: Ledger) => async (args: ExecutionArgs): Promise<ExecutionResult> => {
    const op = getOperationAST(args.document, args.operationName);
    if (!op) return { errors: [graphqlError(Errors.invalidParams, 'the document has no operation of that name')] };
    // graphql-js leaves a mutation against a schema without Mutation to execution; refuse it as a request error.
    const root = schema.getRootType(op.operation);
    if (!root) return { errors: [graphqlError(Errors.invalidParams, `this service has no ${op.operation} operations`)] };
    const coerced = getVariableValues(schema, op.variableDefinitions ?? [], (args.variableValues ?? {}) as Record<string, unknown>, { maxErrors: 20 });
    if (coerced.errors) return { errors: coerced.errors };
    const variables = coerced.coerced;
    const fields = [...topLevelFields(args.document, op, variables)].filter(([, f]) => !f.name.value.startsWith('__'));
    ledger.fields = fields.length;
    ledger.query = op.operation === 'query';
    if (fields.length > GRAPHQL_MAX_ROOT_FIELDS) {
      return { errors: [tooComplex(`the operation asks for ${fields.length} top-level fields; at most ${GRAPHQL_MAX_ROOT_FIELDS} are allowed`)] };
    }
    // Each top-level field is one request against the rate limit (the first was counted on arrival).
    if (fields.length > 1) {
      try {
        await req.consumeRateLimit(fields.length - 1);
      } catch (err) {
        const e = err as AppError;
        throw new HttpError(e.kind?.http ?? 429, e.message, { graphqlErrors: [graphqlError(e.kind ?? Errors.rateLimited, e.message)] });
      }
    }
    const rootFields = root.getFields();
    const plans = new Map<string, FieldPlan>();
    const errors: GraphQLError[] = [];
    const creations = op.operation === 'mutation' ? fields.filter(([, f]) => f.name.value === 'exportDataset').length : 0;
    for (const [key, node] of fields) {
      try {
        const def = rootFields[node.name.value];
        if (!def) continue;
        const args = getArgumentValues(def, node, variables);
        const owner = req.apiKey === null ? null : { id: req.apiKey.id, plan: req.apiKey.plan };
        const exportPlan = opts.exports === undefined ? undefined : planExportField(opts.exports, owner, node.name.value, args, creations);
        if (exportPlan !== undefined) ledger.query = false;
        const plan = exportPlan ?? await planField(opts.analytics, node.name.value, args, ledger.budget);
        if (plan) plans.set(key, plan);
      } catch (err) {
        // A cap on work the caller already has running (export jobs) refuses the request as the rate limit does.
        if (err instanceof AppError && err.kind === Errors.rateLimited) {
          throw new HttpError(429, err.message, {
            headers: err.retryAfterSeconds === undefined ? [] : [{ name: 'Retry-After', value: String(err.retryAfterSeconds) }],
            graphqlErrors: [graphqlError(Errors.rateLimited, err.message)],
          });
        }
        errors.push(fieldError(err, [key]));
      }
    }
    if (errors.length === 0) {
      const scores = await Promise.all([...plans].map(async ([key, plan]) => {
        try {
          return (await opts.analytics.cost(plan.question)).score;
        } catch (err) {
          errors.push(fieldError(err, [key]));
          return 0;
        }
      }));
      ledger.requested = scores.reduce((a, b) => a + b, 0);
      if (errors.length === 0 && ledger.requested > ledger.budget) {
        errors.push(tooComplex(`the request would cost ${Math.round(ledger.requested)} (estimated rows read plus a base cost); `
          + `the ${req.apiKey?.plan ?? 'current'} plan allows ${ledger.budget} per request. queryComplexity lists what would lower it`));
      }
    }
    if (errors.length > 0) return { errors };

    const context: RequestContext = { plans };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<ExecutionResult>((resolve) => {
      timer = setTimeout(() => resolve({
        data: null,
        errors: [tooComplex(`the request ran longer than ${timeoutMs / 1000} s and was abandoned; ask for less (a shorter dateRange, fewer fields)`)],
      }), timeoutMs);
    });
    try {
      return await Promise.race([execute({ ...args, contextValue: context }) as Promise<ExecutionResult>, timeout]);
    } finally {
      clearTimeout(timer);
    }
  };

  async function handle(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    if (wantsGraphiql(req.method, pathOf(req.url), req.headers.accept)) return page.send(reply);
    const ledger: Ledger = { requested: 0, budget: req.apiKey ? budgets[req.apiKey.plan] : 0, fields: 0, query: false };
    let params: Params;
    try {
      params = readParams(req);
    } catch (err) {
      return sendError(err, req, reply, ledger);
    }
    const type = responseType(req.headers.accept);
    const send = async (status: number, body: Record<string, unknown>): Promise<FastifyReply> => {
      const freshness = opts.freshness?.extension(await opts.analytics.protocols());
      body.extensions = buildExtensions({ cost: { requested: ledger.requested, budget: ledger.budget }, freshness });
      return reply.code(status).header('content-type', `${type}; charset=utf-8`).send(body);
    };
    // An identical query of the same key answered a moment ago, with nothing changed since:
    // its answer again. Keyed by the key itself, so no answer can reach another key (export
    // jobs, the plan's budget); export fields are never kept, as their progress moves.
    const memoKey = req.apiKey === undefined || req.apiKey === null ? undefined
      : `${req.apiKey.id}\u0000${params.operationName ?? ''}\u0000${params.query}\u0000${JSON.stringify(params.variables ?? null)}`;
    const version = opts.analytics.answersVersion();
    const remembered = memoKey === undefined ? undefined : memo.get(memoKey, version);
    if (remembered !== undefined) {
      try {
        if (remembered.fields > 1) await req.consumeRateLimit(remembered.fields - 1);
      } catch (err) {
        return sendError(err, req, reply, ledger);
      }
      ledger.requested = remembered.requested;
      return send(200, { data: remembered.data });
    }
    const result = await processRequest<RequestContext>({
      // Headers helix reads (accept) only to choose streaming; answers here are single results.
      request: { body: req.body, headers: { accept: JSON_TYPE }, method: req.method, query: req.query },
      query: params.query,
      ...(params.operationName !== undefined ? { operationName: params.operationName } : {}),
      ...(params.variables !== undefined ? { variables: params.variables } : {}),
      ...(params.extensions !== undefined ? { extensions: params.extensions } : {}),
      schema,
      parse: cachedParse,
      validate: (s: GraphQLSchema, document: DocumentNode, validationRules: readonly ValidationRule[]) => {
        const op = getOperationAST(document, params.operationName);
        if (op?.operation === 'mutation' && req.method === 'GET') {
          throw new HttpError(405, 'mutations are accepted on POST only', {
            headers: [{ name: 'Allow', value: 'POST' }],
            graphqlErrors: [graphqlError(Errors.methodNotAllowed, 'mutations are accepted on POST only')],
          });
        }
        let errors = validations.get(document);
        if (errors === undefined) validations.set(document, (errors = validate(s, document, validationRules)));
        if (errors.length === 0 && op?.operation === 'subscription') {
          return [graphqlError(Errors.invalidParams, 'subscriptions are served as Server-Sent Events at /graphql/stream')];
        }
        return errors;
      },
      validationRules: rules,
      execute: guardedExecute(req, ledger),
    });
    if (result.type !== 'RESPONSE') {
      // Only subscriptions or @defer would stream, and neither reaches execution here.
      result.unsubscribe();
      return sendError(new AppError(Errors.internal, 'unexpected streamed result'), req, reply, ledger);
    }
    for (const h of result.headers) if (['allow', 'retry-after'].includes(h.name.toLowerCase())) reply.header(h.name.toLowerCase(), h.value);
    const payload = result.payload;
    // GraphQL-over-HTTP: a request error (no data: the document did not parse or validate,
    // variables did not coerce, the guard refused it) is 400 under graphql-response+json
    // and 200 under plain JSON; a result with data is 200; helix's 405 and our 429 stay.
    const requestError = payload.data === undefined;
    let status = result.status;
    if (status !== 405 && status !== 429) status = requestError && type === GRAPHQL_RESPONSE ? 400 : 200;
    const body: Record<string, unknown> = {};
    if (payload.errors && payload.errors.length > 0) {
      body.errors = payload.errors.map((e) => formatError(e instanceof GraphQLError ? e : new GraphQLError(String((e as Error).message)), (err) => req.log.error({ err }, 'GraphQL field failed')));
    }
    if (!requestError) body.data = payload.data;
    if (memoKey !== undefined && ledger.query && status === 200 && !requestError && body.errors === undefined) {
      memo.set(memoKey, { version, at: Date.now(), fields: ledger.fields, requested: ledger.requested, data: payload.data });
    }
    return send(status, body);
  }

  app.get('/graphql', handle);
  app.post('/graphql', { bodyLimit: GRAPHQL_BODY_LIMIT_BYTES }, handle);
  app.get('/graphql/graphiql.js', (_req, reply) => page.script(reply));
  app.get('/graphql/graphiql.css', (_req, reply) => page.style(reply));
  app.get<{ Params: { name: string } }>('/graphql/assets/:name', async (req, reply) => {
    const sent = page.packaged(req.params.name, reply);
    if (sent === undefined) throw notFound(`no GraphiQL asset named ${JSON.stringify(req.params.name.slice(0, 100))}`);
    return sent;
  });
}

// ---- GraphiQL -----------------------------------------------------------------------------

const ASSETS = path.join(import.meta.dirname, 'graphiql');
const require = createRequire(import.meta.url);
/** A file of an installed package (its folder found through package.json, which every package exports). */
const packageFile = (pkg: string, file: string): string => path.join(path.dirname(require.resolve(`${pkg}/package.json`)), file);
/** GraphiQL and React, as their packages ship them (no CDN): name in the URL -> file. */
const PACKAGE_ASSETS: Readonly<Record<string, { file: string; type: string }>> = {
  'graphiql.min.js': { file: packageFile('graphiql', 'graphiql.min.js'), type: 'text/javascript; charset=utf-8' },
  'graphiql.min.css': { file: packageFile('graphiql', 'graphiql.min.css'), type: 'text/css; charset=utf-8' },
  'react.production.min.js': { file: packageFile('react', 'umd/react.production.min.js'), type: 'text/javascript; charset=utf-8' },
  'react-dom.production.min.js': { file: packageFile('react-dom', 'umd/react-dom.production.min.js'), type: 'text/javascript; charset=utf-8' },
};

/**
 * GraphiQL's page, our start-up script and style, and the packages' files: no CDN, no inline
 * script. The Content-Security-Policy allows only this origin's scripts and requests;
 * styles may be inline (GraphiQL's editor sets them) and fonts are GraphiQL's embedded ones.
 */
function graphiqlAssets() {
  const html = readFileSync(path.join(ASSETS, 'index.html'), 'utf8');
  const js = readFileSync(path.join(ASSETS, 'graphiql.js'), 'utf8');
  const css = readFileSync(path.join(ASSETS, 'graphiql.css'), 'utf8');
  const packaged = new Map(Object.entries(PACKAGE_ASSETS).map(([name, a]) => [name, { body: readFileSync(a.file), type: a.type }]));
  const csp = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; font-src 'self' data:; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
  const common = (reply: FastifyReply, type: string): FastifyReply =>
    reply.header('content-type', type).header('content-security-policy', csp).header('x-content-type-options', 'nosniff').header('cache-control', 'no-cache');
  return {
    send: (reply: FastifyReply) => common(reply, 'text/html; charset=utf-8').send(html),
    script: (reply: FastifyReply) => common(reply, 'text/javascript; charset=utf-8').send(js),
    style: (reply: FastifyReply) => common(reply, 'text/css; charset=utf-8').send(css),
    /** A packaged file by name, or undefined for any other name (an allow-list, never a path). */
    packaged: (name: string, reply: FastifyReply) => {
      const a = packaged.get(name);
      return a === undefined ? undefined : common(reply, a.type).header('cache-control', 'public, max-age=86400').send(a.body);
    },
  };
}

