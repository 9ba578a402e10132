// Protocol-level methods: getProtocols, getProtocolStats, getProtocolComparison,
// getProtocolPerformance, getTopProtocols, getProtocolActivity, getInstructionTypes and
// getFailedTransactions. Every figure is recomputed with plain SQL over the base table.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp } from './support/services.ts';
import { ACTIVE_PROTOCOLS, DEMO_END, DEMO_START, hotRecords, ingest, ingestDemo, PROGRAM_OF, RpcClient } from './support/rpc-client.ts';

let ctx: Awaited<ReturnType<typeof startApp>>;
let rpc: RpcClient;

beforeAll(async () => {
  ctx = await startApp();
  rpc = await RpcClient.create(ctx.app);
  await ingestDemo(ctx.services, 4000);
  await ingest(ctx.services, hotRecords());
});
afterAll(async () => ctx?.cleanup());

interface Range {
  gte?: number;
  lte?: number;
}

/** SQL condition for an inclusive range, and its parameters. */
function rangeSql(r: Range | undefined): { sql: string; params: Record<string, number> } {
  const parts = ['1'];
  const params: Record<string, number> = {};
  if (r?.gte !== undefined) {
    parts.push("block_time >= toDateTime({rg:UInt32}, 'UTC')");
    params.rg = r.gte;
  }
  if (r?.lte !== undefined) {
    parts.push("block_time <= toDateTime({rl:UInt32}, 'UTC')");
    params.rl = r.lte;
  }
  return { sql: parts.join(' AND '), params };
}

interface Ref {
  n: number;
  ok: number;
  fees: number;
  cu: number;
  acc: number;
  types: number;
  first: number;
  last: number;
}

async function reference(protocol: string, r?: Range): Promise<Ref> {
  const { sql, params } = rangeSql(r);
  const [row] = await ctx.services.wh.query<Record<string, string | number>>(
    `SELECT count() AS n, countIf(success) AS ok, sum(fee) AS fees, sum(compute_units) AS cu, sum(accounts_count) AS acc,
            uniqExact(instruction_type) AS types, toUInt32(min(block_time)) AS first, toUInt32(max(block_time)) AS last
     FROM transactions WHERE protocol_name = {p:String} AND ${sql}`,
    { params: { ...params, p: protocol } },
  );
  const v = (k: string) => Number(row![k]);
  return { n: v('n'), ok: v('ok'), fees: v('fees'), cu: v('cu'), acc: v('acc'), types: v('types'), first: v('first'), last: v('last') };
}

const pct = (a: number, b: number) => (b === 0 ? 0 : (a / b) * 100);
const div = (a: number, b: number) => (b === 0 ? 0 : a / b);

// Ranges: everything; whole hours plus ragged edges on both sides; less than an hour;
// and a range before any data.
const RANGES: [string, Range | undefined][] = [
  ['no range', undefined],
  ['ragged multi-day range', { gte: DEMO_START + 1800 + 7, lte: DEMO_START + 2 * 86_400 + 1234 }],
  ['only gte', { gte: DEMO_START + 86_400 + 59 }],
  ['only lte', { lte: DEMO_START + 86_400 + 59 }],
  ['under one hour', { gte: DEMO_START + 4000, lte: DEMO_START + 6000 }],
  ['no data', { gte: DEMO_START - 86_400, lte: DEMO_START - 1 }],
];

describe('getProtocols', () => {
  it('lists the active protocols of the registry', async () => {
    const rows = await ctx.services.wh.query<{ p: string }>('SELECT protocol_name AS p FROM protocols FINAL WHERE active ORDER BY p');
    expect(await rpc.call('getProtocols')).toEqual(rows.map((r) => r.p));
    expect(await rpc.call('getProtocols', [])).toEqual(ACTIVE_PROTOCOLS);
  });
});

describe('getProtocolStats', () => {
  it.each(RANGES)('%s: every field matches the base table', async (_label, range) => {
    for (const p of ['jupiter_v6', 'pump_fun', 'raydium_cp_swap']) {
      const r = await reference(p, range);
      const got = await rpc.call<Record<string, number | string>>('getProtocolStats', [{ protocolName: p, ...(range ? { blockTime: range } : {}) }]);
      expect(got).toEqual({
        protocolName: p,
        totalTransactions: r.n,
        successfulTransactions: r.ok,
        failedTransactions: r.n - r.ok,
        successRate: expect.closeTo(pct(r.ok, r.n), 9),
        totalFees: r.fees,
        averageFee: expect.closeTo(div(r.fees, r.n), 6),
        totalComputeUnits: r.cu,
        averageComputeUnits: expect.closeTo(div(r.cu, r.n), 6),
        averageAccountsCount: expect.closeTo(div(r.acc, r.n), 9),
        uniqueInstructionTypes: r.types,
        firstSeen: r.n === 0 ? 0 : r.first,
        lastSeen: r.n === 0 ? 0 : r.last,
      });
      if (_label === 'no range') expect(r.n).toBeGreaterThan(100);
      expect(got.successRate as number).toBeGreaterThanOrEqual(0);
      expect(got.successRate as number).toBeLessThanOrEqual(100);
    }
  });

  it.each([
    [[], -32602, /options \(params\[0\]\) is required/],
    [[{}], -32602, /options\.protocolName is required/],
    [[{ protocolName: 'nope_v9' }], -32602, /options\.protocolName: unknown protocol "nope_v9"/],
    [[{ protocolName: 'raydium_amm_v4' }], -32602, /unknown protocol "raydium_amm_v4"/],
    [[{ protocolName: 7 }], -32602, /options\.protocolName must be string/],
    [[{ protocolName: 'jupiter_v6', blockTime: { gte: 5, lte: 4 } }], -32602, /options\.blockTime\.gte must not be later than options\.blockTime\.lte/],
    [[{ protocolName: 'jupiter_v6', since: 5 }], -32602, /options\.since is not an accepted field/],
    [[{ protocolName: 'jupiter_v6', blockTime: 'today' }], -32000, /options\.blockTime must be object/],
    [[{ protocolName: 'jupiter_v6', blockTime: { gte: '1' } }], -32000, /options\.blockTime\.gte must be number/],
  ])('error for %j', async (params, code, data) => {
    const e = await rpc.error('getProtocolStats', params);
    expect(e.code).toBe(code);
    expect(e.data).toMatch(data);
  });
});

describe('getProtocolComparison', () => {
  it.each(RANGES)('%s: one item per protocol, in the order asked', async (_label, range) => {
    const protocols = ['pump_fun', 'jupiter_v6', 'whirlpool', 'jupiter_v4'];
    const got = await rpc.call<Record<string, unknown>[]>('getProtocolComparison', [{ protocols, ...(range ? { blockTime: range } : {}) }]);
    const expected = await Promise.all(protocols.map(async (p) => {
      const r = await reference(p, range);
      return {
        protocolName: p,
        totalTransactions: r.n,
        successRate: expect.closeTo(pct(r.ok, r.n), 9),
        averageFee: expect.closeTo(div(r.fees, r.n), 6),
        averageComputeUnits: expect.closeTo(div(r.cu, r.n), 6),
        uniqueInstructionTypes: r.types,
      };
    }));
    expect(got).toEqual(expected);
  });

  it('a single protocol', async () => {
    const got = await rpc.call<{ totalTransactions: number }[]>('getProtocolComparison', [{ protocols: ['pump_amm'] }]);
    expect(got).toHaveLength(1);
    expect(got[0]!.totalTransactions).toBe((await reference('pump_amm')).n);
  });

  it.each([
    [[], /options \(params\[0\]\) is required/],
    [[{}], /options\.protocols is required/],
    [[{ protocols: [] }], /options\.protocols must not be empty/],
    [[{ protocols: ['jupiter_v6', 'jupiter_v6'] }], /options\.protocols must not list the same value twice/],
    [[{ protocols: ['jupiter_v6', 'nope_v1'] }], /options\.protocols\[1\]: unknown protocol "nope_v1"/],
    [[{ protocols: ['meteora_dlmm'] }], /options\.protocols\[0\]: unknown protocol "meteora_dlmm"/],
    [[{ protocols: Array.from({ length: 101 }, (_, i) => `p_${i}`) }], /options\.protocols must hold at most 100 items/],
  ])('-32602 for %j', async (params, data) => {
    const e = await rpc.error('getProtocolComparison', params);
    expect(e.code).toBe(-32602);
    expect(e.data).toMatch(data);
  });
});

describe('getProtocolPerformance', () => {
  /** Exact quantile of compute units at q, from the base table. */
  const exactQ = async (p: string, q: number, range?: Range): Promise<number> => {
    const { sql, params } = rangeSql(range);
    const [row] = await ctx.services.wh.query<{ v: number }>(
      `SELECT quantileExact({q:Float64})(compute_units) AS v FROM transactions WHERE protocol_name = {p:String} AND ${sql}`,
      { params: { ...params, p, q } });
    return Number(row!.v);
  };

  it.each(RANGES.slice(0, 3))('%s: averages and volume exact, t-digest percentiles within 3 percentile points', async (_label, range) => {
    for (const p of ['jupiter_v6', 'pump_fun']) {
      const r = await reference(p, range);
      const got = await rpc.call<Record<string, number | string>>('getProtocolPerformance', [{ protocolName: p, ...(range ? { blockTime: range } : {}) }]);
      expect(Object.keys(got).sort()).toEqual(['averageAccountsCount', 'averageComputeUnits', 'averageFee', 'p50ComputeUnits',
        'p95ComputeUnits', 'p99ComputeUnits', 'protocolName', 'successRate', 'totalVolume']);
      expect(got.protocolName).toBe(p);
      expect(got.successRate).toBeCloseTo(pct(r.ok, r.n), 9);
      expect(got.averageComputeUnits).toBeCloseTo(div(r.cu, r.n), 6);
      expect(got.averageFee).toBeCloseTo(div(r.fees, r.n), 6);
      expect(got.averageAccountsCount).toBeCloseTo(div(r.acc, r.n), 9);
      expect(got.totalVolume).toBe(r.fees);
      for (const [field, q] of [['p50ComputeUnits', 0.5], ['p95ComputeUnits', 0.95], ['p99ComputeUnits', 0.99]] as const) {
        const v = got[field] as number;
        expect(Number.isInteger(v)).toBe(true);
        expect(v).toBeGreaterThanOrEqual(await exactQ(p, q - 0.03, range));
        expect(v).toBeLessThanOrEqual(await exactQ(p, Math.min(1, q + 0.03), range));
      }
      expect(got.p50ComputeUnits as number).toBeLessThanOrEqual(got.p95ComputeUnits as number);
      expect(got.p95ComputeUnits as number).toBeLessThanOrEqual(got.p99ComputeUnits as number);
    }
  });

  it('a range without records gives zeros', async () => {
    expect(await rpc.call('getProtocolPerformance', [{ protocolName: 'whirlpool', blockTime: { gte: 1000, lte: 2000 } }])).toEqual({
      protocolName: 'whirlpool', successRate: 0, averageComputeUnits: 0, averageFee: 0, p50ComputeUnits: 0, p95ComputeUnits: 0,
      p99ComputeUnits: 0, averageAccountsCount: 0, totalVolume: 0,
    });
  });

  it.each([
    [[], -32602, /options \(params\[0\]\) is required/],
    [[{ blockTime: {} }], -32602, /options\.protocolName is required/],
    [[{ protocolName: 'phoenix_v1' }], -32602, /options\.protocolName: unknown protocol "phoenix_v1"/],
    [[{ protocolName: 'jupiter_v6', blockTime: [1, 2] }], -32000, /options\.blockTime must be object/],
  ])('error for %j', async (params, code, data) => {
    const e = await rpc.error('getProtocolPerformance', params);
    expect(e.code).toBe(code);
    expect(e.data).toMatch(data);
  });
});

describe('getTopProtocols', () => {
  const expectedTop = async (range?: Range) => {
    const rows = await Promise.all(ACTIVE_PROTOCOLS.map(async (p) => ({ p, r: await reference(p, range) })));
    return rows.filter(({ r }) => r.n > 0).map(({ p, r }) => ({ protocolName: p, transactionCount: r.n, successRate: pct(r.ok, r.n), totalFees: r.fees }));
  };
  const near = (xs: { protocolName: string; transactionCount: number; successRate: number; totalFees: number }[]) =>
    xs.map((x) => ({ ...x, successRate: expect.closeTo(x.successRate, 9) }));

  it('defaults: by transactions, descending, up to 10 (all active protocols here)', async () => {
    const exp = (await expectedTop()).sort((a, b) => b.transactionCount - a.transactionCount || a.protocolName.localeCompare(b.protocolName));
    const got = await rpc.call<unknown[]>('getTopProtocols');
    expect(got).toEqual(near(exp));
    expect(got).toHaveLength(7);
    expect(await rpc.call('getTopProtocols', [{}])).toEqual(got);
  });

  it.each([
    ['transactions', (a: { transactionCount: number }, b: { transactionCount: number }) => b.transactionCount - a.transactionCount],
    ['fees', (a: { totalFees: number }, b: { totalFees: number }) => b.totalFees - a.totalFees],
    ['successRate', (a: { successRate: number }, b: { successRate: number }) => b.successRate - a.successRate],
  ] as const)('sortBy %s with a limit and a range', async (sortBy, cmp) => {
    const range = { gte: DEMO_START + 3 * 3600 + 11, lte: DEMO_END - 7 * 3600 - 5 };
    const exp = (await expectedTop(range)).sort((a, b) => cmp(a, b) || a.protocolName.localeCompare(b.protocolName));
    expect(await rpc.call('getTopProtocols', [{ sortBy, limit: 3, blockTime: range }])).toEqual(near(exp.slice(0, 3)));
    expect(await rpc.call('getTopProtocols', [{ sortBy }])).toEqual(near((await expectedTop()).sort((a, b) => cmp(a, b) || a.protocolName.localeCompare(b.protocolName))));
  });

  it('limit 1 and 100 (maximum) accepted', async () => {
    expect(await rpc.call<unknown[]>('getTopProtocols', [{ limit: 1 }])).toHaveLength(1);
    expect(await rpc.call<unknown[]>('getTopProtocols', [{ limit: 100 }])).toHaveLength(7);
  });

  it.each([
    [{ limit: 101 }, /options\.limit must be at most 100 \(got 101\)/],
    [{ limit: 0 }, /options\.limit must be at least 1/],
    [{ sortBy: 'volume' }, /options\.sortBy must be one of "transactions", "fees", "successRate"/],
    [{ protocolName: 'jupiter_v6' }, /options\.protocolName is not an accepted field/],
  ])('-32602 for %j', async (options, data) => {
    const e = await rpc.error('getTopProtocols', [options]);
    expect(e.code).toBe(-32602);
    expect(e.data).toMatch(data);
  });
});

describe('getProtocolActivity', () => {
  const buckets = async (protocol: string | undefined, gte: number, lte: number, unit: 'hour' | 'day') => {
    const rows = await ctx.services.wh.query<Record<string, string | number>>(
      `SELECT toUInt32(${unit === 'hour' ? 'toStartOfHour' : 'toStartOfDay'}(block_time)) AS ts, count() AS n, countIf(success) AS ok,
              sum(fee) AS fees, sum(compute_units) AS cu
       FROM transactions
       WHERE protocol_name IN {ps:Array(String)} AND block_time BETWEEN toDateTime({g:UInt32}, 'UTC') AND toDateTime({l:UInt32}, 'UTC')
       GROUP BY ts`,
      { params: { ps: protocol ? [protocol] : ACTIVE_PROTOCOLS, g: gte, l: lte } },
    );
    return new Map(rows.map((r) => [Number(r.ts), r]));
  };

  it.each([['jupiter_v6'], [undefined]])('one day hourly (%s): 24 buckets, each matching the base table', async (protocol) => {
    const gte = DEMO_START + 86_400;
    const lte = gte + 86_399;
    const got = await rpc.call<Record<string, unknown>[]>('getProtocolActivity', [{ ...(protocol ? { protocolName: protocol } : {}), blockTime: { gte, lte } }]);
    expect(got).toHaveLength(24);
    const ref = await buckets(protocol, gte, lte, 'hour');
    got.forEach((b, i) => {
      const ts = gte + i * 3600;
      const r = ref.get(ts);
      const n = Number(r?.n ?? 0);
      const ok = Number(r?.ok ?? 0);
      expect(b).toEqual({
        timestamp: ts, date: '2025-01-02', hour: i, count: n, successCount: ok, failedCount: n - ok,
        totalFees: Number(r?.fees ?? 0), totalComputeUnits: Number(r?.cu ?? 0),
      });
    });
    expect(got.reduce((s, b) => s + (b.count as number), 0)).toBeGreaterThan(100);
  });

  it('ragged range: edge buckets count only the seconds inside the range', async () => {
    const gte = DEMO_START + 2 * 3600 + 1000;
    const lte = DEMO_START + 5 * 3600 + 100;
    const got = await rpc.call<{ timestamp: number; count: number; totalFees: number }[]>('getProtocolActivity', [{ protocolName: 'pump_fun', blockTime: { gte, lte } }]);
    const ref = await buckets('pump_fun', gte, lte, 'hour');
    expect(got.map((b) => b.timestamp)).toEqual([2, 3, 4, 5].map((h) => DEMO_START + h * 3600));
    for (const b of got) {
      expect(b.count).toBe(Number(ref.get(b.timestamp)?.n ?? 0));
      expect(b.totalFees).toBe(Number(ref.get(b.timestamp)?.fees ?? 0));
    }
  });

  it('interval day: daily buckets without an hour field', async () => {
    const got = await rpc.call<Record<string, unknown>[]>('getProtocolActivity', [{ blockTime: { gte: DEMO_START, lte: DEMO_END - 1 }, interval: 'day' }]);
    expect(got).toHaveLength(3);
    const ref = await buckets(undefined, DEMO_START, DEMO_END - 1, 'day');
    got.forEach((b, i) => {
      const ts = DEMO_START + i * 86_400;
      const r = ref.get(ts)!;
      expect(b).toEqual({
        timestamp: ts, date: `2025-01-0${i + 1}`, count: Number(r.n), successCount: Number(r.ok), failedCount: Number(r.n) - Number(r.ok),
        totalFees: Number(r.fees), totalComputeUnits: Number(r.cu),
      });
    });
  });

  it.each([
    [[], -32602, /options \(params\[0\]\) is required/],
    [[{ protocolName: 'jupiter_v6' }], -32602, /options\.blockTime is required/],
    [[{ blockTime: { gte: DEMO_START } }], -32602, /options\.blockTime\.lte is required/],
    [[{ blockTime: { lte: DEMO_START } }], -32602, /options\.blockTime\.gte is required/],
    [[{ blockTime: { gte: DEMO_START, lte: DEMO_START + 10 }, interval: 'week' }], -32602, /options\.interval must be one of "hour", "day"/],
    [[{ blockTime: { gte: DEMO_START, lte: DEMO_START + 10 }, protocolName: 'kamino_lending' }], -32602, /options\.protocolName: unknown protocol/],
    [[{ blockTime: { gte: 0, lte: 4_000_000_000 } }], -32602, /blockTime: the range spans/],
    [[{ blockTime: { gte: DEMO_START + 10, lte: DEMO_START } }], -32602, /gte must not be later than/],
    [[{ blockTime: 'last day' }], -32000, /options\.blockTime must be object/],
  ])('error for %j', async (params, code, data) => {
    const e = await rpc.error('getProtocolActivity', params);
    expect(e.code).toBe(code);
    expect(e.data).toMatch(data);
  });
});

describe('getInstructionTypes', () => {
  const ref = async (protocol: string | undefined, range: Range | undefined, limit: number) => {
    const { sql, params } = rangeSql(range);
    const rows = await ctx.services.wh.query<Record<string, string | number>>(
      `SELECT instruction_type AS t, protocol_name AS p, count() AS n, countIf(success) AS ok, sum(compute_units) AS cu, sum(fee) AS fees
       FROM transactions WHERE protocol_name IN {ps:Array(String)} AND ${sql}
       GROUP BY p, t ORDER BY n DESC, p, t LIMIT {lim:UInt32}`,
      { params: { ...params, ps: protocol ? [protocol] : ACTIVE_PROTOCOLS, lim: limit } },
    );
    return rows.map((r) => {
      const n = Number(r.n);
      return {
        instructionType: String(r.t), protocolName: String(r.p), count: n, successRate: expect.closeTo(pct(Number(r.ok), n), 9),
        averageComputeUnits: expect.closeTo(div(Number(r.cu), n), 6), averageFee: expect.closeTo(div(Number(r.fees), n), 6),
      };
    });
  };

  it('defaults: all protocols, most frequent first, up to 100', async () => {
    const got = await rpc.call<unknown[]>('getInstructionTypes');
    expect(got).toEqual(await ref(undefined, undefined, 100));
    expect(got.length).toBeGreaterThan(20);
    expect(await rpc.call('getInstructionTypes', [{}])).toEqual(got);
  });

  it.each(RANGES)('%s: one protocol, with a range and a limit', async (_label, range) => {
    expect(await rpc.call('getInstructionTypes', [{ protocolName: 'jupiter_v6', limit: 4, ...(range ? { blockTime: range } : {}) }]))
      .toEqual(await ref('jupiter_v6', range, 4));
  });

  it('limit 1 and 1000 (maximum) accepted', async () => {
    expect(await rpc.call('getInstructionTypes', [{ limit: 1 }])).toEqual(await ref(undefined, undefined, 1));
    expect(await rpc.call('getInstructionTypes', [{ limit: 1000 }])).toEqual(await ref(undefined, undefined, 1000));
  });

  it.each([
    [{ limit: 1001 }, /options\.limit must be at most 1000 \(got 1001\)/],
    [{ limit: -1 }, /options\.limit must be at least 1/],
    [{ protocolName: 'drift_v2' }, /options\.protocolName: unknown protocol "drift_v2"/],
    [{ protocolName: '' }, /options\.protocolName must be a lowercase snake_case protocol name/],
  ])('-32602 for %j', async (options, data) => {
    const e = await rpc.error('getInstructionTypes', [options]);
    expect(e.code).toBe(-32602);
    expect(e.data).toMatch(data);
  });
});

describe('getFailedTransactions', () => {
  const ref = async (where: string, params: Record<string, unknown>, limit: number) => {
    const rows = await ctx.services.wh.query<Record<string, string | number>>(
      `SELECT signature, toString(slot) AS slot, toUInt32(block_time) AS bt, program_id, protocol_name, error_message, log_messages, raw_data
       FROM transactions WHERE NOT success AND protocol_name IN {ps:Array(String)} AND ${where}
       ORDER BY block_time DESC, signature DESC, instruction_index DESC LIMIT {lim:UInt32}`,
      { params: { ps: ACTIVE_PROTOCOLS, ...params, lim: limit } },
    );
    return rows.map((r) => ({
      signature: r.signature, slot: r.slot, blockTime: Number(r.bt), programId: r.program_id, protocolName: r.protocol_name,
      errorMessage: r.error_message, logMessages: r.log_messages, rawData: r.raw_data,
    }));
  };

  it('defaults: the newest 100 failed records of active protocols, every field', async () => {
    const got = await rpc.call<{ data: Record<string, unknown>[] }>('getFailedTransactions');
    expect(Object.keys(got)).toEqual(['data']);
    expect(got.data).toEqual(await ref('1', {}, 100));
    expect(got.data).toHaveLength(100);
    expect(got.data.every((f) => typeof f.slot === 'string' && (f.errorMessage as string).length > 0)).toBe(true);
    expect(await rpc.call('getFailedTransactions', [{}])).toEqual(got);
  });

  it('log lines sent as an array come back joined with newlines', async () => {
    const got = await rpc.call<{ data: { logMessages: string; errorMessage: string }[] }>('getFailedTransactions', [{ protocolName: 'pump_fun', limit: 1000 }]);
    const hand = got.data.find((f) => f.errorMessage === 'failure 126');
    expect(hand?.logMessages).toBe('log a 126\nlog b 126');
  });

  it.each([
    ['protocolName', { protocolName: 'pump_fun' }, "protocol_name = 'pump_fun'", {}],
    ['programId', { programId: PROGRAM_OF.jupiter_v6 }, 'program_id = {pid:String}', { pid: PROGRAM_OF.jupiter_v6 }],
    ['programId of another protocol than protocolName', { protocolName: 'pump_fun', programId: PROGRAM_OF.jupiter_v6 }, '0', {}],
    ['blockTime', { blockTime: { gte: DEMO_START + 7200 + 5, lte: DEMO_START + 86_400 + 77 } },
      "block_time BETWEEN toDateTime({g:UInt32}, 'UTC') AND toDateTime({l:UInt32}, 'UTC')", { g: DEMO_START + 7200 + 5, l: DEMO_START + 86_400 + 77 }],
    ['everything, limit 5', { protocolName: 'jupiter_v6', programId: PROGRAM_OF.jupiter_v6, blockTime: { lte: DEMO_START + 2 * 86_400 }, limit: 5 },
      "protocol_name = 'jupiter_v6' AND program_id = {pid:String} AND block_time <= toDateTime({l:UInt32}, 'UTC')", { pid: PROGRAM_OF.jupiter_v6, l: DEMO_START + 2 * 86_400 }],
  ])('%s', async (_label, options, where, params) => {
    const limit = (options as { limit?: number }).limit ?? 100;
    const got = await rpc.call<{ data: unknown[] }>('getFailedTransactions', [options]);
    expect(got.data).toEqual(await ref(where, params, limit));
  });

  it('limit 1000 (maximum) returns every failed record here; 1001 is rejected', async () => {
    const all = await ref('1', {}, 1000);
    expect(all.length).toBeGreaterThan(100);
    expect(all.length).toBeLessThan(1000);
    expect((await rpc.call<{ data: unknown[] }>('getFailedTransactions', [{ limit: 1000 }])).data).toEqual(all);
    expect((await rpc.error('getFailedTransactions', [{ limit: 1001 }])).data).toMatch(/options\.limit must be at most 1000/);
  });

  it('hides failures of inactive protocols', async () => {
    const got = await rpc.call<{ data: { protocolName: string }[] }>('getFailedTransactions', [{ limit: 1000 }]);
    expect(got.data.some((f) => !ACTIVE_PROTOCOLS.includes(f.protocolName))).toBe(false);
    const [hidden] = await ctx.services.wh.query<{ n: string }>("SELECT count() AS n FROM transactions WHERE NOT success AND protocol_name NOT IN {ps:Array(String)}", { params: { ps: ACTIVE_PROTOCOLS } });
    expect(Number(hidden!.n)).toBeGreaterThan(0);
  });

  it.each([
    [{ protocolName: 'raydium_amm_v4' }, /options\.protocolName: unknown protocol "raydium_amm_v4"/],
    [{ programId: 'bad id' }, /options\.programId must be a Base58 address/],
    [{ limit: 0 }, /options\.limit must be at least 1/],
    [{ status: 'failed' }, /options\.status is not an accepted field/],
  ])('-32602 for %j', async (options, data) => {
    const e = await rpc.error('getFailedTransactions', [options]);
    expect(e.code).toBe(-32602);
    expect(e.data).toMatch(data);
  });
});

describe('deactivating a protocol hides it everywhere', () => {
  it('whirlpool disappears from every answer once inactive', async () => {
    await ctx.services.registry.setActive('whirlpool', false);
    ctx.services.analytics.invalidate();
    try {
      expect(await rpc.call<string[]>('getProtocols')).not.toContain('whirlpool');
      expect((await rpc.error('getProtocolStats', [{ protocolName: 'whirlpool' }])).data).toMatch(/unknown protocol "whirlpool"/);
      expect((await rpc.error('getProtocolComparison', [{ protocols: ['jupiter_v6', 'whirlpool'] }])).data).toMatch(/options\.protocols\[1\]/);
      expect((await rpc.call<{ protocolName: string }[]>('getTopProtocols')).map((t) => t.protocolName)).not.toContain('whirlpool');
      expect((await rpc.call<{ protocolName: string }[]>('getInstructionTypes', [{ limit: 1000 }])).some((t) => t.protocolName === 'whirlpool')).toBe(false);
      const txs = await rpc.call<{ data: { protocolName: string }[] }>('getTransactions', [{ limit: 10_000 }]);
      expect(txs.data.some((t) => t.protocolName === 'whirlpool')).toBe(false);
      const byProgram = await rpc.call<{ data: unknown[] }>('getTransactionsForAddress', [PROGRAM_OF.whirlpool, { limit: 10 }]);
      expect(byProgram.data).toEqual([]);
    } finally {
      await ctx.services.registry.setActive('whirlpool', true);
      ctx.services.analytics.invalidate();
    }
    expect(await rpc.call<string[]>('getProtocols')).toContain('whirlpool');
  });
});
