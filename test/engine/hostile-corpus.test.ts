// The hostile corpus (test/fixtures/hostile-requests.json) replayed through every door that
// offers each operation: JSON-RPC, MCP, REST and GraphQL. Each case is one request by its
// door-neutral names; this file writes it in each door's wire shape (JSON bodies as text, so
// numbers JSON.parse would round reach the door as sent) and holds every door to the case:
// refused with the door's code of the same error kind and a message naming the same rule,
// or, for a valid request at a bound, answered. Never a 5xx, a stack trace, or an echo of a
// hostile value whole.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../../api/catalog/catalog.ts';
import { Errors } from '../../core/errors.ts';
import type { Services } from '../../api/server/services.ts';
import { apiKeyHeaders } from '../support/api-key.ts';
import { ingestDemo } from '../support/fixtures.ts';
import { oneProtocolSample, protocolSample } from '../support/sample-operation.ts';
import { startServices } from '../support/services.ts';

type Door = 'rpc' | 'mcp' | 'rest' | 'graphql';
type Kind = 'invalidParams' | 'unparsableFilter' | 'invalidRequest';

interface Case {
  case: string;
  op: keyof typeof OPS;
  request: Record<string, unknown>;
  doors?: Door[];
  skip?: Partial<Record<Door, string>>;
  setup?: { inactive?: string };
  kinds?: Partial<Record<Door, Kind>>;
  expect: { rule?: string; message?: string; answer?: unknown };
}

const CORPUS = JSON.parse(readFileSync(new URL('../fixtures/hostile-requests.json', import.meta.url), 'utf8')) as { cases: Case[] };

/** Each door's code of each error kind (MCP: the tool error's code, or the JSON-RPC error's for a message refused whole). */
const CODES: Record<Kind, Record<Door, string | number>> = {
  invalidParams: { rpc: Errors.invalidParams.rpc, mcp: Errors.invalidParams.code, rest: Errors.invalidParams.http, graphql: Errors.invalidParams.graphql },
  unparsableFilter: {
    rpc: Errors.unparsableFilter.rpc,
    mcp: Errors.unparsableFilter.code,
    rest: Errors.unparsableFilter.http,
    graphql: Errors.unparsableFilter.graphql,
  },
  invalidRequest: { rpc: Errors.invalidRequest.rpc, mcp: Errors.invalidRequest.rpc, rest: Errors.invalidRequest.http, graphql: Errors.invalidRequest.graphql },
};

// ---- writing a neutral value on the wire ----------------------------------------------------

/** Cursors minted before the cases run, by the names the corpus uses. */
const tokens: Record<string, string> = {};

/** A value with its special forms resolved: $token a minted cursor, $deep nested objects (as $raw); $raw stays for json(). */
function resolve(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(resolve);
  if (typeof v !== 'object' || v === null) return v;
  const o = v as Record<string, unknown>;
  if (typeof o.$token === 'string') return tokens[o.$token] ?? expect.unreachable(`no token ${o.$token}`);
  // Written as JSON text: the test's own JSON.stringify would run out of stack first.
  if (typeof o.$deep === 'number') return { $raw: `${'{"a":'.repeat(o.$deep)}1${'}'.repeat(o.$deep)}` };
  if ('$raw' in o) return o;
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, resolve(x)]));
}

/** JSON text of `v`, each {$raw} written as its text (an own `__proto__` key is kept as a key). */
function json(v: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(v, (_k, x: unknown) => {
    if (typeof x === 'object' && x !== null && '$raw' in x) {
      raws.push(String((x as { $raw: string }).$raw));
      return `\u0001${raws.length - 1}`;
    }
    return x;
  });
  return text.replace(/"\\u0001(\d+)"/g, (_m, i: string) => raws[Number(i)]!);
}

/** A query-string value: {$raw} as its text, an array as the parameter repeated, an object as JSON. */
function query(params: Record<string, unknown>): string {
  const out: string[] = [];
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) {
      const text = typeof one === 'object' && one !== null ? ('$raw' in one ? String((one as { $raw: string }).$raw) : JSON.stringify(one)) : String(one);
      out.push(`${encodeURIComponent(k)}=${encodeURIComponent(text)}`);
    }
  }
  return out.join('&');
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const LAST_SECOND = 4_294_967_295;
/** Seconds of a real day (or undefined): JSON-RPC and MCP take a day range as block-time seconds. */
function seconds(day: unknown, end: boolean): number | undefined {
  if (typeof day !== 'string' || !DAY.test(day)) return undefined;
  const ms = Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1, Number(day.slice(8)));
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== day || ms < 0 || ms / 1000 > LAST_SECOND) return undefined;
  return Math.min(ms / 1000 + (end ? 86_399 : 0), LAST_SECOND);
}

/** The block-time range JSON-RPC and MCP get: the case's own, or its days as seconds (undefined: not expressible). */
function blockTime(r: Record<string, unknown>): unknown | null {
  if (r.blockTime !== undefined) return r.blockTime;
  const days = r.days as { from?: unknown; to?: unknown } | undefined;
  if (days === undefined) return undefined;
  const gte = days.from === undefined ? undefined : seconds(days.from, false);
  const lte = days.to === undefined ? undefined : seconds(days.to, true);
  if ((days.from !== undefined && gte === undefined) || (days.to !== undefined && lte === undefined)) return null;
  return { ...(gte === undefined ? {} : { gte }), ...(lte === undefined ? {} : { lte }) };
}

const dateRange = (r: Record<string, unknown>) => {
  const d = r.days as { from?: unknown; to?: unknown } | undefined;
  return d === undefined ? undefined : { start: d.from, end: d.to };
};
/** GraphQL's enums are upper case: a bucket size keeps its case variant (hour: HOUR, HOUR: hour). */
const swapCase = (s: unknown) => (typeof s === 'string' ? [...s].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('') : s);
const list = (v: unknown) => (v === undefined ? undefined : [v]);

/** One operation on each door: the JSON-RPC method (and MCP tool) and its options, the REST path
 *  and its query, the GraphQL document and its variables, from the neutral request. */
interface Op {
  /** The neutral fields each door writes (a case with another field is not sent there: it has no wire form); MCP's are JSON-RPC's. */
  takes: Partial<Record<Exclude<Door, 'mcp'>, readonly string[]>>;
  rpc?: [string, (r: Record<string, unknown>, bt: unknown) => Record<string, unknown>];
  rest?: [string, (r: Record<string, unknown>) => Record<string, unknown>];
  graphql?: [string, string, (r: Record<string, unknown>) => Record<string, unknown>];
}

const restDays = (r: Record<string, unknown>) => ({ date_from: (r.days as { from?: unknown })?.from, date_to: (r.days as { to?: unknown })?.to });

/** An operation of one protocol and a range on every door: its method, REST path, GraphQL field and selection. */
const oneProtocol = (method: string, path: string, field: string, selection: string, protocols = (r: Record<string, unknown>) => list(r.protocol)): Op => ({
  takes: { rpc: ['protocol', 'days', 'blockTime'], rest: ['protocol', 'days'], graphql: ['protocol', 'days'] },
  rpc: [method, (r, bt) => ({ protocolName: r.protocol, blockTime: bt })],
  rest: [path, (r) => ({ protocol_name: r.protocol, ...restDays(r) })],
  graphql: [
    `query($f: TransactionFilters) { ${field}(filters: $f) { ${selection} } }`,
    field,
    (r) => ({ f: { protocols: protocols(r), dateRange: dateRange(r) } }),
  ],
});

const OPS = {
  stats: oneProtocol('getProtocolStats', '/analytics/protocols', 'protocolStats', 'protocolName'),
  activity: {
    takes: {
      rpc: ['protocol', 'days', 'blockTime', 'interval'],
      rest: ['protocol', 'days', 'interval'],
      graphql: ['protocol', 'days', 'interval'],
    },
    rpc: ['getProtocolActivity', (r, bt) => ({ protocolName: r.protocol, blockTime: bt, interval: r.interval })],
    rest: ['/analytics/time-series', (r) => ({ protocol_name: r.protocol, ...restDays(r), granularity: r.interval })],
    graphql: [
      'query($f: TransactionFilters!, $b: BucketBy) { timeSeries(filters: $f, bucketBy: $b) { value } }',
      'timeSeries',
      (r) => ({ f: { protocols: list(r.protocol), dateRange: dateRange(r) }, b: swapCase(r.interval) }),
    ],
  },
  listing: {
    takes: {
      rpc: ['protocols', 'days', 'blockTime', 'limit', 'cursor', 'instructionTypes'],
      rest: ['protocols', 'days', 'limit', 'offset', 'cursor'],
      graphql: ['protocols', 'days', 'limit', 'cursor', 'instructionTypes'],
    },
    rpc: [
      'getTransactions',
      (r, bt) => ({ limit: r.limit, paginationToken: r.cursor, filters: { protocols: r.protocols, blockTime: bt, instructionTypes: r.instructionTypes } }),
    ],
    rest: ['/transactions', (r) => ({ protocol_name: r.protocols, ...restDays(r), limit: r.limit, offset: r.offset, cursor: r.cursor })],
    graphql: [
      'query($f: TransactionFilters, $p: Pagination) { transactions(filters: $f, pagination: $p) { edges { cursor } } }',
      'transactions',
      (r) => ({ f: { protocols: r.protocols, dateRange: dateRange(r), instructionTypes: r.instructionTypes }, p: { first: r.limit, after: r.cursor } }),
    ],
  },
  failed: {
    takes: { rpc: ['protocol', 'days', 'blockTime', 'limit'], graphql: ['protocol', 'days', 'limit'] },
    rpc: ['getFailedTransactions', (r, bt) => ({ protocolName: r.protocol, limit: r.limit, blockTime: bt })],
    graphql: [
      'query($f: TransactionFilters, $p: Pagination) { failedTransactions(filters: $f, pagination: $p) { edges { cursor } } }',
      'failedTransactions',
      (r) => ({ f: { protocols: list(r.protocol), dateRange: dateRange(r) }, p: { first: r.limit } }),
    ],
  },
  comparison: {
    takes: { rpc: ['protocols', 'days', 'blockTime'] },
    rpc: ['getProtocolComparison', (r, bt) => ({ protocols: r.protocols, blockTime: bt })],
  },
  top: {
    takes: { rpc: ['limit', 'days', 'blockTime'] },
    rpc: ['getTopProtocols', (r, bt) => ({ limit: r.limit, blockTime: bt })],
  },
  sample: {
    takes: {
      rpc: ['protocols', 'days', 'blockTime', 'limit', 'offset'],
      rest: ['protocols', 'days', 'limit', 'offset'],
      graphql: ['protocols', 'days', 'limit', 'offset'],
    },
    rpc: ['getProtocolSample', (r, bt) => ({ protocols: r.protocols, blockTime: bt, limit: r.limit, offset: r.offset })],
    rest: ['/analytics/protocol-sample', (r) => ({ protocol_name: r.protocols, ...restDays(r), limit: r.limit, offset: r.offset })],
    graphql: [
      'query($f: TransactionFilters, $l: Int, $o: Int) { protocolSample(filters: $f, limit: $l, offset: $o) { protocols seconds } }',
      'protocolSample',
      (r) => ({ f: { protocols: r.protocols, dateRange: dateRange(r) }, l: r.limit, o: r.offset }),
    ],
  },
  // A list as GraphQL's filter takes it: a neutral list as it is, one protocol as a list of one.
  sampleOne: oneProtocol('getOneProtocolSample', '/analytics/one-protocol-sample', 'oneProtocolSample', 'protocols', (r) =>
    Array.isArray(r.protocol) ? r.protocol : list(r.protocol),
  ),
} satisfies Record<string, Op>;

/** Fields no door declares, added where each door keeps a request's fields (REST: the query). */
const withExtra = (o: Record<string, unknown>, r: Record<string, unknown>) => ({ ...o, ...((r.extra as object | undefined) ?? {}) });
/** The request's object as an array, where the case asks for it. */
const shaped = (o: Record<string, unknown>, r: Record<string, unknown>): unknown => (r.$array === true ? [o] : o);
/** Drop undefined members, so an absent field is absent on the wire (JSON.stringify drops them too; this keeps filters: {} out). */
const pruned = (o: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(o)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, typeof v === 'object' && v !== null && !Array.isArray(v) && !('$raw' in v) ? pruned(v as Record<string, unknown>) : v]),
  );

// ---- the doors ---------------------------------------------------------------------------------

let app: FastifyInstance;
let services: Services & { cleanup(): Promise<void> };
let headers: Record<string, string>;

/** What a door said: its HTTP status and body, and the error's code and message, or the data. */
interface Said {
  status: number;
  body: string;
  code?: string | number;
  message?: string;
  data?: unknown;
}

async function post(url: string, payload: string, extra: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json', ...extra }, payload });
}

const SEND: Record<Door, (op: Op, r: Record<string, unknown>) => Promise<Said> | undefined> = {
  rpc(op, r) {
    const bt = blockTime(r);
    if (!op.rpc || bt === null) return undefined;
    const options = shaped(withExtra(pruned(op.rpc[1](r, bt)), r), r);
    return post('/v1/rpc', `{"jsonrpc":"2.0","id":1,"method":"${op.rpc[0]}","params":[${json(options)}]}`).then((res) => {
      const b = JSON.parse(res.body) as { result?: unknown; error?: { code: number; data?: string; message: string } };
      return { status: res.statusCode, body: res.body, code: b.error?.code, message: b.error?.data ?? b.error?.message, data: b.result };
    });
  },
  mcp(op, r) {
    const bt = blockTime(r);
    if (!op.rpc || bt === null) return undefined;
    const options = shaped(withExtra(pruned(op.rpc[1](r, bt)), r), r);
    const payload = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${op.rpc[0]}","arguments":{"options":${json(options)}}}}`;
    return post('/mcp', payload, { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }).then((res) => {
      const b = JSON.parse(res.body) as {
        result?: { isError?: boolean; _meta?: { 'txa/error'?: { code: string } }; content: { text: string }[] };
        error?: { code: number; message: string };
      };
      if (b.error) return { status: res.statusCode, body: res.body, code: b.error.code, message: b.error.message };
      const text = b.result?.content[0]?.text ?? '';
      return b.result?.isError
        ? { status: res.statusCode, body: res.body, code: b.result._meta?.['txa/error']?.code ?? 'no code', message: text }
        : { status: res.statusCode, body: res.body, data: JSON.parse(text) };
    });
  },
  rest(op, r) {
    if (!op.rest) return undefined;
    return app.inject({ method: 'GET', url: `/api/v1${op.rest[0]}?${query(withExtra(op.rest[1](r), r))}`, headers }).then((res) => {
      const b = JSON.parse(res.body) as { data?: unknown; message?: string };
      return res.statusCode === 200
        ? { status: 200, body: res.body, data: b.data }
        : { status: res.statusCode, body: res.body, code: res.statusCode, message: b.message };
    });
  },
  graphql(op, r) {
    if (!op.graphql) return undefined;
    const [document, field, vars] = op.graphql;
    const v = pruned(vars(r));
    const f = (v.f ?? {}) as Record<string, unknown>;
    const variables = { ...v, f: shaped(withExtra(f, r), r) };
    return post('/graphql', `{"query":${JSON.stringify(document)},"variables":${json(variables)}}`, { accept: 'application/graphql-response+json' }).then(
      (res) => {
        const b = JSON.parse(res.body) as { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: { code?: string } }[] };
        const e = b.errors?.[0];
        return e
          ? { status: res.statusCode, body: res.body, code: e.extensions?.code ?? 'no code', message: e.message }
          : { status: res.statusCode, body: res.body, data: b.data?.[field] };
      },
    );
  },
};

// ---- set-up: the app, the test operation, the cursors -----------------------------------------

async function mintTokens(): Promise<void> {
  const rpc = async (method: string, params: unknown[]) =>
    (JSON.parse((await post('/v1/rpc', JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }))).body) as { result: { paginationToken: string } }).result;
  const graphql = async (query: string) =>
    JSON.parse((await post('/graphql', JSON.stringify({ query }))).body) as { data: Record<string, { pageInfo: { endCursor: string } }> };
  const listing = (await rpc('getTransactions', [{ limit: 2, filters: { protocols: ['jupiter_v6'] } }])).paginationToken;
  tokens['listing:jupiter_v6'] = listing;
  // One character of the signed body changed: still base64url, no longer the server's.
  const at = Math.floor(listing.length / 2);
  tokens['listing:jupiter_v6:tampered'] = `${listing.slice(0, at)}${listing[at] === 'A' ? 'B' : 'A'}${listing.slice(at + 1)}`;
  tokens['listing:jupiter_v6:nul'] = `${listing}\u0000`;
  tokens.address = (await rpc('getTransactionsForAddress', ['JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4', { limit: 1 }])).paginationToken;
  tokens.groups = (await graphql('{ transactions(groupBy: [PROTOCOL], pagination: { first: 1 }) { pageInfo { endCursor } } }')).data
    .transactions!.pageInfo.endCursor;
  tokens.failed = (await graphql('{ failedTransactions(pagination: { first: 1 }) { pageInfo { endCursor } } }')).data.failedTransactions!.pageInfo.endCursor;
  for (const [name, token] of Object.entries(tokens)) expect(token, name).toEqual(expect.any(String));
}

beforeAll(async () => {
  const { buildApp } = await import('../../api/server/app.ts');
  services = await startServices();
  app = await buildApp(services, { catalog: [...CATALOG, protocolSample, oneProtocolSample] });
  headers = await apiKeyHeaders(app);
  await ingestDemo(services, 300);
  await mintTokens();
});
afterAll(async () => {
  await app.close();
  await services.cleanup();
});

async function inactive<T>(protocol: string | undefined, run: () => Promise<T>): Promise<T> {
  if (protocol === undefined) return run();
  await services.registry.setActive(protocol, false);
  services.analytics.invalidate();
  try {
    return await run();
  } finally {
    await services.registry.setActive(protocol, true);
    services.analytics.invalidate();
  }
}

/** A stack frame, a source path or a module path in a body: what a refusal never shows. */
const LEAK = /\bat [\w$.<>]+ \(|\.ts:\d+|node_modules|\/work\//;
/** A refusal quotes a hostile value cut short (the longest the corpus sends is 5,000 characters). */
const MESSAGE_MAX_CHARS = 1_000;

describe('the hostile corpus, through every door', () => {
  it('holds requests for every door that offers each operation', () => {
    expect(CORPUS.cases.length).toBeGreaterThan(50);
    for (const c of CORPUS.cases) expect(OPS[c.op], c.case).toBeDefined();
  });

  it.each(CORPUS.cases.map((c) => [c.case, c] as const))('%s', async (_name, c) => {
    const r = resolve(c.request) as Record<string, unknown>;
    const op = OPS[c.op] as Op;
    const fields = Object.keys(c.request).filter((k) => k !== 'extra' && k !== '$array');
    const doors = (c.doors ?? (['rpc', 'mcp', 'rest', 'graphql'] as Door[])).filter(
      (d) => c.skip?.[d] === undefined && fields.every((f) => op.takes[d === 'mcp' ? 'rpc' : d]?.includes(f)),
    );
    const said = await inactive(c.setup?.inactive, async () => {
      const out: [Door, Said][] = [];
      for (const door of doors) {
        const pending = SEND[door](op, r);
        if (pending) out.push([door, await pending]);
      }
      return out;
    });
    expect(said.length, 'doors that took the case').toBeGreaterThan(0);
    for (const [door, s] of said) {
      const where = `${door}: ${s.status} ${s.body.slice(0, 300)}`;
      expect(s.status, where).toBeLessThan(500);
      expect(s.body, where).not.toMatch(LEAK);
      if (c.expect.answer !== undefined) {
        expect(s.code, where).toBeUndefined();
        if (c.expect.answer !== true) expect(s.data, where).toEqual(c.expect.answer);
        continue;
      }
      expect(s.code, where).toBe(CODES[c.kinds?.[door] ?? 'invalidParams'][door]);
      if (door === 'rest' || door === 'graphql') expect(s.status, where).toBeGreaterThanOrEqual(400);
      expect(s.message, where).toMatch(new RegExp(c.expect.message!));
      expect(s.message!.length, where).toBeLessThan(MESSAGE_MAX_CHARS);
    }
  });
});
