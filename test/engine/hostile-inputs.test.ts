// Hostile input to JSON-RPC (POST /v1/rpc) and REST (/api/v1/*): the corpus in
// test/fixtures/hostile-{rpc,rest}.json, where every case must get a client error (4xx, or a
// JSON-RPC error other than -32603) and never a 5xx, a stack trace or an error log line;
// and one test per fault an outside review found.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../support/api-key.ts';
import { captureLog } from '../support/log-capture.ts';
import { startApp } from '../support/services.ts';
import { b58, ingest, ingestDemo, PROGRAM_OF } from '../support/fixtures.ts';
import { RpcClient, type RpcAnswer } from '../support/rpc-client.ts';

interface RpcCase {
  name: string;
  body?: unknown;
  raw?: string;
  batchOf?: { count: number; call: unknown };
  expect: {
    status: number;
    code?: number;
    data?: string;
    id?: string | number | null;
    answers?: { id: string | number | null; code?: number; data?: string; result?: true }[];
    rawContains?: string;
  };
}

interface RestCase {
  name: string;
  url: string;
  expect: { status: number; message?: string };
}

const fixture = <T>(name: string): T[] => (JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8')) as { cases: T[] }).cases;
const RPC_CASES = fixture<RpcCase>('hostile-rpc.json');
const REST_CASES = fixture<RestCase>('hostile-rest.json');

/** The fixture's macros: {"$base64url": text}, {"$array": {of, count}}. */
function expand(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(expand);
  if (typeof v !== 'object' || v === null) return v;
  const o = v as Record<string, unknown>;
  if (typeof o.$base64url === 'string') return Buffer.from(o.$base64url).toString('base64url');
  if (o.$array !== undefined) {
    const { of, count } = o.$array as { of: unknown; count: number };
    return Array.from({ length: count }, () => of);
  }
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, expand(x)]));
}

/** The body text of a case: raw text with {{repeat:TEXT:N}} expanded, or JSON. */
function bodyOf(c: RpcCase): string {
  if (c.raw !== undefined) return c.raw.replace(/\{\{repeat:(.*?):(\d+)\}\}/g, (_m, text: string, n: string) => text.repeat(Number(n)));
  if (c.batchOf) return JSON.stringify(Array.from({ length: c.batchOf.count }, () => c.batchOf!.call));
  return JSON.stringify(expand(c.body));
}

const MAX = 4_294_967_295;
const log = captureLog('warn');

let ctx: Awaited<ReturnType<typeof startApp>>;
let rpc: RpcClient;

/** Records at the very end of storable time (2106-02-07 06:28:15 is 4294967295). */
const endOfTime = [MAX, MAX - 1, MAX - 1000, MAX - 10_000].map((t, i) => ({
  signature: b58(`end-of-time-${i}`, 88),
  slot: 900_000_000 + i,
  block_time: t,
  program_id: PROGRAM_OF.jupiter_v6!,
  protocol_name: 'jupiter_v6',
  instruction_type: 'route',
  fee: 5000 + i,
  compute_units: 100_000 + i,
  accounts: [b58('end-of-time', 44)],
  success: true,
}));

beforeAll(async () => {
  ctx = await startApp({}, { logger: log.logger });
  rpc = await RpcClient.create(ctx.app);
  await ingestDemo(ctx.services, 300);
  await ingest(ctx.services, endOfTime);
});
afterAll(async () => ctx?.cleanup());

const post = (payload: string, headers = rpc.headers) =>
  ctx.app.inject({ method: 'POST', url: '/v1/rpc', headers: { ...headers, 'content-type': 'application/json' }, payload });
const get = (url: string) => ctx.app.inject({ method: 'GET', url, headers: rpc.headers });

/** No stack frames, file paths or engine internals in anything a client receives. */
const noInternals = (body: string): void => {
  expect(body).not.toMatch(/\n\s+at |\.ts:\d+|node_modules|Code: \d+\. DB::Exception|Internal error/);
};

describe('hostile JSON-RPC corpus (test/fixtures/hostile-rpc.json)', () => {
  it.each(RPC_CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const res = await post(bodyOf(c));
    expect(res.statusCode, res.body.slice(0, 300)).toBe(c.expect.status);
    noInternals(res.body);
    if (c.expect.rawContains !== undefined) expect(res.body).toContain(c.expect.rawContains);
    if (res.statusCode === 204) return;
    const json = res.json() as RpcAnswer | RpcAnswer[];
    for (const a of Array.isArray(json) ? json : [json]) expect(a.error?.code).not.toBe(-32603);
    if (c.expect.code !== undefined) {
      expect(Array.isArray(json), 'one answer expected').toBe(false);
      const a = json as RpcAnswer;
      expect(a.error?.code, JSON.stringify(a).slice(0, 300)).toBe(c.expect.code);
      if (c.expect.data !== undefined) expect(a.error?.data).toMatch(new RegExp(c.expect.data));
      if (c.expect.id !== undefined) expect(a.id).toBe(c.expect.id);
    }
    if (c.expect.answers) {
      const answers = json as RpcAnswer[];
      expect(answers).toHaveLength(c.expect.answers.length);
      c.expect.answers.forEach((want, i) => {
        const a = answers[i]!;
        expect(a.id).toBe(want.id);
        if (want.result) expect(a.error).toBeUndefined();
        if (want.code !== undefined) expect(a.error?.code).toBe(want.code);
        if (want.data !== undefined) expect(a.error?.data).toMatch(new RegExp(want.data));
      });
    }
  });
});

describe('hostile REST corpus (test/fixtures/hostile-rest.json)', () => {
  it.each(REST_CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const res = await get(c.url);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(c.expect.status);
    noInternals(res.body);
    if (res.statusCode >= 400) {
      const body = res.json() as { error: string; message: string };
      expect(Object.keys(body).sort()).toEqual(['error', 'message']);
      if (c.expect.message !== undefined) expect(body.message).toMatch(new RegExp(c.expect.message));
    }
  });
});

describe('1. dates outside the storable range', () => {
  it('REST: date_from=2162-12-29 is a 400 naming the parameter and the range, not rows from 2026', async () => {
    const res = await get('/api/v1/transactions?date_from=2162-12-29');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'Bad Request',
      message: 'date_from must be between 1970-01-01 and 2106-02-07 (the days block times can be stored for), got "2162-12-29"',
    });
  });

  it('REST: a day before 1970 is a 400, not a 500', async () => {
    for (const url of ['/api/v1/transactions?date_to=1969-12-31', '/api/v1/analytics/fees?date_from=1969-12-31']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json<{ message: string }>().message).toMatch(/1970-01-01 and 2106-02-07/);
    }
  });

  it('REST: the last storable day is accepted and ends at 4294967295', async () => {
    const body = await get('/api/v1/transactions?date_from=2106-02-07&date_to=2106-02-07');
    expect(body.statusCode).toBe(200);
    const page = body.json<{ data: { blockTime: number }[]; meta: { blockTime: { gte: number; lte: number } } }>();
    expect(page.meta.blockTime).toEqual({ gte: 4_294_944_000, lte: MAX });
    expect(page.data.map((t) => t.blockTime)).toEqual([MAX, MAX - 1, MAX - 1000, MAX - 10_000]);
  });

  it('JSON-RPC: blockTime bounds outside 0..4294967295 or fractional are -32602 naming the field', async () => {
    for (const [bt, field] of [
      [{ gte: -1 }, 'gte'],
      [{ lte: MAX + 1 }, 'lte'],
      [{ gte: 1.5 }, 'gte'],
    ] as const) {
      const e = await rpc.error('getTransactions', [{ filters: { blockTime: bt } }]);
      expect(e.code).toBe(-32602);
      expect(e.data).toMatch(new RegExp(`^options\\.filters\\.blockTime\\.${field} must`));
    }
  });
});

describe('2. forged pagination tokens', () => {
  const forge = (text: string): string => Buffer.from(text).toString('base64url');

  it('a token with a negative or huge block time is -32602 naming paginationToken, and nothing is logged as an error', async () => {
    const before = log.text().length;
    for (const token of [forge('[-1,"x",0]'), forge('[1e20,"x",0]'), 'garbage!', forge('["t2",-1,"x",0,"y"]')]) {
      const e = await rpc.error('getTransactions', [{ paginationToken: token }]);
      expect(e).toMatchObject({ code: -32602, message: 'Invalid params' });
      expect(e.data).toMatch(/^paginationToken /);
    }
    expect(log.text().slice(before)).not.toMatch(/"level":50/);
  });

  it('a token is bound to its filters and sort order; with the same ones it pages on', async () => {
    const filters = { status: 'succeeded', protocols: ['jupiter_v6', 'pump_fun'] };
    const first = await rpc.call<{ paginationToken: string }>('getTransactions', [{ filters, limit: 5 }]);
    expect(first.paginationToken).toEqual(expect.any(String));
    // Same filters written in another order: the same listing.
    const same = { protocols: ['pump_fun', 'jupiter_v6'], status: 'succeeded' };
    const next = await rpc.call<{ data: unknown[] }>('getTransactions', [{ filters: same, limit: 5, paginationToken: first.paginationToken }]);
    expect(next.data).toHaveLength(5);
    for (const other of [{ filters: { ...filters, status: 'failed' } }, { filters: { protocols: ['jupiter_v6'] } }, { filters, sortOrder: 'asc' }]) {
      const e = await rpc.error('getTransactions', [{ ...other, limit: 5, paginationToken: first.paginationToken }]);
      expect(e.code).toBe(-32602);
      expect(e.data).toMatch(/^paginationToken belongs to a listing with other filters or another sortOrder/);
    }
  });

  it('an address token is bound to its address', async () => {
    const first = await rpc.call<{ paginationToken: string }>('getTransactionsForAddress', [PROGRAM_OF.jupiter_v6, { limit: 1 }]);
    expect(first.paginationToken).toEqual(expect.any(String));
    const e = await rpc.error('getTransactionsForAddress', [PROGRAM_OF.pump_fun, { limit: 1, paginationToken: first.paginationToken }]);
    expect(e.code).toBe(-32602);
    expect(e.data).toMatch(/^paginationToken belongs to a listing with other filters/);
  });

  it('a token the service did not write is refused, however well-formed: an edited position keeps no valid MAC', async () => {
    const first = await rpc.call<{ paginationToken: string }>('getTransactions', [{ limit: 1 }]);
    const parts = JSON.parse(Buffer.from(first.paginationToken, 'base64url').toString('utf8')) as unknown[];
    // The attack of the outside review: the public fingerprint kept, the position moved.
    const forged = [...parts];
    forged[1] = 1_794_000_000;
    for (const token of [Buffer.from(JSON.stringify(forged)).toString('base64url'), Buffer.from(JSON.stringify(parts.slice(0, -1))).toString('base64url')]) {
      const e = await rpc.error('getTransactions', [{ limit: 1, paginationToken: token }]);
      expect(e.code).toBe(-32602);
      expect(e.data).toMatch(/^paginationToken is not a pagination token this method issued/);
    }
    // The genuine token still pages on.
    expect(await rpc.call('getTransactions', [{ limit: 1, paginationToken: first.paginationToken }])).toHaveProperty('data');
  });

  it('a bad token is refused with transactionDetails "none" too (the count does not use it, but it is still checked)', async () => {
    const e = await rpc.error('getTransactionsForAddress', [PROGRAM_OF.jupiter_v6, { transactionDetails: 'none', paginationToken: 'garbage!!' }]);
    expect(e.code).toBe(-32602);
    expect(e.data).toMatch(/^paginationToken is not a pagination token this method issued/);
    const first = await rpc.call<{ paginationToken: string }>('getTransactionsForAddress', [PROGRAM_OF.jupiter_v6, { limit: 1 }]);
    const counted = await rpc.call<{ count: number }>('getTransactionsForAddress', [
      PROGRAM_OF.jupiter_v6,
      { transactionDetails: 'none', paginationToken: first.paginationToken },
    ]);
    expect(counted.count).toBeGreaterThan(0);
  });
});

describe('3. nesting depth and body size', () => {
  it('params nested 5000 levels are -32602 with a clear message, not -32603', async () => {
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const res = await post(`{"jsonrpc":"2.0","id":1,"method":"getTransactions","params":[{"filters":{"blockTime":{"gte":${deep}}}}]}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: -32602,
        message: 'Invalid params',
        data: 'params are nested more than 32 levels deep (arrays and objects); no method takes anything that deep',
      },
    });
  });

  it('a body over 1 MiB is one -32600 answer naming the limit', async () => {
    const res = await post(`{"jsonrpc":"2.0","id":1,"method":"getProtocols","pad":"${'x'.repeat(1_100_000)}"}`);
    expect(res.statusCode).toBe(200);
    expect(res.json<RpcAnswer>().error?.data).toBe('the request body is larger than the 1 MiB limit (1048576 bytes); send fewer calls per batch');
  });
});

describe('4. the last storable second', () => {
  const range = { gte: MAX - 10_000, lte: MAX };

  it('aggregates over a range ending at lte=4294967295 count the record at that very second', async () => {
    const stats = await rpc.call<{ totalTransactions: number; lastSeen: number }>('getProtocolStats', [{ protocolName: 'jupiter_v6', blockTime: range }]);
    expect(stats).toMatchObject({ totalTransactions: 4, lastSeen: MAX });
    const top = await rpc.call<{ transactionCount: number }[]>('getTopProtocols', [{ blockTime: { gte: MAX, lte: MAX } }]);
    expect(top).toEqual([expect.objectContaining({ protocolName: 'jupiter_v6', transactionCount: 1 })]);
    const activity = await rpc.call<{ timestamp: number; count: number }[]>('getProtocolActivity', [{ protocolName: 'jupiter_v6', blockTime: range }]);
    expect(activity.map((b) => b.count).reduce((x, y) => x + y, 0)).toBe(4);
    expect(activity.at(-1)).toMatchObject({ timestamp: 4_294_965_600, count: 3 });
  });

  it('listings include it, ascending and descending, and REST the same through date_to=2106-02-07', async () => {
    for (const sortOrder of ['asc', 'desc'] as const) {
      const page = await rpc.call<{ data: { blockTime: number }[] }>('getTransactions', [{ sortOrder, limit: 2, filters: { blockTime: { gte: MAX - 1000 } } }]);
      expect(page.data.map((t) => t.blockTime)).toEqual(sortOrder === 'asc' ? [MAX - 1000, MAX - 1] : [MAX, MAX - 1]);
    }
    const res = await get('/api/v1/analytics/protocols?protocol_name=jupiter_v6&date_from=2106-02-07&date_to=2106-02-07');
    expect(res.statusCode).toBe(200);
    expect(res.json<{ data: { totalTransactions: number; lastSeen: number } }>().data).toMatchObject({ totalTransactions: 4, lastSeen: MAX });
  });
});

describe('5. batches over 100 calls and the rate limit', () => {
  it('a batch of 5000 calls is refused with one -32600 before any call is charged: it costs one request', async () => {
    const { key } = await createKey(ctx.app, 'enterprise', 'batch-charge');
    const headers = { 'x-api-key': key };
    const batch = JSON.stringify(Array.from({ length: 5000 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'getProtocols' })));
    const res = await post(batch, headers);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: 'a batch may hold at most 100 requests; this one holds 5000' } });
    expect(res.headers['x-ratelimit-limit']).toBe('2000');
    expect(res.headers['x-ratelimit-remaining']).toBe('1999');
    // A valid batch still counts each call.
    const ok = await post(JSON.stringify([1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'getProtocols' }))), headers);
    expect(ok.headers['x-ratelimit-remaining']).toBe('1996');
  });
});

describe('6. ids that JSON numbers cannot carry exactly', () => {
  it('an id above 2^53 is refused with -32600 and id null, asking for a string id', async () => {
    const res = await post('{"jsonrpc":"2.0","id":9007199254740993,"method":"getProtocols"}');
    const a = res.json<RpcAnswer>();
    expect(a.id).toBeNull();
    expect(a.error?.code).toBe(-32600);
    expect(a.error?.data).toMatch(/send large ids as strings/);
  });

  it('ids within ±(2^53-1), fractions that round-trip and string ids are echoed exactly', async () => {
    for (const id of ['9007199254740991', '-9007199254740991', '0', '2.5', '"9007199254740993"', '"12345678901234567890123"']) {
      const res = await post(`{"jsonrpc":"2.0","id":${id},"method":"getProtocols"}`);
      expect(res.body.startsWith(`{"jsonrpc":"2.0","id":${id},"result":`), res.body.slice(0, 100)).toBe(true);
    }
  });
});

describe('7. numbers JSON cannot carry exactly, in params', () => {
  it('a blockTime of 1793999934.0000001 (read as 1793999934) is -32602, not a range moved by a second', async () => {
    const reply = await post(
      `{"jsonrpc":"2.0","id":1,"method":"getTransactions","params":[{"filters":{"blockTime":{"gte":1793999934.0000001,"lte":1793999934.0000001}}}]}`,
    );
    const answer = JSON.parse(reply.body) as { error?: { code: number; data: string } };
    expect(answer.error?.code).toBe(-32602);
    expect(answer.error?.data).toMatch(/^params: the number 1793999934.0000001 cannot be represented exactly/);
    // Exact spellings pass, fractions included where a method would take them.
    const ok = await post(`{"jsonrpc":"2.0","id":2,"method":"getTransactions","params":[{"limit":1.0e1,"filters":{"blockTime":{"gte":0,"lte":4294967295}}}]}`);
    expect(JSON.parse(ok.body)).toHaveProperty('result');
  });

  it('in a batch, only the call holding the inexact number is refused', async () => {
    const reply = await post(
      `[{"jsonrpc":"2.0","id":1,"method":"getProtocols"},{"jsonrpc":"2.0","id":2,"method":"getProtocolStats","params":[{"protocolName":"jupiter_v6","blockTime":{"gte":1793999933.9999999}}]}]`,
    );
    const answers = JSON.parse(reply.body) as { id: number; result?: unknown; error?: { code: number } }[];
    expect(answers.find((a) => a.id === 1)).toHaveProperty('result');
    expect(answers.find((a) => a.id === 2)?.error?.code).toBe(-32602);
  });
});

describe('no internal errors were logged', () => {
  it('the whole file produced no error log line', () => {
    expect(log.text()).not.toMatch(/"level":50/);
  });
});
