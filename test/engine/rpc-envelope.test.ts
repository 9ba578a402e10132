// JSON-RPC 2.0 envelope over POST /v1/rpc: ids, batches, notifications, and the standard
// error codes, all answered with HTTP 200 (204 when nothing is to be answered).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp } from '../support/services.ts';
import { FIXTURE_START, ingestDemo } from '../support/fixtures.ts';
import { RpcClient, type RpcAnswer } from '../support/rpc-client.ts';

let ctx: Awaited<ReturnType<typeof startApp>>;
let rpc: RpcClient;

beforeAll(async () => {
  ctx = await startApp();
  rpc = await RpcClient.create(ctx.app);
  await ingestDemo(ctx.services, 300);
});
afterAll(async () => ctx?.cleanup());

const ACTIVE = ['jupiter_v4', 'jupiter_v6', 'pump_amm', 'pump_fun', 'raydium_amm_v3', 'raydium_cp_swap', 'whirlpool'];
const call = (id: unknown, method: string, params?: unknown): Record<string, unknown> => ({
  jsonrpc: '2.0',
  ...(id === undefined ? {} : { id }),
  method,
  ...(params === undefined ? {} : { params }),
});

describe('single calls', () => {
  it('echoes a number id and a string id, with HTTP 200 and a JSON body', async () => {
    const n = await rpc.raw(call(7, 'getProtocols', []));
    expect(n.status).toBe(200);
    expect(n.json).toEqual({ jsonrpc: '2.0', id: 7, result: ACTIVE });
    const s = await rpc.raw(call('abc-1', 'getProtocols'));
    expect(s.json).toEqual({ jsonrpc: '2.0', id: 'abc-1', result: ACTIVE });
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/rpc',
      headers: { ...rpc.headers, 'content-type': 'application/json' },
      payload: JSON.stringify(call(1, 'getProtocols')),
    });
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });

  it('answers a null id with a null id (a call, not a notification)', async () => {
    const r = await rpc.raw(call(null, 'getProtocols'));
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ jsonrpc: '2.0', id: null, result: ACTIVE });
  });

  it('accepts a body sent as text/plain (the body is JSON whatever the label)', async () => {
    const r = await rpc.raw(JSON.stringify(call(3, 'getProtocols')), 'text/plain');
    expect(r.json).toEqual({ jsonrpc: '2.0', id: 3, result: ACTIVE });
  });
});

describe('content types', () => {
  it('application/json with a charset, and no content-type header at all', async () => {
    const withCharset = await rpc.raw(JSON.stringify(call(4, 'getProtocols')), 'application/json; charset=utf-8');
    expect(withCharset.json).toEqual({ jsonrpc: '2.0', id: 4, result: ACTIVE });
    const res = await ctx.app.inject({ method: 'POST', url: '/v1/rpc', headers: rpc.headers, payload: Buffer.from(JSON.stringify(call(5, 'getProtocols'))) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ jsonrpc: '2.0', id: 5, result: ACTIVE });
  });
});

describe('-32700 parse error', () => {
  it.each([
    ['broken JSON', '{"jsonrpc": "2.0", "method": "getProtocols", "id": 1'],
    ['a truncated batch', '[{"jsonrpc": "2.0", "method": "getProtocols", "id": 1},{"jsonrpc": "2.0", "method"'],
    ['an empty body', ''],
  ])('%s -> -32700 with id null, HTTP 200', async (_label, body) => {
    const r = await rpc.raw(body);
    expect(r.status).toBe(200);
    const a = r.json as RpcAnswer;
    expect(a.id).toBeNull();
    expect(a.error?.code).toBe(-32700);
    expect(a.error?.message).toBe('Parse error');
    expect(typeof a.error?.data).toBe('string');
  });
});

describe('-32600 invalid request', () => {
  it.each([
    ['jsonrpc "1.0"', { jsonrpc: '1.0', id: 1, method: 'getProtocols' }, 1, /jsonrpc/],
    ['jsonrpc missing', { id: 2, method: 'getProtocols' }, 2, /jsonrpc/],
    ['jsonrpc as a number', { jsonrpc: 2.0, id: 3, method: 'getProtocols' }, 3, /jsonrpc/],
    ['method missing', { jsonrpc: '2.0', id: 4 }, 4, /method/],
    ['method not a string', { jsonrpc: '2.0', id: 5, method: 42 }, 5, /method/],
    ['id an object', { jsonrpc: '2.0', id: { a: 1 }, method: 'getProtocols' }, null, /id/],
    ['id an array', { jsonrpc: '2.0', id: [1], method: 'getProtocols' }, null, /id/],
    ['id a boolean', { jsonrpc: '2.0', id: true, method: 'getProtocols' }, null, /id/],
    ['params a string', { jsonrpc: '2.0', id: 6, method: 'getProtocols', params: 'x' }, 6, /params/],
    ['params null', { jsonrpc: '2.0', id: 8, method: 'getProtocols', params: null }, 8, /params/],
    ['a request that is a number', 1, null, /object/],
    ['a request that is a string', '"getProtocols"', null, /object/], // raw text: a JSON string
  ])('%s', async (_label, body, id, data) => {
    const r = await rpc.raw(body);
    expect(r.status).toBe(200);
    const a = r.json as RpcAnswer;
    expect(a.jsonrpc).toBe('2.0');
    expect(a.id).toBe(id);
    expect(a.error).toMatchObject({ code: -32600, message: 'Invalid Request' });
    expect(a.error?.data).toMatch(data);
  });

  it('an empty batch is one -32600 answer (not an array)', async () => {
    const r = await rpc.raw([]);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } });
  });

  it('a batch of 100 calls is answered in full; 101 calls is one -32600 answer', async () => {
    const hundred = Array.from({ length: 100 }, (_, i) => call(i, 'getProtocols'));
    const ok = await rpc.raw(hundred);
    expect(ok.status).toBe(200);
    const answers = ok.json as RpcAnswer[];
    expect(answers).toHaveLength(100);
    expect(new Set(answers.map((a) => a.id))).toEqual(new Set(hundred.map((c) => c.id)));
    expect(answers.every((a) => Array.isArray(a.result))).toBe(true);

    const over = await rpc.raw([...hundred, call(100, 'getProtocols')]);
    expect(over.status).toBe(200);
    expect(Array.isArray(over.json)).toBe(false);
    const a = over.json as RpcAnswer;
    expect(a.id).toBeNull();
    expect(a.error?.code).toBe(-32600);
    expect(a.error?.data).toMatch(/100/);
  });

  it('a batch of invalid elements answers each with -32600 and id null', async () => {
    const r = await rpc.raw([1, 2, 3]);
    expect(r.json).toEqual([1, 2, 3].map(() => ({ jsonrpc: '2.0', id: null, error: expect.objectContaining({ code: -32600 }) })));
  });
});

describe('-32601 method not found', () => {
  it.each(['getBalance', 'toString', '__proto__', 'constructor', 'gettransaction'])('%s', async (method) => {
    const a = await rpc.answer(method, []);
    expect(a.error).toMatchObject({ code: -32601, message: 'Method not found' });
    expect(a.error?.data).toContain(method);
  });
});

describe('-32602 invalid params (envelope level)', () => {
  it('by-name params are refused: every method is positional', async () => {
    const r = await rpc.raw(call(1, 'getTopProtocols', { limit: 3 }));
    expect((r.json as RpcAnswer).error).toMatchObject({ code: -32602, message: 'Invalid params' });
    expect((r.json as RpcAnswer).error?.data).toMatch(/array/);
  });

  it('too many positional params names the method and its parameters', async () => {
    const e = await rpc.error('getProtocols', [{}]);
    expect(e.code).toBe(-32602);
    expect(e.data).toMatch(/getProtocols takes at most 0/);
    const e2 = await rpc.error('getTopProtocols', [{}, {}]);
    expect(e2.data).toMatch(/at most 1 positional parameter \(options\)/);
  });
});

describe('-32000 server error for unparsable filters', () => {
  it.each([
    ['filters a string', 'getTransactions', [{ filters: 'status=failed' }], /options\.filters must be object/],
    ['filters an array', 'getTransactions', [{ filters: [] }], /options\.filters must be object/],
    ['filters.blockTime a number', 'getTransactions', [{ filters: { blockTime: 5 } }], /options\.filters\.blockTime must be object/],
    [
      'filters.blockTime.gte a string',
      'getTransactions',
      [{ filters: { blockTime: { gte: 'yesterday' } } }],
      /options\.filters\.blockTime\.gte must be number/,
    ],
    ['filters.protocols a string', 'getTransactions', [{ filters: { protocols: 'jupiter_v6' } }], /options\.filters\.protocols must be array/],
    [
      'address filters a number',
      'getTransactionsForAddress',
      ['JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4', { filters: 1 }],
      /options\.filters must be object/,
    ],
    ['stats blockTime a string', 'getProtocolStats', [{ protocolName: 'jupiter_v6', blockTime: '2025-01-01' }], /options\.blockTime must be object/],
    ['activity blockTime.lte a string', 'getProtocolActivity', [{ blockTime: { gte: FIXTURE_START, lte: 'now' } }], /options\.blockTime\.lte must be number/],
  ])('%s', async (_label, method, params, data) => {
    const e = await rpc.error(method, params);
    expect(e.code).toBe(-32000);
    expect(e.message).toBe('Server error');
    expect(e.data).toMatch(data);
  });
});

describe('notifications', () => {
  it('a notification gets no answer: HTTP 204, empty body', async () => {
    const r = await rpc.raw(call(undefined, 'getProtocols'));
    expect(r.status).toBe(204);
    expect(r.body).toBe('');
  });

  it('a notification of an unknown method or with bad params is still not answered', async () => {
    expect((await rpc.raw(call(undefined, 'noSuchMethod'))).status).toBe(204);
    expect((await rpc.raw(call(undefined, 'getTopProtocols', [{ limit: 1_000_000 }]))).status).toBe(204);
  });

  it('a batch of only notifications gets no answer', async () => {
    const r = await rpc.raw([call(undefined, 'getProtocols'), call(undefined, 'getTopProtocols', [])]);
    expect(r.status).toBe(204);
    expect(r.body).toBe('');
  });
});

describe('batches', () => {
  it('mixes valid calls, invalid calls and notifications: one answer per non-notification, matched by id', async () => {
    const r = await rpc.raw([
      call(1, 'getProtocols'),
      call(undefined, 'getProtocols'),
      call('two', 'getTopProtocols', [{ limit: 2 }]),
      call(3, 'noSuchMethod'),
      { jsonrpc: '2.0', method: 1 },
      call(4, 'getTopProtocols', [{ limit: 101 }]),
      call(undefined, 'noSuchMethod'),
      { foo: 'boo' },
      call(5, 'getTransaction', ['not-base58!']),
      call(6, 'getTransactions', [{ filters: 'x' }]),
    ]);
    expect(r.status).toBe(200);
    const answers = r.json as RpcAnswer[];
    expect(answers).toHaveLength(8);
    const byId = (id: unknown) => answers.find((a) => a.id === id);
    expect(byId(1)?.result).toEqual(ACTIVE);
    expect(byId('two')?.result).toHaveLength(2);
    expect(byId(3)?.error?.code).toBe(-32601);
    expect(byId(4)?.error?.code).toBe(-32602);
    expect(byId(4)?.error?.data).toMatch(/options\.limit must be at most 100/);
    expect(byId(5)?.error?.code).toBe(-32602);
    expect(byId(6)?.error?.code).toBe(-32000);
    const nulls = answers.filter((a) => a.id === null);
    expect(nulls).toHaveLength(2);
    expect(nulls.every((a) => a.error?.code === -32600)).toBe(true);
    // Every answer is a complete JSON-RPC 2.0 response object.
    for (const a of answers) {
      expect(a.jsonrpc).toBe('2.0');
      expect('result' in a !== 'error' in a).toBe(true);
    }
  });
});

describe('-32603 internal error', () => {
  it('hides internals, keeps HTTP 200, and the next call still works', async () => {
    // The registry every request's view of the analytics layer reads its protocols from.
    const registry = ctx.services.registry;
    const original = registry.activeNames.bind(registry);
    registry.activeNames = async () => {
      throw new Error('connection to 10.1.2.3 refused: secret-detail');
    };
    try {
      const r = await rpc.raw(call(9, 'getProtocols'));
      expect(r.status).toBe(200);
      const a = r.json as RpcAnswer;
      expect(a.id).toBe(9);
      expect(a.error).toMatchObject({ code: -32603, message: 'Internal error' });
      expect(typeof a.error?.data).toBe('string');
      expect(r.body).not.toMatch(/secret-detail|10\.1\.2\.3/);
    } finally {
      registry.activeNames = original;
    }
    expect(await rpc.call('getProtocols')).toEqual(ACTIVE);
  });
});

describe('transport', () => {
  it('a body over the size limit is a JSON-RPC -32600 answer with HTTP 200', async () => {
    const big = JSON.stringify(call(1, 'getProtocols', [])).replace('"params"', `"pad":"${'x'.repeat(1_100_000)}","params"`);
    const r = await rpc.raw(big);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    expect((r.json as RpcAnswer).error?.data).toMatch(/larger than/);
  });
});

describe('discovery: the OpenRPC document', () => {
  it('is served at GET /v1/openrpc.json without a key, and answered by rpc.discover with the same content', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/v1/openrpc.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json() as { openrpc: string; methods: { name: string }[] };
    expect(doc.openrpc).toMatch(/^1\./);
    expect(doc.methods.map((m) => m.name)).toEqual([
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
    ]);
    const r = await rpc.raw(call(1, 'rpc.discover'));
    expect(r.json).toEqual({ jsonrpc: '2.0', id: 1, result: doc });
  });

  it('rpc.discover takes no parameters', async () => {
    const r = await rpc.raw(call(2, 'rpc.discover', [{}]));
    expect(r.json).toEqual({ jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'Invalid params', data: 'rpc.discover takes no parameters' } });
  });
});
