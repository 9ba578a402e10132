// The documents as a client generator reads them (OpenAPI for REST, SQL and exports; OpenRPC for
// JSON-RPC): every limit the server holds a parameter to is declared (path parameters' maxLength
// is the router's limit, held in characters as JSON Schema counts them), every 64-bit quantity
// says int64 and every fraction double, every enum is one named component, every operation has a
// stable readable operationId, a repeatable query parameter is an array sent form-exploded, a day
// parameter is not exploded (sent as the day), and the OpenRPC document names its server.
// test/openapi-{go,ts}-client.test.ts build Go and TypeScript clients from the same document.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG, operationIdOf } from '../../api/catalog/catalog.ts';
import { PATH_PARAM_TOO_LONG } from '../../api/services/access/http-protocol.ts';
import { HTTP_MAX_PATH_PARAM_CHARS } from '../../core/limits/http.ts';
import { apiKeyHeaders } from '../support/api-key.ts';
import { isFraction, isInteger, isWholeNumber, longestString, resolved, schemasOf } from '../support/openapi-walk.ts';
import { startApp } from '../support/services.ts';

type Json = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  schema: Json;
  style?: string;
  explode?: boolean;
}
interface Operation {
  operationId?: string;
  parameters?: Parameter[];
}

let t: Awaited<ReturnType<typeof startApp>>;
let headers: Record<string, string>;
let openApi: Json & { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Json> } };
let openRpc: Json;

beforeAll(async () => {
  t = await startApp();
  headers = await apiKeyHeaders(t.app);
  openApi = (await t.app.inject({ url: '/api/v1/openapi.json', headers: { host: 'api.example.test:8080' } })).json();
  openRpc = (await t.app.inject({ url: '/v1/openrpc.json', headers: { host: 'api.example.test:8080' } })).json();
});
afterAll(async () => t?.cleanup());

const operations = () =>
  Object.entries(openApi.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, path, op })));

/** The 64-bit quantities, by field name, wherever they appear in either document: totals and
 *  counts of records, lamports and compute units and their sums, rows, bytes and costs, seeds
 *  (0..2^32-1), file sizes, Unix seconds (past 2038). A declared list, not a guess: each name
 *  must occur, and every whole number under it must say int64. */
const INT64_FIELDS = [
  'totalTransactions',
  'successfulTransactions',
  'failedTransactions',
  'transactionCount',
  'successCount',
  'failedCount',
  'total',
  'totalRows',
  'fee',
  'computeUnits',
  'totalFees',
  'totalComputeUnits',
  'minFee',
  'maxFee',
  'totalVolume',
  'rowsRead',
  'bytesRead',
  'cost',
  'elapsedMs',
  'rows',
  'bytes',
  'rowsWritten',
  'rowsTotal',
  'rowCount',
  'fileSize',
  'bytesOnDisk',
  'uncompressedBytes',
  'seed',
  'split',
  'sampling',
  'blockTime',
  'firstSeen',
  'lastSeen',
  'timestamp',
  'gte',
  'lte',
];
const INT32_MAX = 2 ** 31 - 1;

describe('64-bit numbers', () => {
  it('every 64-bit field of the declared list says format int64, in OpenAPI and OpenRPC', () => {
    for (const [label, doc] of [
      ['OpenAPI', openApi],
      ['OpenRPC', openRpc],
    ] as const) {
      const whole = schemasOf(doc).filter((s) => s.property !== undefined && INT64_FIELDS.includes(s.property) && isWholeNumber(s.schema));
      expect(
        whole.filter((s) => s.schema.format !== 'int64').map((s) => s.at),
        label,
      ).toEqual([]);
    }
    const seen = new Set([...schemasOf(openApi), ...schemasOf(openRpc)].filter((s) => isWholeNumber(s.schema)).map((s) => s.property));
    expect(
      INT64_FIELDS.filter((f) => !seen.has(f)),
      'fields of the list found in neither document',
    ).toEqual([]);
    // The quantity the Go client could not decode: an export job's split seed.
    const job = schemasOf(openApi).find((s) => s.at.includes('/v1/exports/{id}') && s.at.endsWith('seeds.properties.split'));
    expect(job?.schema).toMatchObject({ type: 'integer', format: 'int64' });
  });

  it('no integer is left to be read as 32-bit unless its declared maximum fits, and no fraction as a 32-bit float', () => {
    for (const [label, doc] of [
      ['OpenAPI', openApi],
      ['OpenRPC', openRpc],
    ] as const) {
      const all = schemasOf(doc);
      const narrow = all.filter(
        (s) => isInteger(s.schema) && s.schema.format !== 'int64' && !(typeof s.schema.maximum === 'number' && s.schema.maximum <= INT32_MAX),
      );
      expect(
        narrow.map((s) => s.at),
        label,
      ).toEqual([]);
      expect(
        all.filter((s) => isFraction(s.schema) && s.schema.format !== 'double').map((s) => s.at),
        label,
      ).toEqual([]);
    }
  });
});

describe('enums', () => {
  it('every enum is a named component, referenced where it is used (none inline)', () => {
    const enums = schemasOf(openApi).filter((s) => Array.isArray(s.schema.enum));
    expect(enums.filter((s) => !/^components\.schemas\.[A-Za-z0-9]+$/.test(s.at)).map((s) => `${s.at}: ${JSON.stringify(s.schema.enum)}`)).toEqual([]);
    for (const s of enums) expect(s.schema.title, s.at).toBe(s.at.split('.').pop());
    // The two the Go client tripped over: the nullable stratifyBy with a default, and the granularity with one.
    const body = openApi.paths['/v1/exports']!.post as unknown as { requestBody: { content: Record<string, { schema: Json }> } };
    const sampling = resolved(openApi, (body.requestBody.content['application/json']!.schema.properties as Record<string, Json>).sampling!);
    const stratifyBy = (sampling.properties as Record<string, Json>).stratifyBy!;
    expect(stratifyBy).toMatchObject({ allOf: [{ $ref: '#/components/schemas/StratumColumn' }], default: 'protocol_name', nullable: true });
    expect(openApi.components.schemas.StratumColumn).toMatchObject({ type: 'string', enum: expect.arrayContaining(['protocol_name']) });
  });

  it('no two enums give a value the same constant name (a Go client declares them all in one package)', () => {
    const constant = (v: unknown) =>
      String(v)
        .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
        .toUpperCase()
        .replace(/[^A-Z0-9]+/g, '_');
    const owners = new Map<string, string[]>();
    for (const [name, s] of Object.entries(openApi.components.schemas)) {
      if (!Array.isArray(s.enum)) continue;
      const names = (s['x-enum-varnames'] as string[] | undefined) ?? s.enum.map(constant);
      for (const n of names) owners.set(n, [...(owners.get(n) ?? []), name]);
    }
    expect([...owners].filter(([, o]) => o.length > 1)).toEqual([]);
    // RANDOM was declared by two enums (SQL exports had their own): now one, both bodies' (export-request.ts).
    expect(openApi.components.schemas.SqlSamplingStrategy).toBeUndefined();
    expect(openApi.components.schemas.SamplingStrategy!.enum).toEqual(['RANDOM', 'STRATIFIED']);
    // An enum no other shares a value with keeps its values' own names (ExportJobStatus.COMPLETED).
    expect(openApi.components.schemas.ExportJobStatus!['x-enum-varnames']).toBeUndefined();
  });
});

describe('operations and parameters', () => {
  /** Stable names: a generated client's methods are named by them, so a rename is a breaking change made here on purpose. */
  const OPERATION_IDS: Record<string, string> = {
    'GET /api/v1/transactions/{signature}': 'getTransaction',
    'GET /api/v1/transactions': 'getTransactions',
    'GET /api/v1/analytics/protocols': 'getProtocolStats',
    'GET /api/v1/analytics/time-series': 'getProtocolActivity',
    'GET /api/v1/analytics/fees': 'getFeeStats',
    'GET /api/v1/stats': 'getGlobalStats',
    'POST /v1/query': 'runQuery',
    'POST /api/v1/query': 'runRestQuery',
    'POST /v1/query/csv': 'runCsvQuery',
    'GET /v1/metrics': 'getMetrics',
    'POST /v1/query/exports': 'createSqlExport',
    'GET /v1/query/exports': 'listSqlExports',
    'GET /v1/query/exports/{id}': 'getSqlExport',
    'POST /v1/query/exports/{id}/cancel': 'cancelSqlExport',
    'GET /v1/query/exports/{id}/files/{name}': 'downloadSqlExportFile',
    'POST /v1/exports': 'createExport',
    'GET /v1/exports': 'listExports',
    'GET /v1/exports/{id}': 'getExport',
    'POST /v1/exports/{id}/cancel': 'cancelExport',
    'GET /v1/exports/{id}/files/{name}': 'downloadExportFile',
    'GET /v1/exports/links/{id}/{name}': 'downloadExportLink',
    'POST /v1/query/executions': 'createQueryExecution',
    'GET /v1/query/executions/{id}': 'getQueryExecution',
    'POST /v1/query/executions/{id}/cancel': 'cancelQueryExecution',
    'GET /v1/query/executions/{id}/results': 'getQueryExecutionResults',
  };

  it("every operation has a readable, unique operationId, the catalog's where the catalog declares it", () => {
    const ids = operations().map(({ name, op }) => [name, op.operationId] as const);
    expect(Object.fromEntries(ids)).toEqual(OPERATION_IDS);
    for (const [name, id] of ids) expect(id, name).toMatch(/^[a-z][A-Za-z0-9]+$/);
    expect(new Set(ids.map(([, id]) => id)).size).toBe(ids.length);
    for (const op of CATALOG.filter((o) => o.rest)) expect(OPERATION_IDS[`GET /api/v1${op.rest!.url.replace(/:(\w+)/g, '{$1}')}`]).toBe(operationIdOf(op));
  });

  it('a repeatable query parameter is an array sent form-exploded, never "a string or an array"', () => {
    const params = operations().flatMap(({ name, op }) => (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => ({ name: `${name} ${p.name}`, p })));
    expect(params.filter(({ p }) => p.schema.anyOf !== undefined || p.schema.oneOf !== undefined).map((x) => x.name)).toEqual([]);
    const arrays = params.filter(({ p }) => p.schema.type === 'array');
    expect(arrays.map((x) => x.name).sort()).toEqual(['GET /v1/metrics instruction_type', 'GET /v1/metrics protocol']);
    for (const { name, p } of arrays) expect(p, name).toMatchObject({ style: 'form', explode: true });
  });

  it('a day parameter is declared form, not exploded: the same ?date_from=2025-01-31, which typescript-fetch then sends as the day', () => {
    // Exploded, openapi-generator's typescript-fetch client sends its Date as toISOString(), a timestamp the server refuses (400).
    const days = operations().flatMap(({ name, op }) =>
      (op.parameters ?? []).filter((p) => p.in === 'query' && p.schema.format === 'date').map((p) => ({ name: `${name} ${p.name}`, p })),
    );
    expect(days.map((d) => d.name.replace(/^GET \/api\/v1/, '')).sort()).toEqual(
      ['/analytics/fees', '/analytics/protocols', '/analytics/time-series', '/transactions'].flatMap((path) => [`${path} date_from`, `${path} date_to`]),
    );
    for (const { name, p } of days) expect(p, name).toMatchObject({ style: 'form', explode: false });
  });

  it("every path parameter declares the router's limit as its maxLength, and every string parameter is bounded", () => {
    for (const { name, path, op } of operations()) {
      const inPath = (op.parameters ?? []).filter((p) => p.in === 'path');
      expect(inPath.map((p) => p.name).sort(), name).toEqual([...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort());
      for (const p of inPath) expect(p.schema.maxLength, `${name} ${p.name}`).toBe(HTTP_MAX_PATH_PARAM_CHARS);
      for (const p of op.parameters ?? []) {
        const s = resolved(openApi, p.schema);
        const value = s.type === 'array' ? resolved(openApi, s.items as Json) : s;
        if (value.type === 'string') expect(longestString(value), `${name} ${p.in} ${p.name}`).toBeLessThan(Number.POSITIVE_INFINITY);
      }
    }
  });

  it('holds a path parameter to that many characters as JSON Schema counts them (code points): 414 past it', async () => {
    const get = (id: string) => t.app.inject({ url: `/v1/exports/${encodeURIComponent(id)}`, headers });
    const emoji = '\u{1F600}';
    // 100 characters of two UTF-16 units each: within the declared maxLength, so routed (an unknown job: 404).
    expect((await get(emoji.repeat(HTTP_MAX_PATH_PARAM_CHARS))).statusCode).toBe(404);
    expect((await get('a'.repeat(HTTP_MAX_PATH_PARAM_CHARS))).statusCode).toBe(404);
    for (const id of ['a'.repeat(HTTP_MAX_PATH_PARAM_CHARS + 1), emoji.repeat(HTTP_MAX_PATH_PARAM_CHARS + 1)]) {
      const res = await get(id);
      expect(res.statusCode, `${id.length} units`).toBe(414);
      expect(res.json()).toEqual({ error: 'URI Too Long', message: PATH_PARAM_TOO_LONG });
    }
  });
});

describe('the OpenRPC document', () => {
  it('names its server: the JSON-RPC endpoint where it was fetched, and rpc.discover the one it was asked at', async () => {
    expect(openRpc.servers).toEqual([expect.objectContaining({ url: 'http://api.example.test:8080/v1/rpc' })]);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/rpc',
      headers: { ...headers, host: 'rpc.example.test' },
      payload: { jsonrpc: '2.0', id: 1, method: 'rpc.discover' },
    });
    expect((res.json() as { result: Json }).result.servers).toEqual([expect.objectContaining({ url: 'http://rpc.example.test/v1/rpc' })]);
  });
});
