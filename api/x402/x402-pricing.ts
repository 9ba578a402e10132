// The cost units of a keyless call, priced before it runs by the cost model every plan's
// budget uses: client SQL (the query doors, SQL executions and SQL exports) by the engine's
// estimate of what it reads plus what its joins produce (api/sql/query-cost.ts, the same
// figure a key's query is charged); a door that prices no statement up front by the cost
// model's base cost of one statement per call it holds (a JSON-RPC or MCP batch: each call,
// MCP's run_sql by its SQL; a GraphQL document: each top-level field), as its rate limit
// counts them.
import type { FastifyRequest } from 'fastify';
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { parse, Kind, type SelectionSetNode } from 'graphql';
import { Budget } from '../../core/budget.ts';
import { AppError, Errors } from '../../core/errors.ts';
import { X402_PRICES } from '../../core/plans.ts';
import { doorOf, rpcCallCount } from '../access/protected-paths.ts';
import type { SqlSandbox } from '../sql/sql-sandbox.ts';

export type Pricer = (req: FastifyRequest) => Promise<number>;

/** Routes whose body's `query` is client SQL, run (or exported) as it is. */
const SQL_BODY_ROUTES: ReadonlySet<string> = new Set(['/v1/query', '/api/v1/query', '/v1/query/csv', '/v1/query/exports', '/v1/query/executions']);

/**
 * Top-level fields of a GraphQL document's operations (at least one; unreadable: one), as
 * the GraphQL guard counts them: through fragment spreads and inline fragments, each
 * fragment once per operation (a spread of three fields is three fields).
 */
function graphqlFields(body: unknown, query: unknown): number {
  const text = (body as { query?: unknown } | undefined)?.query ?? (query as { query?: unknown } | undefined)?.query;
  if (typeof text !== 'string') return 1;
  try {
    const { definitions } = parse(text, { maxTokens: 10_000 });
    const fragments = new Map(definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d.selectionSet] as const] : [])));
    const count = (set: SelectionSetNode, seen: Set<string>): number => set.selections.reduce((n, s) => {
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
 * An MCP body's units: each request of a batch (notifications run nothing), a run_sql tool
 * call by its SQL's estimate (the figure the same query costs on /v1/query), any other call
 * the base cost. A batch the transport refuses whole runs nothing: one call.
 */
async function mcpUnits(body: unknown, sqlUnits: (sql: string) => Promise<number>): Promise<number> {
  const messages = (Array.isArray(body) ? body : [body]).filter((m): m is Record<string, unknown> =>
    typeof m === 'object' && m !== null && typeof (m as { method?: unknown }).method === 'string' && Object.hasOwn(m, 'id'));
  if (Array.isArray(body) && body.length > MAX_BATCH_SIZE) return X402_PRICES.unitsPerCall;
  const sql = messages.flatMap((m) => {
    const params = m.params as { name?: unknown; arguments?: { query?: unknown } } | undefined;
    return m.method === 'tools/call' && params?.name === 'run_sql' && typeof params.arguments?.query === 'string' ? [params.arguments.query] : [];
  });
  // Each estimate is an engine statement run before any payment: bounded per request.
  if (sql.length > X402_PRICES.sqlPerPaidCall) throw new AppError(Errors.invalidRequest, `a paid MCP batch holds at most ${X402_PRICES.sqlPerPaidCall} run_sql calls`);
  let units = (messages.length - sql.length) * X402_PRICES.unitsPerCall;
  for (const text of sql) units += await sqlUnits(text);
  return Math.max(X402_PRICES.unitsPerCall, units);
}

export function pricer(sandbox: SqlSandbox): Pricer {
  return async (req) => {
    const route = req.routeOptions.url ?? '';
    // Priced as the x402 plan's query would be, on a budget of its own that nothing else uses.
    const sqlUnits = async (sql: string): Promise<number> => {
      const cost = await sandbox.cost({ key: `x402-quote:${req.ip}`, plan: 'x402', budget: new Budget('x402', doorOf(route)) }, sql);
      return Math.max(X402_PRICES.unitsPerCall, Math.ceil(cost.score));
    };
    const sql = (req.body as { query?: unknown } | undefined)?.query;
    if (req.method === 'POST' && SQL_BODY_ROUTES.has(route) && typeof sql === 'string') return sqlUnits(sql);
    if (route === '/v1/rpc') return X402_PRICES.unitsPerCall * rpcCallCount(req.body);
    if (route === '/graphql') return X402_PRICES.unitsPerCall * graphqlFields(req.body, req.query);
    if (route === '/mcp' && req.method === 'POST') return mcpUnits(req.body, sqlUnits);
    return X402_PRICES.unitsPerCall;
  };
}
