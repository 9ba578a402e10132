// POST /v1/rpc: the HTTP side of JSON-RPC, and GET /v1/openrpc.json, its OpenRPC document. Every JSON-RPC answer is HTTP 200, a parse
// failure included (DESIGN section 4); a body that yields no answer (notifications only)
// is 204 No Content. Authentication and rate limiting, which may answer 401/403/429, are
// hooks outside this plugin; errors from them are passed on to the app's handler.
// The method table is the catalog's methods (api/doors/rpc/positional-calls.ts checks their params
// against the declared schemas and runs their handlers), plus rpc.discover, which answers the
// OpenRPC document of the same catalog. No SQL here.
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import type { Budget } from '../../../core/budget.ts';
import { AppError, Errors } from '../../../core/errors.ts';
import { formatBytes } from '../../../core/limits/answers.ts';
import { RPC_BODY_LIMIT_BYTES } from '../../../core/limits/http.ts';
import type { Analytics } from '../../analytics/analytics.ts';
import { CATALOG, type Operation } from '../../catalog/catalog.ts';
import { CatalogMethods } from '../../services/positional/positional-calls.ts';
import { handleBody, parseRpcBody, unparsedBody, type CallContext, type MethodTable, type RpcBody, type RpcResponse } from './json-rpc.ts';
import { openRpcDocument, RPC_DISCOVER, withServer, type OpenRpcDocument } from './openrpc.ts';
import { invalidRequest } from './rpc-errors.ts';
import { keyed, open } from '../../services/access/route-policy.ts';

/** The methods as the envelope layer sees them: look up, validate, run. */
export class RpcMethods {
  private readonly methods: CatalogMethods;
  /** The OpenRPC document of this method table's catalog. */
  readonly openRpc: OpenRpcDocument;

  constructor(
    private readonly analytics: Analytics,
    catalog: readonly Operation[] = CATALOG,
  ) {
    this.methods = new CatalogMethods(catalog);
    this.openRpc = openRpcDocument(catalog);
  }

  has(name: string): boolean {
    return name === RPC_DISCOVER || this.methods.has(name);
  }

  /** Run `name` with every statement under `budget` (null: refused, as on an open route);
   *  rpc.discover names the server at `origin` when given (withServer). */
  async call(name: string, params: readonly unknown[], budget: Budget | null, origin?: string): Promise<unknown> {
    if (name !== RPC_DISCOVER) return this.methods.call(this.analytics.under(budget), name, params);
    if (params.length > 0) throw new AppError(Errors.invalidParams, `${RPC_DISCOVER} takes no parameters`, { field: 'params' });
    return origin === undefined ? this.openRpc : withServer(this.openRpc, origin);
  }

  /** The method table of a request asked at `origin`: rpc.discover's servers name it. */
  at(origin: string): MethodTable {
    return { has: (name) => this.has(name), call: (name, params, budget) => this.call(name, params, budget, origin) };
  }
}

/** The origin a request was asked at (scheme, host and port), as the OpenAPI document's servers state it. */
const originOf = (req: FastifyRequest): string => `${req.protocol}://${req.host}`;

/** What one request's calls report: internal errors to its log, each answer's method and
 *  outcome to the usage records (access control's onResponse reads req.rpcOutcomes); its
 *  budget, under which every call runs and reserves its answer bytes. */
class RequestContext implements CallContext {
  readonly reference: string;
  readonly outcomes: { method: string | undefined; error: boolean }[] = [];

  readonly budget: Budget | null;

  constructor(
    private readonly req: FastifyRequest,
    readonly budgetBytes: number | undefined,
  ) {
    this.reference = req.id;
    this.budget = req.budget;
  }

  onInternalError(err: unknown, reference: string): void {
    this.req.log.error({ err, reference }, 'JSON-RPC call failed');
  }

  onAnswer(method: string | undefined, error: boolean): void {
    this.outcomes.push({ method, error });
  }
}

export interface RpcRouteOptions {
  analytics: Analytics;
  /** Byte budget of one response; RPC_RESPONSE_BUDGET_BYTES (core/limits/) unless set. */
  responseBudgetBytes?: number;
  /** The methods' catalog; the service's unless set (tests). */
  catalog?: readonly Operation[];
}

export async function rpcRoutes(app: FastifyInstance, opts: RpcRouteOptions): Promise<void> {
  const methods = new RpcMethods(opts.analytics, opts.catalog);

  // Within this plugin only: read any content type as text and parse it here, so invalid
  // JSON becomes a JSON-RPC parse error (-32700) rather than Fastify's HTTP 400. The parsed
  // value (an array for a batch) is what request.body holds, for hooks that count calls.
  // parseRpcBody also reads numeric ids from the raw text, which JSON.parse may round: the
  // parse result, with those marks, is request.rpcBody.
  app.removeAllContentTypeParsers();
  app.decorateRequest('rpcBody', null);
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: RPC_BODY_LIMIT_BYTES }, (req, text, done) => {
    req.rpcBody = parseRpcBody(text as string);
    done(null, req.rpcBody.value);
  });

  // Body-level failures (too large, unreadable) still get a JSON-RPC answer; anything else
  // (authentication, rate limits) goes on to the app's error handler by being rethrown.
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    if (typeof err.code === 'string' && err.code.startsWith('FST_ERR_CTP_')) {
      const data =
        err.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? `the request body is larger than the ${formatBytes(RPC_BODY_LIMIT_BYTES)} limit (${RPC_BODY_LIMIT_BYTES} bytes); send fewer calls per batch`
          : 'the request body could not be read';
      const answer: RpcResponse = { jsonrpc: '2.0', id: null, error: invalidRequest(data) };
      return reply.code(200).send(answer);
    }
    throw err;
  });

  // The same document rpc.discover answers, so it needs no key.
  app.get('/v1/openrpc.json', { config: open() }, async (req, reply) =>
    reply.header('cache-control', 'public, max-age=300').send(withServer(methods.openRpc, originOf(req))),
  );

  app.post('/v1/rpc', { bodyLimit: RPC_BODY_LIMIT_BYTES, config: keyed('rpc', 'rpc') }, async (req, reply) => {
    // No body at all (no content type, nothing sent) is not valid JSON either.
    const body = req.rpcBody ?? unparsedBody();
    const ctx = new RequestContext(req, opts.responseBudgetBytes);
    req.rpcOutcomes = ctx.outcomes;
    const answer = await handleBody(body, methods.at(originOf(req)), ctx);
    // Answered by its deadline meanwhile (request-budget.ts): one reply per request.
    if (reply.sent) return reply;
    if (answer === undefined) return reply.code(204).send();
    return reply.code(200).header('content-type', 'application/json; charset=utf-8').send(answer);
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The JSON-RPC body as parsed, with its calls' marks (its value is request.body); null before parsing. */
    rpcBody: RpcBody | null;
  }
}
