// Protocol-level methods: getProtocols, getProtocolStats, getProtocolComparison,
// getProtocolPerformance, getTopProtocols, getProtocolActivity, getInstructionTypes and
// getFailedTransactions. The figures themselves are checked in analytics.test.ts; here each
// method's answer equals the analytics layer's for the same question (options mapped:
// blockTime -> range, protocolName, limit, sortBy, interval), plus wire shapes and errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp } from '../support/services.ts';
import { ACTIVE_PROTOCOLS, FIXTURE_END, FIXTURE_START, hotRecords, ingest, ingestDemo, PROGRAM_OF } from '../support/fixtures.ts';
import * as oracle from '../support/oracle.ts';
import { RpcClient } from '../support/rpc-client.ts';

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

const a = () => ctx.services.operatorAnalytics;
/** The answer as it travels: JSON, so the parity compares the wire form. */
const wire = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
/** The options' blockTime as given (undefined: no range). */
const bt = (range: Range | undefined) => (range ? { blockTime: range } : {});

// Ranges: everything; whole hours plus ragged edges on both sides; less than an hour;
// and a range before any data.
const RANGES: [string, Range | undefined][] = [
  ['no range', undefined],
  ['ragged multi-day range', { gte: FIXTURE_START + 1800 + 7, lte: FIXTURE_START + 2 * 86_400 + 1234 }],
  ['only gte', { gte: FIXTURE_START + 86_400 + 59 }],
  ['only lte', { lte: FIXTURE_START + 86_400 + 59 }],
  ['under one hour', { gte: FIXTURE_START + 4000, lte: FIXTURE_START + 6000 }],
  ['no data', { gte: FIXTURE_START - 86_400, lte: FIXTURE_START - 1 }],
];

describe('getProtocols', () => {
  it('lists the active protocols of the registry', async () => {
    expect(await rpc.call('getProtocols')).toEqual(await oracle.activeProtocols(ctx.services));
    expect(await rpc.call('getProtocols', [])).toEqual(ACTIVE_PROTOCOLS);
  });
});

describe('getProtocolStats', () => {
  it.each(RANGES)('%s: equals the analytics answer for blockTime as the range, every field named as SPEC says', async (_label, range) => {
    for (const p of ['jupiter_v6', 'pump_fun', 'raydium_cp_swap']) {
      const got = await rpc.call<Record<string, number | string>>('getProtocolStats', [{ protocolName: p, ...bt(range) }]);
      expect(got).toEqual(wire(await a().protocolStats(p, range ?? {})));
      expect(Object.keys(got).sort()).toEqual([
        'averageAccountsCount',
        'averageComputeUnits',
        'averageFee',
        'failedTransactions',
        'firstSeen',
        'lastSeen',
        'protocolName',
        'successRate',
        'successfulTransactions',
        'totalComputeUnits',
        'totalFees',
        'totalTransactions',
        'uniqueInstructionTypes',
      ]);
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
    const got = await rpc.call<Record<string, unknown>[]>('getProtocolComparison', [{ protocols, ...bt(range) }]);
    expect(got.map((x) => x.protocolName)).toEqual(protocols);
    expect(got).toEqual(wire(await a().protocolComparison(protocols, range ?? {})));
  });

  it('a single protocol', async () => {
    const got = await rpc.call<{ totalTransactions: number }[]>('getProtocolComparison', [{ protocols: ['pump_amm'] }]);
    expect(got).toHaveLength(1);
    expect(got[0]!.totalTransactions).toBe((await a().protocolStats('pump_amm')).totalTransactions);
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
  it.each(RANGES.slice(0, 3))('%s: the analytics answer, under the field names of SPEC', async (_label, range) => {
    for (const p of ['jupiter_v6', 'pump_fun']) {
      const got = await rpc.call<Record<string, number | string>>('getProtocolPerformance', [{ protocolName: p, ...bt(range) }]);
      expect(Object.keys(got).sort()).toEqual([
        'averageAccountsCount',
        'averageComputeUnits',
        'averageFee',
        'p50ComputeUnits',
        'p95ComputeUnits',
        'p99ComputeUnits',
        'protocolName',
        'successRate',
        'totalVolume',
      ]);
      expect(got).toEqual(wire(await a().protocolPerformance(p, range ?? {})));
    }
  });

  it('a range without records gives zeros', async () => {
    expect(await rpc.call('getProtocolPerformance', [{ protocolName: 'whirlpool', blockTime: { gte: 1000, lte: 2000 } }])).toEqual({
      protocolName: 'whirlpool',
      successRate: 0,
      averageComputeUnits: 0,
      averageFee: 0,
      p50ComputeUnits: 0,
      p95ComputeUnits: 0,
      p99ComputeUnits: 0,
      averageAccountsCount: 0,
      totalVolume: 0,
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
  it('defaults: by transactions, descending, up to 10 (all active protocols here)', async () => {
    const got = await rpc.call<unknown[]>('getTopProtocols');
    expect(got).toEqual(wire(await a().topProtocols({}, 'transactions', 10)));
    expect(got).toHaveLength(7);
    expect(await rpc.call('getTopProtocols', [{}])).toEqual(got);
  });

  it.each(['transactions', 'fees', 'successRate'] as const)('sortBy %s with a limit and a range', async (sortBy) => {
    const range = { gte: FIXTURE_START + 3 * 3600 + 11, lte: FIXTURE_END - 7 * 3600 - 5 };
    expect(await rpc.call('getTopProtocols', [{ sortBy, limit: 3, blockTime: range }])).toEqual(wire(await a().topProtocols(range, sortBy, 3)));
    expect(await rpc.call('getTopProtocols', [{ sortBy }])).toEqual(wire(await a().topProtocols({}, sortBy, 10)));
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
  it.each([['jupiter_v6'], [undefined]])('one day hourly (%s): 24 buckets, the analytics answer', async (protocol) => {
    const gte = FIXTURE_START + 86_400;
    const lte = gte + 86_399;
    const got = await rpc.call<Record<string, unknown>[]>('getProtocolActivity', [
      { ...(protocol ? { protocolName: protocol } : {}), blockTime: { gte, lte } },
    ]);
    expect(got).toHaveLength(24);
    expect(got[5]).toMatchObject({ timestamp: gte + 5 * 3600, date: '2024-12-30', hour: 5 });
    expect(got).toEqual(wire(await a().activity(protocol, { gte, lte }, 'hour')));
  });

  it('ragged range: one bucket per hour touched, the analytics answer', async () => {
    const gte = FIXTURE_START + 2 * 3600 + 1000;
    const lte = FIXTURE_START + 5 * 3600 + 100;
    const got = await rpc.call<{ timestamp: number; count: number; totalFees: number }[]>('getProtocolActivity', [
      { protocolName: 'pump_fun', blockTime: { gte, lte } },
    ]);
    expect(got.map((b) => b.timestamp)).toEqual([2, 3, 4, 5].map((h) => FIXTURE_START + h * 3600));
    expect(got).toEqual(wire(await a().activity('pump_fun', { gte, lte }, 'hour')));
  });

  it('interval day: daily buckets without an hour field', async () => {
    const got = await rpc.call<Record<string, unknown>[]>('getProtocolActivity', [
      { blockTime: { gte: FIXTURE_START, lte: FIXTURE_END - 1 }, interval: 'day' },
    ]);
    expect(got.map((b) => b.date)).toEqual(['2024-12-29', '2024-12-30', '2024-12-31']);
    expect(got.some((b) => 'hour' in b)).toBe(false);
    expect(got).toEqual(wire(await a().activity(undefined, { gte: FIXTURE_START, lte: FIXTURE_END - 1 }, 'day')));
  });

  it.each([
    [[], -32602, /options \(params\[0\]\) is required/],
    [[{ protocolName: 'jupiter_v6' }], -32602, /options\.blockTime is required/],
    [[{ blockTime: { gte: FIXTURE_START } }], -32602, /options\.blockTime\.lte is required/],
    [[{ blockTime: { lte: FIXTURE_START } }], -32602, /options\.blockTime\.gte is required/],
    [
      [{ blockTime: { gte: FIXTURE_START, lte: FIXTURE_START + 10 }, interval: 'minute' }],
      -32602,
      /options\.interval must be one of "hour", "day", "week", "month"/,
    ],
    [[{ blockTime: { gte: FIXTURE_START, lte: FIXTURE_START + 10 }, protocolName: 'kamino_lending' }], -32602, /options\.protocolName: unknown protocol/],
    [[{ blockTime: { gte: 0, lte: 4_000_000_000 } }], -32602, /blockTime: the range spans/],
    [[{ blockTime: { gte: FIXTURE_START + 10, lte: FIXTURE_START } }], -32602, /gte must not be later than/],
    [[{ blockTime: 'last day' }], -32000, /options\.blockTime must be object/],
  ])('error for %j', async (params, code, data) => {
    const e = await rpc.error('getProtocolActivity', params);
    expect(e.code).toBe(code);
    expect(e.data).toMatch(data);
  });
});

describe('getInstructionTypes', () => {
  it('defaults: all protocols, most frequent first, up to 100', async () => {
    const got = await rpc.call<unknown[]>('getInstructionTypes');
    expect(got).toEqual(wire(await a().instructionTypes(undefined, {}, 100)));
    expect(got.length).toBeGreaterThan(20);
    expect(await rpc.call('getInstructionTypes', [{}])).toEqual(got);
  });

  it.each(RANGES)('%s: one protocol, with a range and a limit', async (_label, range) => {
    expect(await rpc.call('getInstructionTypes', [{ protocolName: 'jupiter_v6', limit: 4, ...bt(range) }])).toEqual(
      wire(await a().instructionTypes('jupiter_v6', range ?? {}, 4)),
    );
  });

  it('limit 1 and 1000 (maximum) accepted', async () => {
    expect(await rpc.call('getInstructionTypes', [{ limit: 1 }])).toEqual(wire(await a().instructionTypes(undefined, {}, 1)));
    expect(await rpc.call('getInstructionTypes', [{ limit: 1000 }])).toEqual(wire(await a().instructionTypes(undefined, {}, 1000)));
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
  it('defaults: the newest 100 failed records of active protocols, in {data}', async () => {
    const got = await rpc.call<{ data: Record<string, unknown>[] }>('getFailedTransactions');
    expect(Object.keys(got)).toEqual(['data']);
    expect(got.data).toEqual(wire(await a().failedTransactions({ range: {}, limit: 100 })));
    expect(got.data).toHaveLength(100);
    expect(Object.keys(got.data[0]!).sort()).toEqual(['blockTime', 'errorMessage', 'logMessages', 'programId', 'protocolName', 'rawData', 'signature', 'slot']);
    expect(got.data.every((f) => typeof f.slot === 'string')).toBe(true);
    expect(await rpc.call('getFailedTransactions', [{}])).toEqual(got);
  });

  it.each([
    ['protocolName', { protocolName: 'pump_fun' }, { protocolName: 'pump_fun' }],
    ['programId', { programId: PROGRAM_OF.jupiter_v6 }, { programId: PROGRAM_OF.jupiter_v6 }],
    [
      'blockTime',
      { blockTime: { gte: FIXTURE_START + 7200 + 5, lte: FIXTURE_START + 86_400 + 77 } },
      { range: { gte: FIXTURE_START + 7200 + 5, lte: FIXTURE_START + 86_400 + 77 } },
    ],
    [
      'everything, limit 5',
      { protocolName: 'jupiter_v6', programId: PROGRAM_OF.jupiter_v6, blockTime: { lte: FIXTURE_START + 2 * 86_400 }, limit: 5 },
      { protocolName: 'jupiter_v6', programId: PROGRAM_OF.jupiter_v6, range: { lte: FIXTURE_START + 2 * 86_400 }, limit: 5 },
    ],
  ])('%s: the analytics answer for the same filter', async (_label, options, opts) => {
    const got = await rpc.call<{ data: unknown[] }>('getFailedTransactions', [options]);
    expect(got.data.length).toBeGreaterThan(0);
    expect(got.data).toEqual(wire(await a().failedTransactions({ range: {}, limit: 100, ...opts })));
  });

  it('limit 1000 (maximum) accepted; 1001 is rejected', async () => {
    expect((await rpc.call<{ data: unknown[] }>('getFailedTransactions', [{ limit: 1000 }])).data).toEqual(
      wire(await a().failedTransactions({ range: {}, limit: 1000 })),
    );
    expect((await rpc.error('getFailedTransactions', [{ limit: 1001 }])).data).toMatch(/options\.limit must be at most 1000/);
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
