// The catalog (api/catalog/) and the doors derived from it, without an engine: the OpenRPC
// document against the OpenRPC meta-schema, and a catalog with one more operation and one
// more parameter built into every door (JSON-RPC params check, REST route and so the
// OpenAPI document, OpenRPC entry) with no adapter edited.
import jsonSchemaMetaSchema from '@json-schema-tools/meta-schema';
import openrpcMetaSchema from '@open-rpc/meta-schema';
import { Type } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import Fastify from 'fastify';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Analytics } from '../../api/analytics/analytics.ts';
import { CATALOG, rpcMethodsOf, type Operation } from '../../api/catalog/catalog.ts';
import { optional, rpcMethod, type ParamsCheck } from '../../api/catalog/declare.ts';
import { limit, options } from '../../api/catalog/params.ts';
import { registerOpenApi } from '../../api/doors/rest/openapi.ts';
import { CALENDAR_DAY_PATTERN, dayStart } from '../../core/vocabulary/primitives.ts';
import { restApi } from '../../api/doors/rest/rest-api.ts';
import { restGet } from '../../api/doors/rest/rest-route.ts';
import { envelope, errors, ok } from '../../api/doors/rest/rest-schemas.ts';
import { openRpcDocument } from '../../api/doors/rpc/openrpc.ts';
import { paramsChecks } from '../../api/services/positional/positional-calls.ts';
import { RpcMethods } from '../../api/doors/rpc/rpc-routes.ts';
import { McpTools } from '../../api/doors/mcp/mcp-tools.ts';
import { AppError } from '../../core/errors.ts';
import { LIST_LIMITS } from '../../core/limits/questions.ts';

const SPEC_METHODS = [
  'getTransaction',
  'getTransactions',
  'getTransactionsForAddress',
  'getProtocolStats',
  'getProtocolComparison',
  'getProtocolPerformance',
  'getTopProtocols',
  'getProtocolActivity',
  'getInstructionTypes',
  'getFailedTransactions',
  'getProtocols',
];

/** A facade that answers what the test's extra operation asks, and nothing else. */
// A stand-in for the layer (a unit test: no engine); its per-request view is itself.
const analytics = {
  protocols: async () => ['jupiter_v6'],
  under() {
    return this;
  },
} as unknown as Analytics;

/** Without `$schema`: both meta-schemas name one ajv does not know (their own). */
const withoutDialect = (schema: unknown): Record<string, unknown> => {
  const { $schema: _dialect, ...rest } = schema as Record<string, unknown>;
  return rest;
};

/** The OpenRPC meta-schema as ajv reads it; its JSONSchema definition is the JSON Schema
 *  meta-schema it refers to by URL, from its npm package (no network here). Formats are
 *  annotations only: the document names no server URL. */
function openRpcValidator() {
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  // Referred to with and without the trailing slash of its $id, which ajv does not equate.
  for (const $id of ['https://meta.json-schema.tools', 'https://meta.json-schema.tools/']) ajv.addSchema({ ...withoutDialect(jsonSchemaMetaSchema), $id });
  return ajv.compile(withoutDialect(openrpcMetaSchema));
}

const refusal = (run: () => unknown): string => {
  try {
    run();
  } catch (err) {
    if (err instanceof AppError) return err.message;
    throw err;
  }
  return 'accepted';
};

describe('the OpenRPC document', () => {
  it('is valid against the OpenRPC meta-schema and lists the 11 SPEC methods with params and results', () => {
    const doc = JSON.parse(JSON.stringify(openRpcDocument(CATALOG))) as {
      methods: { name: string; params: { name: string; schema: unknown }[]; result: { schema: unknown } }[];
    };
    const validate = openRpcValidator();
    expect(validate(doc), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
    // The check has teeth: a method without its params list is refused.
    expect(validate({ ...doc, methods: [{ name: 'getProtocols' }] })).toBe(false);
    expect(doc.methods.map((m) => m.name)).toEqual(SPEC_METHODS);
    const address = doc.methods.find((m) => m.name === 'getTransactionsForAddress')!;
    expect(address.params.map((p) => p.name)).toEqual(['address', 'options']);
    expect(address.params[1]!.schema).toMatchObject({ type: ['object', 'null'], properties: { limit: { maximum: 10_000, default: 100 } } });
    for (const m of doc.methods) expect(m.result.schema, m.name).toBeDefined();
  });

  it('documents the schemas the door validates with', () => {
    const doc = openRpcDocument(CATALOG);
    for (const [name, m] of rpcMethodsOf(CATALOG)) {
      const entry = doc.methods.find((x) => x.name === name) as { params: { schema: unknown }[]; result: { schema: unknown } };
      expect(
        entry.params.map((p) => p.schema),
        name,
      ).toEqual((m.schema as { items?: unknown[] }).items ?? []);
      expect(entry.result.schema).toBe(m.result);
    }
  });
});

describe('a new operation or parameter shows on every door, from the catalog alone', () => {
  // One more parameter (minFee) on a new operation with a JSON-RPC method and a REST route.
  const FeeOptions = options(
    { limit: limit({ default: 5, max: 50 }), minFee: Type.Optional(Type.Integer({ minimum: 0, description: 'Least fee, lamports' })) },
    'getFeeLeaders options',
  );
  const Query = Type.Object({ min_fee: Type.Optional(Type.Integer({ minimum: 1, description: 'Least fee, lamports' })) });
  const feeLeaders: Operation = {
    name: 'feeLeaders',
    summary: 'Protocols by fee (a test operation)',
    preset: 'protocols',
    cost: { requests: 1, question: 'fixed' },
    rpc: rpcMethod({
      method: 'getFeeLeaders',
      params: [optional('options', FeeOptions, 'limit, minFee')],
      result: Type.Array(Type.String()),
      run: async (a) => a.protocols(),
    }),
    rest: { url: '/analytics/fee-leaders' },
  };
  // Not declared by its request: its REST route is written by hand, REST's own code (api/doors/rest/).
  const handRoutes = {
    feeLeaders: restGet({
      url: '/analytics/fee-leaders',
      schema: { summary: 'Protocols by fee', querystring: Query, response: { 200: envelope(Type.Array(Type.String()), 'Names'), ...errors(400) } },
      run: async (a, req) => ok([...(await a.protocols()), `min_fee=${req.query.min_fee ?? 'none'}`], { count: 2 }),
    }),
  };
  const catalog = [...CATALOG, feeLeaders];

  it("JSON-RPC: dispatched and validated, with the door's error wording", async () => {
    const methods = new RpcMethods(analytics, catalog);
    expect(methods.has('getFeeLeaders')).toBe(true);
    expect(await methods.call('getFeeLeaders', [{ minFee: 10 }], null)).toEqual(['jupiter_v6']);
    const check: ParamsCheck = paramsChecks([feeLeaders.rpc!]).get('getFeeLeaders')!;
    expect(refusal(() => check(feeLeaders.rpc!.schema, [{ minFee: -1 }]))).toBe('options.minFee must be at least 0 (got -1)');
    expect(refusal(() => check(feeLeaders.rpc!.schema, [{ limit: 51 }]))).toBe('options.limit must be at most 50 (got 51)');
    expect(refusal(() => check(feeLeaders.rpc!.schema, [{ top: 1 }]))).toBe('options.top is not an accepted field of options for getFeeLeaders');
  });

  it('MCP: a tool with the parameter in its input schema, run and refused as JSON-RPC does', async () => {
    // The tools need only the facade for catalog methods; the other services are never called here.
    const unused = {} as never;
    const tools = new McpTools({ analytics, sandbox: unused, registry: unused, freshness: unused, usage: unused, catalog });
    const tool = tools.get('getFeeLeaders')!;
    expect(tool.description).toContain(feeLeaders.summary);
    expect(tool.inputSchema.properties.options).toMatchObject({ properties: { minFee: { type: 'integer', minimum: 0 }, limit: { maximum: 50, default: 5 } } });
    const caller = { keyId: 'k', plan: 'free' as const, budget: null, rateLimit: null };
    expect(JSON.parse(await tool.run({ options: { minFee: 10 } }, caller))).toEqual(['jupiter_v6']);
    await expect(tool.run({ options: { minFee: -1 } }, caller)).rejects.toThrow('options.minFee must be at least 0 (got -1)');
  });

  it('OpenRPC: the method and its parameter', () => {
    const doc = openRpcDocument(catalog);
    const m = doc.methods.find((x) => x.name === 'getFeeLeaders') as { params: { schema: { properties: Record<string, unknown> } }[] };
    expect(m.params[0]!.schema.properties.minFee).toMatchObject({ type: 'integer', minimum: 0 });
    expect(m.params[0]!.schema.properties.limit).toMatchObject({ maximum: 50, default: 5 });
    expect(openRpcValidator()(JSON.parse(JSON.stringify(doc)))).toBe(true);
  });

  it('REST and OpenAPI: the route, validated and documented from one schema', async () => {
    const app = Fastify();
    await registerOpenApi(app, { protocols: async () => ['jupiter_v6'] });
    await app.register(restApi, { prefix: '/api/v1', analytics, catalog, handRoutes });
    await app.ready();
    const doc = app.swagger() as { paths: Record<string, { get?: { parameters?: { name: string; schema: unknown }[] } }> };
    const param = doc.paths['/api/v1/analytics/fee-leaders']?.get?.parameters?.find((p) => p.name === 'min_fee');
    expect(param?.schema).toMatchObject({ type: 'integer', minimum: 1 });
    const good = await app.inject({ method: 'GET', url: '/api/v1/analytics/fee-leaders?min_fee=3' });
    expect(good.json()).toEqual({ success: true, data: ['jupiter_v6', 'min_fee=3'], meta: { count: 2 } });
    const bad = await app.inject({ method: 'GET', url: '/api/v1/analytics/fee-leaders?min_fee=0' });
    expect(bad.statusCode, bad.body).toBe(400);
    expect(bad.json()).toMatchObject({ message: 'min_fee must be >= 1' });
    await app.close();
  });
});

describe('the catalog and the other doors', () => {
  it('names only GraphQL fields the schema has', () => {
    const sdl = readFileSync(new URL('../../api/doors/graphql/schema/query.graphql', import.meta.url), 'utf8');
    for (const op of CATALOG) {
      if (op.graphql) expect(sdl, `${op.name} -> ${op.graphql.field}`).toMatch(new RegExp(`^\\s+${op.graphql.field}\\(|^\\s+${op.graphql.field}:`, 'm'));
    }
  });

  it('GraphQL states the page size of LIST_LIMITS.graphqlFirst', () => {
    const sdl = readFileSync(new URL('../../api/doors/graphql/schema/query.graphql', import.meta.url), 'utf8');
    const { default: first, max } = LIST_LIMITS.graphqlFirst;
    expect(sdl).toContain(`first (default ${first}, at most ${max}; larger is refused)`);
  });
});

describe('the calendar-day pattern of REST dates', () => {
  it('accepts exactly the days dayStart accepts, 1970-01-01 to 2106-02-07, leap days included', () => {
    const re = new RegExp(CALENDAR_DAY_PATTERN, 'u');
    const accepted = (v: string) => {
      try {
        dayStart(v, 'd');
        return true;
      } catch {
        return false;
      }
    };
    const mismatches: string[] = [];
    for (let y = 1965; y <= 2110; y++) {
      for (let m = 0; m <= 13; m++) {
        for (let d = 0; d <= 32; d++) {
          const v = `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
          if (re.test(v) !== accepted(v)) mismatches.push(v);
        }
      }
    }
    expect(mismatches).toEqual([]);
    for (const v of ['4157-52-69', '20250101', '2025-01-01T00:00:00Z', ' 2025-01-01']) expect(re.test(v), v).toBe(false);
  });
});
