// The cost units of a keyless call, priced before it runs by the cost model every plan's
// budget uses (api/analytics/cost/analytics-cost.ts, api/services/sql/query-cost.ts):
//   client SQL (the query doors, SQL executions and SQL exports, MCP's run_sql): the engine's
//     estimate of what it reads plus what its joins produce, the figure a key's query is charged;
//   a catalog call (a JSON-RPC method, each call of a batch; a REST route, priced as its
//     door asks, api/doors/rest/rest-api.ts; an MCP catalog tool): answered once on a view that runs nothing (api/analytics/cost/dry-run.ts), its
//     statements priced by the engine's estimate of the rows each reads plus the base cost per
//     statement, as a prepared answer's cost is;
//   an export by filters: the engine's estimate of the rows of `transactions` it reads (before
//     sampling) plus the base cost of a statement;
//   a GraphQL query: what its answer will be charged (the guard's figure, extensions.cost),
//     by a pricer the GraphQL door gives (api/doors/graphql/document-cost.ts, wired by app.ts);
//   anything else (polls, pages, downloads, job lists, a GraphQL document
//     the guard would refuse): the cost model's base cost of one statement per call it holds
//     (a GraphQL document: each top-level field), as its rate limit counts them.
// Every call costs at least the base cost of one statement. Each price that asks the engine
// runs before any payment: a keyless MCP batch holds at most X402_PRICES.sqlPerPaidCall run_sql
// calls (limitPaidMcp), and one the MCP transport refuses whole is one call.
import type { FastifyRequest } from 'fastify';
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { GRAPHQL_SCAN_MAX_TOKENS } from '../../../core/limits/graphql.ts';
import { parse, Kind, type SelectionSetNode } from 'graphql';
import { Budget } from '../../../core/budget.ts';
import { RPC_MAX_BATCH } from '../../../core/limits/batches.ts';
import { AppError, Errors } from '../../../core/errors.ts';
import { X402_PRICES } from '../../../core/plans.ts';
import { boundTo } from '../../../warehouse/budgeted-warehouse.ts';
import type { Warehouse } from '../../../warehouse/warehouse.ts';
import type { Analytics } from '../../analytics/analytics.ts';
import { dryRunCost } from '../../analytics/cost/dry-run.ts';
import { estimateCost } from '../../analytics/cost/statement-cost.ts';
import { filterExportSpec } from '../exports/export-request.ts';
import { filterExportRead } from '../exports/export-writer.ts';
import { TABLES } from '../../../warehouse/tables.ts';
import { CATALOG, type RpcMethod } from '../../catalog/catalog.ts';
import { CatalogMethods } from '../positional/positional-calls.ts';
import type { Door } from '../../../core/limits/answers.ts';
import { policyOf } from '../access/route-policy.ts';
import type { SqlSandbox } from '../sql/sql-sandbox.ts';

export type Pricer = (req: FastifyRequest) => Promise<number>;

/** An MCP tool call's cost units: run_sql as /v1/query prices its query, a catalog tool as its method. */
export type ToolPricer = (ip: string, tool: string, args: Record<string, unknown>) => Promise<number>;

export interface PricingDeps {
  sandbox: SqlSandbox;
  /** The serving warehouse: the engine's estimates, under a budget of the x402 plan. */
  wh: Warehouse;
  /** The analytics layer over a warehouse (the dry run's, which runs nothing). */
  analyticsOver: (wh: Warehouse) => Analytics;
}

/** Routes whose body's `query` is client SQL, run (or exported) as it is. */
const SQL_BODY_ROUTES: ReadonlySet<string> = new Set(['/v1/query', '/api/v1/query', '/v1/query/csv', '/v1/query/exports', '/v1/query/executions']);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Top-level fields of a GraphQL document's operations (at least one; unreadable: one), as
 * the GraphQL guard counts them: through fragment spreads and inline fragments, each
 * fragment once per operation (a spread of three fields is three fields).
 */
function graphqlFields(body: unknown, query: unknown): number {
  const text = (body as { query?: unknown } | undefined)?.query ?? (query as { query?: unknown } | undefined)?.query;
  if (typeof text !== 'string') return 1;
  try {
    const { definitions } = parse(text, { maxTokens: GRAPHQL_SCAN_MAX_TOKENS });
    const fragments = new Map(definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d.selectionSet] as const] : [])));
    const count = (set: SelectionSetNode, seen: Set<string>): number =>
      set.selections.reduce((n, s) => {
        if (s.kind === Kind.FIELD) return n + 1;
        if (s.kind === Kind.INLINE_FRAGMENT) return n + count(s.selectionSet, seen);
        const fragment = fragments.get(s.name.value);
        if (fragment === undefined || seen.has(s.name.value)) return n;
        seen.add(s.name.value);
        return n + count(fragment, seen);
      }, 0);
    let fields = 0;
    for (const d of definitions) if (d.kind === Kind.OPERATION_DEFINITION) fields += count(d.selectionSet, new Set());
    return Math.max(1, fields);
  } catch {
    return 1;
  }
}

/**
 * Refuse (400) a keyless MCP body of more run_sql calls than X402_PRICES.sqlPerPaidCall:
 * each is priced by an engine estimate before any payment, so the count is bounded per request.
 */
export function limitPaidMcp(body: unknown): void {
  const sql = (Array.isArray(body) ? body : [body]).filter(
    (m) => isObject(m) && m.method === 'tools/call' && isObject(m.params) && m.params.name === 'run_sql',
  ).length;
  if (sql > X402_PRICES.sqlPerPaidCall) throw new AppError(Errors.invalidRequest, `a paid MCP batch holds at most ${X402_PRICES.sqlPerPaidCall} run_sql calls`);
}

/** A tool's named arguments as its method's positions (a left-out one null), as the MCP door passes them. */
const positions = (m: RpcMethod, args: Record<string, unknown>): unknown[] => m.params.map((p) => args[p.name] ?? null);

export class Pricing {
  private readonly methods = new CatalogMethods(CATALOG);
  private readonly byMethod = new Map(this.methods.list().map((m) => [m.method, m]));
  /** Pricers of routes whose door prices its own calls (GraphQL; REST's routes, by their answers): undefined, priced as any other. */
  private readonly byRoute = new Map<string, (req: FastifyRequest) => Promise<number | undefined>>();

  constructor(private readonly deps: PricingDeps) {}

  /** `route`'s calls priced by its door (the figure its answer will be charged), when it can. */
  priceWith(route: string, pricer: (req: FastifyRequest) => Promise<number | undefined>): void {
    this.byRoute.set(route, pricer);
  }

  /** `route`'s GET calls priced by the statements of their answer (`answer` run on a view that runs nothing): REST's routes (api/doors/rest/rest-api.ts). */
  priceByAnswer(route: string, answer: (dry: Analytics, req: FastifyRequest) => Promise<unknown>): void {
    this.priceWith(route, async (req) => (req.method === 'GET' ? this.answer(policyOf(req).door, (dry) => answer(dry, req)) : undefined));
  }

  /** The price of an HTTP call, in cost units. */
  readonly price: Pricer = async (req) => {
    const route = req.routeOptions.url ?? '';
    const body = req.body;
    const sql = isObject(body) ? body.query : undefined;
    if (req.method === 'POST' && SQL_BODY_ROUTES.has(route) && typeof sql === 'string') return this.sql(req.ip, policyOf(req).door, sql);
    const own = await this.byRoute.get(route)?.(req);
    if (own !== undefined) return Math.max(X402_PRICES.unitsPerCall, Math.ceil(own));
    if (route === '/v1/rpc') return this.rpc(body);
    if (route === '/graphql') return X402_PRICES.unitsPerCall * graphqlFields(body, req.query);
    if (route === '/mcp') return this.mcp(req.ip, body);
    if (req.method === 'POST' && route === '/v1/exports') return this.filterExport(body);
    return X402_PRICES.unitsPerCall;
  };

  /** The price of one MCP tool call, in cost units. */
  readonly priceTool: ToolPricer = async (ip, tool, args) => {
    if (tool === 'run_sql' && typeof args.query === 'string') return this.sql(ip, 'mcp', args.query);
    const m = this.byMethod.get(tool);
    return m === undefined ? X402_PRICES.unitsPerCall : this.answer('mcp', (dry) => this.methods.call(dry, tool, positions(m, args)));
  };

  /** Client SQL: as the x402 plan's query would be charged, on a budget of its own that nothing else uses. */
  private async sql(ip: string, door: Door, sql: string): Promise<number> {
    const cost = await this.deps.sandbox.cost({ key: `x402-quote:${ip}`, plan: 'x402', budget: new Budget('x402', door) }, sql);
    return Math.max(X402_PRICES.unitsPerCall, Math.ceil(cost.score));
  }

  /** A catalog answer's statements, priced by a dry run under a budget of the x402 plan. */
  private async answer(door: Door, answer: (dry: Analytics) => Promise<unknown>): Promise<number> {
    const wh = boundTo(this.deps.wh, new Budget('x402', door));
    const cost = await dryRunCost(this.deps.analyticsOver, wh, answer);
    return Math.max(X402_PRICES.unitsPerCall, Math.ceil(cost.score));
  }

  /** An export by filters: what it reads of `transactions`, estimated; a body it would refuse, the base cost. */
  private async filterExport(body: unknown): Promise<number> {
    const wh = boundTo(this.deps.wh, new Budget('x402', 'export'));
    try {
      const visible = await this.deps.analyticsOver(wh).protocols();
      const read = filterExportRead(filterExportSpec(body, visible), visible);
      const cost = await estimateCost(wh, read, { tables: [TABLES.transactions], crossJoins: 0 }, {});
      return X402_PRICES.unitsPerCall + Math.ceil(cost.score);
    } catch {
      return X402_PRICES.unitsPerCall;
    }
  }

  /** Each call of a JSON-RPC body (a batch refused whole is one call). */
  private async rpc(body: unknown): Promise<number> {
    const calls = Array.isArray(body) ? (body.length === 0 || body.length > RPC_MAX_BATCH ? [undefined] : body) : [body];
    let units = 0;
    for (const c of calls) {
      const method = isObject(c) && typeof c.method === 'string' && this.methods.has(c.method) ? c.method : undefined;
      const params = isObject(c) && Array.isArray(c.params) ? c.params : [];
      units += method === undefined ? X402_PRICES.unitsPerCall : await this.answer('rpc', (dry) => this.methods.call(dry, method, params));
    }
    return units;
  }

  /** A POST /mcp paid whole over HTTP: each tool call it holds (at least one call). */
  private async mcp(ip: string, body: unknown): Promise<number> {
    // A batch the transport refuses whole runs nothing: one call, no estimate.
    if (Array.isArray(body) && body.length > MAX_BATCH_SIZE) return X402_PRICES.unitsPerCall;
    let units = 0;
    for (const m of Array.isArray(body) ? body : [body]) {
      if (isObject(m) && m.method === 'tools/call' && isObject(m.params) && typeof m.params.name === 'string') {
        units += await this.priceTool(ip, m.params.name, isObject(m.params.arguments) ? m.params.arguments : {});
      }
    }
    return Math.max(X402_PRICES.unitsPerCall, units);
  }
}
