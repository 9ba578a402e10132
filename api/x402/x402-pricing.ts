// The cost units of a keyless call, priced before it runs by the cost model every plan's
// budget uses: client SQL (the query doors, SQL executions and SQL exports) by the engine's
// estimate of what it reads plus what its joins produce (api/sql/query-cost.ts, the same
// figure a key's query is charged); a door that prices no statement up front by the cost
// model's base cost of one statement per call it holds (a JSON-RPC batch: each call; a
// GraphQL document: each top-level field), as its rate limit counts them.
import type { FastifyRequest } from 'fastify';
import { parse, Kind } from 'graphql';
import { Budget } from '../../core/budget.ts';
import { X402_PRICES } from '../../core/plans.ts';
import { doorOf, rpcCallCount } from '../access/protected-paths.ts';
import type { SqlSandbox } from '../sql/sql-sandbox.ts';

export type Pricer = (req: FastifyRequest) => Promise<number>;

/** Routes whose body's `query` is client SQL, run (or exported) as it is. */
const SQL_BODY_ROUTES: ReadonlySet<string> = new Set(['/v1/query', '/api/v1/query', '/v1/query/csv', '/v1/query/exports', '/v1/query/executions']);

/** Top-level fields of a GraphQL document's operations (at least one; unreadable: one). */
function graphqlFields(body: unknown, query: unknown): number {
  const text = (body as { query?: unknown } | undefined)?.query ?? (query as { query?: unknown } | undefined)?.query;
  if (typeof text !== 'string') return 1;
  try {
    let fields = 0;
    for (const d of parse(text, { maxTokens: 10_000 }).definitions) if (d.kind === Kind.OPERATION_DEFINITION) fields += d.selectionSet.selections.length;
    return Math.max(1, fields);
  } catch {
    return 1;
  }
}

/** Client SQL's cost units: as the x402 plan's query would be charged, on a budget of its own that nothing else uses. */
async function sqlUnits(sandbox: SqlSandbox, ip: string, route: string, sql: string): Promise<number> {
  const cost = await sandbox.cost({ key: `x402-quote:${ip}`, plan: 'x402', budget: new Budget('x402', doorOf(route)) }, sql);
  return Math.max(X402_PRICES.unitsPerCall, Math.ceil(cost.score));
}

export function pricer(sandbox: SqlSandbox): Pricer {
  return async (req) => {
    const route = req.routeOptions.url ?? '';
    const sql = (req.body as { query?: unknown } | undefined)?.query;
    if (req.method === 'POST' && SQL_BODY_ROUTES.has(route) && typeof sql === 'string') return sqlUnits(sandbox, req.ip, route, sql);
    if (route === '/v1/rpc') return X402_PRICES.unitsPerCall * rpcCallCount(req.body);
    if (route === '/graphql') return X402_PRICES.unitsPerCall * graphqlFields(req.body, req.query);
    return X402_PRICES.unitsPerCall;
  };
}

/** An MCP tool call's cost units: run_sql as /v1/query prices its query, any other tool as one call. */
export type ToolPricer = (ip: string, tool: string, args: Record<string, unknown>) => Promise<number>;

export function toolPricer(sandbox: SqlSandbox): ToolPricer {
  return async (ip, tool, args) => (tool === 'run_sql' && typeof args.query === 'string' ? sqlUnits(sandbox, ip, '/mcp', args.query) : X402_PRICES.unitsPerCall);
}
