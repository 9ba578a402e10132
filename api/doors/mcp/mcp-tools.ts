// The MCP door's tools: one per JSON-RPC method of the catalog (its arguments are the
// method's positions by name, each with the catalog's schema, so `{"options": {"limit": 5}}`
// is `params: [{"limit": 5}]` and a fault reads the same as on JSON-RPC), plus run_sql (the
// SQL sandbox, as /v1/query), list_protocols and get_usage. A tool answers JSON text; what
// it throws is turned into an MCP tool error by mcp-server.ts.
import type { Budget } from '../../../core/budget.ts';
import { AppError, Errors } from '../../../core/errors.ts';
import { formatBytes } from '../../../core/limits/answers.ts';
import { MAX_PARAMS_DEPTH } from '../../../core/limits/http.ts';
import { MCP_USAGE_HOURS } from '../../../core/limits/mcp.ts';
import { SQL_DEFAULT_LIMIT, SQL_MAX_LENGTH, SQL_MAX_LIMIT, SQL_TIMEOUT_SECONDS } from '../../../core/limits/sql.ts';
import { PLAN_LIMITS, type Plan } from '../../../core/plans.ts';

/** The usage figures run to a minute past now (the current bucket may be written meanwhile). */
const MINUTE_MS = 60_000;
import type { ProtocolRegistry } from '../../../warehouse/protocol-registry.ts';
import type { UsageStore } from '../../../warehouse/usage-store.ts';
import type { Analytics } from '../../analytics/analytics.ts';
import { CATALOG, type Operation, type RpcMethod } from '../../catalog/catalog.ts';
import { positionSchemas } from '../../catalog/declare.ts';
import { CatalogMethods } from '../../services/positional/positional-calls.ts';
import { deeperThan } from '../../services/positional/positional-calls.ts';
import type { FreshnessWatermark } from '../../services/freshness.ts';
import { PUBLISHED_TABLES } from '../../services/sql/sql-guard.ts';
import type { SqlSandbox } from '../../services/sql/sql-sandbox.ts';
import { checkSqlBody, SQL_QUERY, sqlBodySchema } from '../../services/sql/query-request.ts';

/** Who calls a tool: the request's key, plan, budget and rate-limit figures. */
/** Every tool's last words: a caller without a key may pay per call (docs/x402.md). */
const PAY_PER_CALL =
  ' Without an API key, where the operator enabled x402, each call is paid per call in USDC on Solana: unpaid, it answers ' +
  'a tool error holding the x402 payment requirements (structuredContent); call again with the signed payment in params._meta["x402/payment"] (docs/x402.md).';

export interface ToolCaller {
  keyId: string;
  plan: Plan;
  /** The request's budget (core/budget.ts); every statement a tool causes runs under it. */
  budget: Budget | null;
  /** The key's rate-limit figures once this request was counted. */
  rateLimit: { limit: number; remaining: number; resetAt: number } | null;
}

export interface Tool {
  name: string;
  title: string;
  description: string;
  /** JSON Schema of the arguments object. */
  inputSchema: { type: 'object'; properties: Record<string, unknown>; required?: string[]; additionalProperties: false };
  /** The answer as JSON text. */
  run(args: Record<string, unknown>, caller: ToolCaller): Promise<string>;
}

export interface ToolDeps {
  analytics: Analytics;
  sandbox: SqlSandbox;
  registry: ProtocolRegistry;
  freshness: FreshnessWatermark;
  usage: UsageStore;
  catalog?: readonly Operation[];
}

/** Every tool only reads this service's data. */
export const TOOL_ANNOTATIONS = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

const notAnArgument = (kind: typeof Errors.invalidParams, tool: string, name: string, names: readonly string[]): AppError =>
  new AppError(kind, `${name} is not an argument of ${tool} (${names.length === 0 ? 'it takes none' : `its arguments: ${names.join(', ')}`})`, { field: name });

/**
 * A method's positional params from the tool's named arguments: up to the last one given,
 * a left-out optional position as null (JSON-RPC clients fill them so), and cut at a
 * left-out required one, so the check names it as JSON-RPC does ("address (params[0]) is required").
 */
export function positionsOf(m: RpcMethod, args: Record<string, unknown>): unknown[] {
  const names = m.params.map((p) => p.name);
  const extra = Object.keys(args).find((k) => !names.includes(k));
  if (extra !== undefined) throw notAnArgument(Errors.invalidParams, m.method, extra, names);
  let last = -1;
  names.forEach((n, i) => {
    if (args[n] !== undefined) last = i;
  });
  const out: unknown[] = [];
  for (let i = 0; i <= last; i++) {
    const value = args[names[i]!];
    if (value !== undefined) out.push(value);
    else if (m.params[i]!.required) break;
    else out.push(null);
  }
  return out;
}

function catalogTool(op: Operation, m: RpcMethod, methods: CatalogMethods, analytics: Analytics): Tool {
  const schemas = positionSchemas(m.params);
  const args = m.params.map((p) => `${p.name}${p.required ? '' : ' (optional)'}: ${p.description}`);
  return {
    name: m.method,
    title: m.method,
    description:
      `${op.summary}. The same answer as the JSON-RPC method ${m.method}; ` +
      (args.length === 0 ? 'takes no arguments.' : `arguments by the method's parameter names: ${args.join('; ')}.`) +
      PAY_PER_CALL,
    inputSchema: {
      type: 'object',
      properties: Object.fromEntries(m.params.map((p, i) => [p.name, schemas[i]])),
      required: m.params.filter((p) => p.required).map((p) => p.name),
      additionalProperties: false,
    },
    run: async (a, caller) => {
      // Before validation, as on JSON-RPC: schema checks and error messages recurse into the value.
      if (deeperThan(a, MAX_PARAMS_DEPTH)) {
        throw new AppError(
          Errors.invalidParams,
          `arguments are nested more than ${MAX_PARAMS_DEPTH} levels deep (arrays and objects); no tool takes anything that deep`,
        );
      }
      // Under the request's budget, as its JSON-RPC method runs.
      return JSON.stringify(await methods.call(analytics.under(caller.budget), m.method, positionsOf(m, a)));
    },
  };
}

/** The CSV text of a run_sql answer, cut past `cap` bytes (a batch member's reservation: the batch may run it again with more). */
async function collect(body: AsyncIterable<Uint8Array>, cap: number): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  // for await ends the engine's stream (its return()) when the loop is left by the throw.
  for await (const c of body) {
    bytes += c.byteLength;
    if (bytes > cap) throw new AppError(Errors.responseTooLarge, `the answer is larger than the ${formatBytes(cap)} reserved for it in its batch`);
    chunks.push(Buffer.from(c));
  }
  return Buffer.concat(chunks).toString('utf8');
}

function sqlTool(sandbox: SqlSandbox): Tool {
  return {
    name: 'run_sql',
    title: 'Run a read-only SQL query',
    description:
      `One read-only ClickHouse SELECT (WITH, JOIN, aggregations, GROUP BY, ORDER BY, HAVING, LIMIT, OFFSET, subqueries) over the published tables ${PUBLISHED_TABLES.join(', ')}; ` +
      `the same sandbox, rules and errors as POST /v1/query. At most ${SQL_MAX_LENGTH} characters; LIMIT at most ${SQL_MAX_LIMIT}, ` +
      `LIMIT ${SQL_DEFAULT_LIMIT} appended when absent; ${SQL_TIMEOUT_SECONDS} s time-out; one statement, no semicolons; ` +
      'date is compared with YYYY-MM-DD strings. format json (default) answers {data, count, query}; csv answers the CSV text. ' +
      'The resource txa://tables/transactions/columns lists the columns.' +
      PAY_PER_CALL,
    // POST /v1/query's declared body, as its OpenAPI document shows it: one declaration.
    inputSchema: sqlBodySchema(SQL_QUERY),
    async run(args, caller) {
      // The arguments are POST /v1/query's body: its declared request, checked by the one check.
      const { query, format } = checkSqlBody(SQL_QUERY, args, 'run_sql');
      const sqlCaller = { key: caller.keyId, plan: caller.plan, ...(caller.budget === null ? {} : { budget: caller.budget }) };
      if (format === 'json') return sandbox.json(sqlCaller, query);
      return collect((await sandbox.csv(sqlCaller, query)).body, caller.budget?.answerBytes ?? Infinity);
    },
  };
}

/** The visible protocols with their program ids and how fresh their data is (list_protocols, the protocols resource). */
export async function protocolList(deps: Pick<ToolDeps, 'analytics' | 'registry' | 'freshness'>): Promise<unknown[]> {
  const visible = new Set(await deps.analytics.protocols());
  return (await deps.registry.list())
    .filter((e) => visible.has(e.protocolName))
    .map((e) => ({
      protocolName: e.protocolName,
      programId: e.programId,
      ...deps.freshness.extension([e.protocolName]),
    }));
}

function noArguments(tool: string, args: Record<string, unknown>): void {
  const extra = Object.keys(args)[0];
  if (extra !== undefined) throw notAnArgument(Errors.invalidParams, tool, extra, []);
}

function protocolsTool(deps: ToolDeps): Tool {
  return {
    name: 'list_protocols',
    title: 'List the protocols',
    description:
      'The protocols your key may query (the values of protocolName, protocol_name and filters.protocols), each with its program id ' +
      'and how fresh its data is: newestBlockTime (the newest stored block time) and ingestedAt (when data last arrived), ISO 8601, UTC. Takes no arguments.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    async run(args) {
      noArguments('list_protocols', args);
      return JSON.stringify(await protocolList(deps));
    },
  };
}

function usageTool(usage: UsageStore): Tool {
  return {
    name: 'get_usage',
    title: 'Usage of this API key',
    description:
      `Your key's plan, its rate limit right now (requests per minute, remaining in this window, when the window resets) and its requests, errors and ` +
      `rate-limited requests of the last ${MCP_USAGE_HOURS} hours by interface and method (recorded every few seconds, so the latest calls may be missing). Takes no arguments.`,
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    async run(args, caller) {
      noArguments('get_usage', args);
      const now = Date.now();
      const since = now - MCP_USAGE_HOURS * 3_600_000;
      const rows = await usage.query({ keyId: caller.keyId, fromMs: since, toMs: now + MINUTE_MS, granularity: 'hour' });
      const by = new Map<string, { interface: string; method: string; requests: number; errors: number; rateLimited: number }>();
      for (const r of rows) {
        const k = `${r.interface}\n${r.method}`;
        const e = by.get(k) ?? { interface: r.interface, method: r.method, requests: 0, errors: 0, rateLimited: 0 };
        e.requests += r.requests;
        e.errors += r.errors;
        e.rateLimited += r.rateLimited;
        by.set(k, e);
      }
      const rl = caller.rateLimit;
      return JSON.stringify({
        plan: caller.plan,
        rateLimit: {
          requestsPerMinute: PLAN_LIMITS[caller.plan],
          remaining: rl?.remaining ?? null,
          resetAt: rl === null ? null : new Date(rl.resetAt).toISOString(),
        },
        usage: {
          since: new Date(since).toISOString(),
          byMethod: [...by.values()].sort((a, b) => b.requests - a.requests || a.method.localeCompare(b.method)),
        },
      });
    },
  };
}

/** Every tool of the door, built once per process. */
export class McpTools {
  readonly list: readonly Tool[];
  private readonly byName: ReadonlyMap<string, Tool>;

  constructor(deps: ToolDeps) {
    const catalog = deps.catalog ?? CATALOG;
    const methods = new CatalogMethods(catalog);
    const byMethod = new Map(methods.list().map((m) => [m.method, m]));
    const fromCatalog = catalog.flatMap((op) => {
      const m = op.rpc === undefined ? undefined : byMethod.get(op.rpc.method);
      return m === undefined ? [] : [catalogTool(op, m, methods, deps.analytics)];
    });
    this.list = Object.freeze([...fromCatalog, sqlTool(deps.sandbox), protocolsTool(deps), usageTool(deps.usage)]);
    this.byName = new Map(this.list.map((t) => [t.name, t]));
  }

  get(name: string): Tool | undefined {
    return this.byName.get(name);
  }
}
