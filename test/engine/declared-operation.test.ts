// One test-only operation, declared once by its request (api/catalog/declared.ts: one
// door-neutral TypeBox schema, its protocol scope, its cross-field rules), appears and works
// on every door: JSON-RPC, MCP, REST and GraphQL answer it alike, refuse the same invalid
// requests by the same rule (each in its own words), and the OpenAPI and OpenRPC documents
// and the GraphQL schema show it, rules included. No door was edited to offer it.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../../api/catalog/catalog.ts';
import { apiKeyHeaders } from '../support/api-key.ts';
import { ingestDemo } from '../support/fixtures.ts';
// A sample of the asked protocols (every visible one when none is asked), with the length of the range asked.
import { protocolSample } from '../support/sample-operation.ts';
import { startServices } from '../support/services.ts';

let app: FastifyInstance;
let headers: Record<string, string>;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  const { buildApp } = await import('../../api/server/app.ts');
  const services = await startServices();
  app = await buildApp(services, { catalog: [...CATALOG, protocolSample] });
  headers = await apiKeyHeaders(app);
  await ingestDemo(services, 200);
  cleanup = async () => {
    await app.close();
    await services.cleanup();
  };
});
afterAll(async () => cleanup());

/** What a door answered: the data, or the error's code and message as the door gives them. */
type Said = { data: unknown } | { code: string | number; message: string };

/** The request by its neutral names, sent through each door. */
interface Ask {
  protocols?: string[];
  days?: [string, string];
  limit?: number;
  offset?: number;
}

const SECONDS = { '2024-12-30': Date.UTC(2024, 11, 30) / 1000, '2024-12-31': Date.UTC(2024, 11, 31) / 1000 } as Record<string, number>;
const rpcOptions = (q: Ask) => ({
  ...(q.protocols ? { protocols: q.protocols } : {}),
  ...(q.days ? { blockTime: { gte: SECONDS[q.days[0]]!, lte: SECONDS[q.days[1]]! + 86_399 } } : {}),
  ...(q.limit === undefined ? {} : { limit: q.limit }),
  ...(q.offset === undefined ? {} : { offset: q.offset }),
});

const DOORS: Record<string, (q: Ask) => Promise<Said>> = {
  async rpc(q) {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/rpc',
      headers,
      payload: { jsonrpc: '2.0', id: 1, method: 'getProtocolSample', params: [rpcOptions(q)] },
    });
    const body = res.json() as { result?: unknown; error?: { code: number; data: string } };
    return body.error ? { code: body.error.code, message: body.error.data } : { data: body.result };
  },
  async mcp(q) {
    const res = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'getProtocolSample', arguments: { options: rpcOptions(q) } } },
    });
    const r = (res.json() as { result: { isError?: boolean; _meta?: { 'txa/error': { code: string } }; content: { text: string }[] } }).result;
    return r.isError ? { code: r._meta!['txa/error'].code, message: r.content[0]!.text } : { data: JSON.parse(r.content[0]!.text) };
  },
  async rest(q) {
    const params = new URLSearchParams();
    if (q.protocols) params.set('protocol_name', q.protocols[0]!);
    if (q.days) params.set('date_from', q.days[0]);
    if (q.days) params.set('date_to', q.days[1]);
    if (q.limit !== undefined) params.set('limit', String(q.limit));
    if (q.offset !== undefined) params.set('offset', String(q.offset));
    const res = await app.inject({ method: 'GET', url: `/api/v1/analytics/protocol-sample?${params}`, headers });
    const body = res.json() as { data?: unknown; message?: string };
    return res.statusCode === 200 ? { data: body.data } : { code: res.statusCode, message: body.message ?? res.body };
  },
  async graphql(q) {
    const filters = [q.protocols ? `protocols: ${JSON.stringify(q.protocols)}` : '', q.days ? `dateRange: { start: "${q.days[0]}", end: "${q.days[1]}" }` : '']
      .filter(Boolean)
      .join(', ');
    const args = [
      filters ? `filters: { ${filters} }` : '',
      q.limit === undefined ? '' : `limit: ${q.limit}`,
      q.offset === undefined ? '' : `offset: ${q.offset}`,
    ]
      .filter(Boolean)
      .join(', ');
    const query = `{ protocolSample${args ? `(${args})` : ''} { protocols seconds } }`;
    const res = await app.inject({ method: 'POST', url: '/graphql', headers: { ...headers, 'content-type': 'application/json' }, payload: { query } });
    const body = res.json() as { data?: { protocolSample: unknown }; errors?: { message: string; extensions: { code: string } }[] };
    return body.errors ? { code: body.errors[0]!.extensions.code, message: body.errors[0]!.message } : { data: body.data!.protocolSample };
  },
};

/** Every door's answer to `q`. */
const everyDoor = async (q: Ask): Promise<Record<string, Said>> =>
  Object.fromEntries(await Promise.all(Object.entries(DOORS).map(async ([door, send]) => [door, await send(q)] as const)));

const INVALID = { rpc: -32602, mcp: 'ERR_INVALID_PARAMS', rest: 400, graphql: 'BAD_USER_INPUT' } as Record<string, string | number>;

describe('an operation declared once by its request', () => {
  it('answers alike on JSON-RPC, MCP, REST and GraphQL', async () => {
    const q: Ask = { protocols: ['pump_fun'], days: ['2024-12-30', '2024-12-31'], limit: 1 };
    for (const [door, said] of Object.entries(await everyDoor(q))) {
      expect(said, door).toEqual({ data: { protocols: ['pump_fun'], seconds: 2 * 86_400 } });
    }
    // The defaults of the one declaration (limit 2) apply on every door.
    const all = await everyDoor({});
    for (const said of Object.values(all)) expect((said as { data: { protocols: string[] } }).data.protocols).toHaveLength(2);
  });

  it.each([
    ['a value past its maximum (the schema)', { limit: 4 }, /limit must be (at most 3|<= 3)/],
    ['offset + limit past 10 (the sumAtMost rule)', { offset: 9, limit: 3 }, /offset \+ limit must be at most 10 \(got 12\); ask for fewer/],
    ['an unknown protocol (the protocol scope)', { protocols: ['no_such_protocol'] }, /unknown protocol "no_such_protocol"/],
    ['a reversed range (ordered)', { days: ['2024-12-31', '2024-12-30'] as [string, string] }, /(is after|must not be later than)/],
  ] as const)('refuses %s on every door, each in its words', async (_what, q, rule) => {
    for (const [door, said] of Object.entries(await everyDoor(q as Ask))) {
      expect(said, door).toMatchObject({ code: INVALID[door] });
      expect((said as { message: string }).message, door).toMatch(rule);
    }
  });

  it('shows in OpenAPI, OpenRPC and the GraphQL schema, with its cross-field rules', async () => {
    const openapi = (await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as { paths: Record<string, { get: Record<string, unknown> }> };
    const route = openapi.paths['/api/v1/analytics/protocol-sample']!.get;
    // The route's days in order (REST's range), then the declaration's rules by REST's names.
    expect(route['x-cross-field-rules']).toEqual([
      { rule: 'ordered', params: ['date_from', 'date_to'] },
      { rule: 'sumAtMost', params: ['offset', 'limit'], maximum: 10 },
    ]);
    expect(JSON.stringify(route.parameters)).toContain('"name":"offset"');
    const openrpc = (await app.inject({ method: 'POST', url: '/v1/rpc', headers, payload: { jsonrpc: '2.0', id: 1, method: 'rpc.discover' } })).json() as {
      result: { methods: { name: string; [k: string]: unknown }[] };
    };
    const method = openrpc.result.methods.find((m) => m.name === 'getProtocolSample')!;
    expect(method['x-cross-field-rules']).toContainEqual({ rule: 'sumAtMost', params: ['offset', 'limit'], maximum: 10 });
    expect(method['x-cross-field-rules']).toContainEqual({ rule: 'ordered', params: ['options.blockTime.gte', 'options.blockTime.lte'] });
    const sdl = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { ...headers, 'content-type': 'application/json' },
      payload: { query: '{ __type(name: "Query") { fields { name description args { name } } } }' },
    });
    const field = (sdl.json() as { data: { __type: { fields: { name: string; description: string; args: { name: string }[] }[] } } }).data.__type.fields.find(
      (f) => f.name === 'protocolSample',
    )!;
    expect(field.args.map((a) => a.name)).toEqual(['filters', 'limit', 'offset']);
    expect(field.description).toContain('sumAtMost');
  });
});
