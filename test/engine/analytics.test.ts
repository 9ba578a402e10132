// The analytics facade (api/analytics/analytics.ts): every figure of every answer, checked
// field by field against the independent reference (support/oracle.ts, plain SQL over the
// base table). The interface tests (rpc-*, rest-*) check only mapping, errors and parity
// with these answers, so a figure is asserted here once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACTIVE_PROTOCOLS, b58, FIXTURE_END, FIXTURE_START, HOT, hotRecords, ingest, ingestDemo, PROGRAM_OF } from '../support/fixtures.ts';
import * as oracle from '../support/oracle.ts';
import { ADDRESS_ORDER, LISTING_ORDER, type Range } from '../support/oracle.ts';
import { startServices } from '../support/services.ts';
import type { IngestRecord } from '../../ingest/record-schema.ts';
import { planRange } from '../../api/analytics/question/model.ts';
import { protocolActivity } from '../../api/catalog/protocols.ts';

let s: Awaited<ReturnType<typeof startServices>>;
let records: IngestRecord[];

beforeAll(async () => {
  s = await startServices();
  records = await ingestDemo(s, 6000, 11);
  await ingest(s, hotRecords());
});
afterAll(async () => s.cleanup());

/** Averages and rates are divisions: compare them to 6 decimals, counts and sums exactly. */
function close<T>(v: T): T {
  if (typeof v === 'number') return (Number.isInteger(v) ? v : expect.closeTo(v, 6)) as T;
  if (Array.isArray(v)) return v.map(close) as T;
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, close(x)])) as T;
  return v;
}

// Ranges: everything; whole hours plus ragged edges on both sides; open on either side;
// less than an hour; and a range before any data.
const RANGES: [string, Range][] = [
  ['no range', {}],
  ['ragged multi-day range', { gte: FIXTURE_START + 1800 + 7, lte: FIXTURE_START + 2 * 86_400 + 1234 }],
  ['only gte', { gte: FIXTURE_START + 86_400 + 59 }],
  ['only lte', { lte: FIXTURE_START + 86_400 + 59 }],
  ['under one hour', { gte: FIXTURE_START + 4000, lte: FIXTURE_START + 6000 }],
  ['no data', { gte: FIXTURE_START - 86_400, lte: FIXTURE_START - 1 }],
];

describe('time range planning', () => {
  it('splits a ragged range into whole hours and two edges', () => {
    expect(planRange({ gte: 7200 + 10, lte: 5 * 3600 + 99 })).toEqual({
      view: { from: 3 * 3600, to: 5 * 3600 },
      edges: [
        { from: 7210, to: 3 * 3600 },
        { from: 5 * 3600, to: 5 * 3600 + 100 },
      ],
    });
  });
  it('answers short ranges from the base table only, and open ranges from the view', () => {
    expect(planRange({ gte: 100, lte: 200 })).toEqual({ view: undefined, edges: [{ from: 100, to: 201 }] });
    expect(planRange({})).toEqual({ view: { from: undefined, to: undefined }, edges: [] });
    expect(planRange({ gte: 3600, lte: 7199 })).toEqual({ view: { from: 3600, to: 7200 }, edges: [] });
  });
});

describe('protocol stats', () => {
  it.each(RANGES)('%s: every field equals the base-table figures', async (label, range) => {
    for (const p of ['jupiter_v6', 'pump_fun', 'whirlpool', 'raydium_cp_swap']) {
      const want = await oracle.protocolStats(s, p, range);
      expect(await s.operatorAnalytics.protocolStats(p, range)).toEqual(want);
      if (label === 'no range') expect(want.totalTransactions).toBeGreaterThan(100);
    }
  });

  it('are exact for ragged ranges (whole hours from the view, edges from the base table)', async () => {
    const ranges: [number, number][] = [
      [FIXTURE_START + 1234, FIXTURE_END - 4321],
      [FIXTURE_START + 3600 * 5 + 1, FIXTURE_START + 3600 * 7 - 1],
      [FIXTURE_START + 17, FIXTURE_START + 3000],
      [FIXTURE_START + 86_400 + 59, FIXTURE_START + 86_400 + 3600 + 58],
    ];
    // and some seeded pseudo-random ones
    let x = 12345;
    for (let i = 0; i < 8; i++) {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      const a = FIXTURE_START + (x % (3 * 86_400));
      x = (x * 1103515245 + 12345) % 2 ** 31;
      ranges.push([a, a + (x % 40_000)]);
    }
    for (const [gte, lte] of ranges) {
      const got = await s.operatorAnalytics.protocolStats('jupiter_v6', { gte, lte });
      const want = await oracle.protocolStats(s, 'jupiter_v6', { gte, lte });
      expect({ gte, lte, ...got }).toEqual({ gte, lte, ...want });
    }
  });

  it('an empty range gives zeros, and inactive or unknown protocols are refused', async () => {
    expect(await s.operatorAnalytics.protocolStats('whirlpool', { gte: 10, lte: 20 })).toMatchObject({ totalTransactions: 0, successRate: 0, firstSeen: 0 });
    await expect(s.operatorAnalytics.protocolStats('drift_v2')).rejects.toThrow(/unknown protocol "drift_v2"/);
    await expect(s.operatorAnalytics.protocolStats('nope_v1')).rejects.toThrow(/unknown protocol/);
  });

  it('percentiles come from t-digest states and are close to the exact quantiles', async () => {
    const range = { gte: FIXTURE_START + 999, lte: FIXTURE_END - 999 };
    const a = await s.operatorAnalytics.protocolAggregate('jupiter_v6', range);
    const exact = await oracle.exactQuantiles(s, 'compute_units', ['jupiter_v6'], range, [0.5, 0.95, 0.99]);
    a!.cuQuantiles.forEach((v, i) => {
      expect(Math.abs(v - exact[i]!) / exact[i]!).toBeLessThan(0.05);
    });
  });
});

describe('protocol comparison and performance', () => {
  it.each(RANGES)('%s: comparison has one item per protocol, in the order asked', async (_label, range) => {
    const protocols = ['pump_fun', 'jupiter_v6', 'whirlpool', 'jupiter_v4'];
    expect(await s.operatorAnalytics.protocolComparison(protocols, range)).toEqual(close(await oracle.protocolComparison(s, protocols, range)));
  });

  it.each(RANGES.slice(0, 3))('%s: performance averages and volume exact, percentiles integers within 3 percentile points', async (_label, range) => {
    for (const p of ['jupiter_v6', 'pump_fun']) {
      const st = await oracle.protocolStats(s, p, range);
      const got = await s.operatorAnalytics.protocolPerformance(p, range);
      const { p50ComputeUnits, p95ComputeUnits, p99ComputeUnits, ...exact } = got;
      expect(exact).toEqual(
        close({
          protocolName: p,
          successRate: st.successRate,
          averageComputeUnits: st.averageComputeUnits,
          averageFee: st.averageFee,
          averageAccountsCount: st.averageAccountsCount,
          totalVolume: st.totalFees,
        }),
      );
      for (const [v, q] of [
        [p50ComputeUnits, 0.5],
        [p95ComputeUnits, 0.95],
        [p99ComputeUnits, 0.99],
      ] as const) {
        expect(Number.isInteger(v)).toBe(true);
        const [lo, hi] = await oracle.exactQuantiles(s, 'compute_units', [p], range, [q - 0.03, Math.min(1, q + 0.03)]);
        expect(v).toBeGreaterThanOrEqual(lo!);
        expect(v).toBeLessThanOrEqual(hi!);
      }
      expect(p50ComputeUnits).toBeLessThanOrEqual(p95ComputeUnits);
      expect(p95ComputeUnits).toBeLessThanOrEqual(p99ComputeUnits);
    }
  });

  it('performance over a range without records is all zeros', async () => {
    expect(await s.operatorAnalytics.protocolPerformance('whirlpool', { gte: 1000, lte: 2000 })).toEqual({
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
});

describe('top protocols', () => {
  it.each(['transactions', 'fees', 'successRate'] as const)('by %s: every field, sorted, over all time and a ragged range with a limit', async (sortBy) => {
    expect(await s.operatorAnalytics.topProtocols({}, sortBy, 10)).toEqual(close(await oracle.topProtocols(s, ACTIVE_PROTOCOLS, {}, sortBy, 10)));
    const range = { gte: FIXTURE_START + 3 * 3600 + 11, lte: FIXTURE_END - 7 * 3600 - 5 };
    expect(await s.operatorAnalytics.topProtocols(range, sortBy, 3)).toEqual(close(await oracle.topProtocols(s, ACTIVE_PROTOCOLS, range, sortBy, 3)));
  });

  it('hide inactive protocols; every active protocol with records is listed', async () => {
    const byTx = await s.operatorAnalytics.topProtocols({}, 'transactions', 100);
    expect(byTx[0]!.protocolName).toBe('jupiter_v6');
    expect(byTx.map((t) => t.protocolName).sort()).toEqual([...ACTIVE_PROTOCOLS].sort());
  });
});

describe('activity', () => {
  it('hourly buckets over a ragged range equal base-table counts, zero-filled, edges counting only seconds inside', async () => {
    const range = { gte: FIXTURE_START + 1800, lte: FIXTURE_START + 6 * 3600 + 1799 };
    const buckets = await s.operatorAnalytics.activity('pump_fun', range, 'hour');
    expect(buckets).toHaveLength(7);
    expect(buckets).toEqual(await oracle.activityBuckets(s, ['pump_fun'], range, 'hour'));
    expect(buckets.reduce((n, b) => n + b.count, 0)).toBeGreaterThan(0);
  });

  it('24 hourly buckets of one day over all visible protocols', async () => {
    const range = { gte: FIXTURE_START + 86_400, lte: FIXTURE_START + 2 * 86_400 - 1 };
    const buckets = await s.operatorAnalytics.activity(undefined, range, 'hour');
    expect(buckets).toHaveLength(24);
    expect(buckets).toEqual(await oracle.activityBuckets(s, ACTIVE_PROTOCOLS, range, 'hour'));
    expect(buckets.reduce((n, b) => n + b.count, 0)).toBeGreaterThan(100);
  });

  it('daily buckets have no hour field and exclude inactive protocols', async () => {
    const range = { gte: FIXTURE_START, lte: FIXTURE_END - 1 };
    const buckets = await s.operatorAnalytics.activity(undefined, range, 'day');
    expect(buckets).toHaveLength(3);
    expect(buckets[0]).not.toHaveProperty('hour');
    expect(buckets).toEqual(await oracle.activityBuckets(s, await oracle.activeProtocols(s), range, 'day'));
  });

  it('refuses more buckets than allowed: the rule of the declared request, which every door runs', async () => {
    const asked = s.operatorAnalytics.check(protocolActivity.request!, { values: { range: { gte: 0, lte: 86_400 * 500 }, interval: 'hour' } });
    await expect(asked).rejects.toThrow(/at most 10000/);
  });
});

describe('instruction types', () => {
  it('equal base-table figures over a ragged range', async () => {
    const range = { gte: FIXTURE_START + 5000, lte: FIXTURE_END - 7000 };
    expect(await s.operatorAnalytics.instructionTypes('whirlpool', range, 100)).toEqual(await oracle.instructionTypes(s, ['whirlpool'], range, 100));
  });

  it('over all protocols: most frequent first (then protocol, type), limited', async () => {
    const all = await s.operatorAnalytics.instructionTypes(undefined, {}, 100);
    expect(all.length).toBeGreaterThan(20);
    expect(all).toEqual(close(await oracle.instructionTypes(s, ACTIVE_PROTOCOLS, {}, 100)));
    expect(await s.operatorAnalytics.instructionTypes(undefined, {}, 3)).toEqual(close(await oracle.instructionTypes(s, ACTIVE_PROTOCOLS, {}, 3)));
    expect(await s.operatorAnalytics.instructionTypes(undefined, {}, 1000)).toEqual(close(await oracle.instructionTypes(s, ACTIVE_PROTOCOLS, {}, 1000)));
  });

  it.each(RANGES)('%s: one protocol with a limit', async (_label, range) => {
    expect(await s.operatorAnalytics.instructionTypes('jupiter_v6', range, 4)).toEqual(close(await oracle.instructionTypes(s, ['jupiter_v6'], range, 4)));
  });
});

describe('failed transactions', () => {
  it('the newest failed records of the visible protocols, every field', async () => {
    const got = await s.operatorAnalytics.failedTransactions({ range: {}, limit: 100 });
    expect(got).toHaveLength(100);
    expect(got).toEqual(await oracle.failedTransactions(s, { limit: 100 }));
    expect(got.every((f) => (f.errorMessage as string).length > 0)).toBe(true);
  });

  it('log lines sent as an array come back joined with newlines', async () => {
    const got = await s.operatorAnalytics.failedTransactions({ protocolName: 'pump_fun', range: {}, limit: 1000 });
    expect(got.find((f) => f.errorMessage === 'failure 126')?.logMessages).toBe('log a 126\nlog b 126');
  });

  it.each([
    ['protocol', { protocolName: 'pump_fun' }, { protocols: ['pump_fun'] }],
    ['program id', { programId: PROGRAM_OF.jupiter_v6 }, { programId: PROGRAM_OF.jupiter_v6 }],
    [
      'program id of another protocol than the protocol asked',
      { protocolName: 'pump_fun', programId: PROGRAM_OF.jupiter_v6 },
      { protocols: ['pump_fun'], programId: PROGRAM_OF.jupiter_v6 },
    ],
    [
      'range',
      { range: { gte: FIXTURE_START + 7200 + 5, lte: FIXTURE_START + 86_400 + 77 } },
      { range: { gte: FIXTURE_START + 7200 + 5, lte: FIXTURE_START + 86_400 + 77 } },
    ],
    [
      'everything, limit 5',
      { protocolName: 'jupiter_v6', programId: PROGRAM_OF.jupiter_v6, range: { lte: FIXTURE_START + 2 * 86_400 }, limit: 5 },
      { protocols: ['jupiter_v6'], programId: PROGRAM_OF.jupiter_v6, range: { lte: FIXTURE_START + 2 * 86_400 }, limit: 5 },
    ],
  ])('filtered by %s', async (_label, opts, ref) => {
    const limit = (opts as { limit?: number }).limit ?? 100;
    expect(await s.operatorAnalytics.failedTransactions({ range: {}, limit, ...opts })).toEqual(await oracle.failedTransactions(s, { limit, ...ref }));
  });

  it('a limit of 1000 returns every visible failure, and none of a hidden protocol', async () => {
    const all = await oracle.failedTransactions(s, { limit: 1000 });
    expect(all.length).toBeGreaterThan(100);
    expect(all.length).toBeLessThan(1000);
    const got = await s.operatorAnalytics.failedTransactions({ range: {}, limit: 1000 });
    expect(got).toEqual(all);
    expect(got.some((f) => !ACTIVE_PROTOCOLS.includes(f.protocolName))).toBe(false);
    expect(await oracle.countStored(s, 'NOT success AND protocol_name NOT IN {a:Array(String)}', { a: ACTIVE_PROTOCOLS })).toBeGreaterThan(0);
  });
});

describe('transactions', () => {
  it('looks up a signature, returning its lowest instruction index; null when unknown or hidden', async () => {
    const second = records.find((r) => r.instruction_index === 1 && records.some((o) => o.signature === r.signature && o.instruction_index === 0))!;
    const first = records.find((r) => r.signature === second.signature && r.instruction_index === 0)!;
    const tx = await s.operatorAnalytics.transaction(second.signature);
    if (first.protocol_name !== 'raydium_amm_v4' && first.protocol_name !== 'meteora_dlmm') {
      expect(tx).toMatchObject({
        signature: first.signature,
        protocolName: first.protocol_name,
        instructionType: first.instruction_type,
        slot: String(first.slot),
      });
    }
    const multi = b58('hot-25', 88);
    expect(await s.operatorAnalytics.transaction(multi)).toEqual(await oracle.transaction(s, multi));
    expect((await s.operatorAnalytics.transaction(multi))!.instructionType).toBe('buy'); // index 0, not the 'claim' at index 1
    expect(await s.operatorAnalytics.transaction('1'.repeat(88))).toBeNull();
    expect(await oracle.countStored(s, 'signature = {s:String}', { s: b58('hot-3', 88) })).toBe(1);
    expect(await s.operatorAnalytics.transaction(b58('hot-3', 88))).toBeNull(); // raydium_amm_v4: inactive
  });

  const mid = FIXTURE_START + 86_400 + 1234;
  const late = FIXTURE_END - 40_000;
  const someSigs = async (): Promise<string[]> => {
    const rows = await oracle.transactionsWhere(s, '1', {}, LISTING_ORDER.asc);
    return [rows[5]!.signature, rows[500]!.signature, rows[1500]!.signature, b58('hot-25', 88), b58('hot-3', 88), b58('never-stored', 88)];
  };
  /** Filter cases: the analytics filters, and the same question as a SQL condition. */
  const cases: [string, () => Promise<[object, string, Record<string, unknown>]>][] = [
    ['range.gte', async () => [{ range: { gte: mid } }, "block_time >= toDateTime({g:UInt32}, 'UTC')", { g: mid }]],
    ['range.lte', async () => [{ range: { lte: mid } }, "block_time <= toDateTime({l:UInt32}, 'UTC')", { l: mid }]],
    [
      'range both',
      async () => [
        { range: { gte: mid, lte: late } },
        "block_time BETWEEN toDateTime({g:UInt32}, 'UTC') AND toDateTime({l:UInt32}, 'UTC')",
        { g: mid, l: late },
      ],
    ],
    [
      'range one second',
      async () => [{ range: { gte: FIXTURE_START + 17, lte: FIXTURE_START + 17 } }, "block_time = toDateTime({g:UInt32}, 'UTC')", { g: FIXTURE_START + 17 }],
    ],
    ['status succeeded', async () => [{ status: 'succeeded' }, 'success', {}]],
    ['status failed', async () => [{ status: 'failed' }, 'NOT success', {}]],
    ['status all', async () => [{ status: 'all' }, '1', {}]],
    ['protocols', async () => [{ protocols: ['pump_fun', 'whirlpool'] }, "protocol_name IN ('pump_fun', 'whirlpool')", {}]],
    [
      'programIds',
      async () => [
        { programIds: [PROGRAM_OF.jupiter_v6, PROGRAM_OF.pump_amm] },
        'program_id IN {p:Array(String)}',
        { p: [PROGRAM_OF.jupiter_v6, PROGRAM_OF.pump_amm] },
      ],
    ],
    ['programIds of an inactive protocol', async () => [{ programIds: [PROGRAM_OF.raydium_amm_v4] }, '0', {}]],
    ['instructionTypes', async () => [{ instructionTypes: ['buy', 'route', 'claim'] }, "instruction_type IN ('buy', 'route', 'claim')", {}]],
    [
      'signatures',
      async () => {
        const sigs = await someSigs();
        return [{ signatures: sigs }, 'signature IN {s:Array(String)}', { s: sigs }];
      },
    ],
    [
      'all combined',
      async () => [
        {
          range: { gte: FIXTURE_START + 3600, lte: late },
          status: 'failed',
          protocols: ['pump_fun', 'jupiter_v6', 'whirlpool'],
          programIds: [PROGRAM_OF.pump_fun, PROGRAM_OF.whirlpool],
          instructionTypes: ['buy', 'sell', 'swap'],
        },
        "block_time BETWEEN toDateTime({g:UInt32}, 'UTC') AND toDateTime({l:UInt32}, 'UTC') AND NOT success AND protocol_name IN ('pump_fun', 'jupiter_v6', 'whirlpool') AND program_id IN {p:Array(String)} AND instruction_type IN ('buy', 'sell', 'swap')",
        { g: FIXTURE_START + 3600, l: late, p: [PROGRAM_OF.pump_fun, PROGRAM_OF.whirlpool] },
      ],
    ],
    [
      'signatures combined with status and protocols',
      async () => {
        const sigs = await someSigs();
        return [
          { signatures: sigs, status: 'succeeded', protocols: ACTIVE_PROTOCOLS.slice(1) },
          "signature IN {s:Array(String)} AND success AND protocol_name != 'jupiter_v4'",
          { s: sigs },
        ];
      },
    ],
  ];

  it.each(cases)('filter %s: the same records, in order (both orders), as the SQL condition', async (_label, make) => {
    const [filters, where, params] = await make();
    for (const sortOrder of ['desc', 'asc'] as const) {
      const page = await s.operatorAnalytics.transactions({ filters, sortOrder, limit: 10_000 });
      expect(page.data).toEqual(await oracle.transactionsWhere(s, where, params, LISTING_ORDER[sortOrder]));
      expect(page.next).toBeNull();
    }
  });

  it('filters actually narrow (the data set is not degenerate)', async () => {
    const total = (await oracle.transactionsWhere(s)).length;
    for (const [, make] of cases.filter(([l]) => l !== 'status all')) {
      const [, where, params] = await make();
      expect((await oracle.transactionsWhere(s, where, params)).length).toBeLessThan(total);
    }
    expect((await oracle.transactionsWhere(s, 'NOT success')).length).toBeGreaterThan(50);
  });

  it('counts the records of visible protocols in a range', async () => {
    const range = { gte: FIXTURE_START + 86_400, lte: FIXTURE_START + 2 * 86_400 - 1 };
    expect(await s.operatorAnalytics.transactionCount(['jupiter_v6'], range)).toBe((await oracle.totals(s, ['jupiter_v6'], range)).count);
    expect(await s.operatorAnalytics.transactionCount(undefined, {})).toBe((await oracle.totals(s, ACTIVE_PROTOCOLS)).count);
  });

  it('pages through a filtered listing without skips or repeats, even while new records arrive', async () => {
    const filters = { protocols: ['pump_fun', 'whirlpool'], status: 'all' as const };
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await s.operatorAnalytics.transactions({ filters, sortOrder: 'desc', limit: 250, cursor });
      for (const t of page.data) seen.push(`${t.signature}:${t.blockTime}`);
      cursor = page.next ?? undefined;
      if (pages === 1) {
        // A late record (older than the cursor) must show up in a later page exactly once.
        await ingest(s, [{ ...records.find((r) => r.protocol_name === 'whirlpool')!, signature: '7'.repeat(88), block_time: FIXTURE_START + 5 }]);
      }
      pages += 1;
    } while (cursor);
    // A signature may carry several instructions (records): compare counts per signature.
    const stored = await oracle.transactionsWhere(s, "protocol_name IN ('pump_fun', 'whirlpool')");
    const want = new Map<string, number>();
    for (const t of stored) want.set(`${t.signature}:${t.blockTime}`, (want.get(`${t.signature}:${t.blockTime}`) ?? 0) + 1);
    const got = new Map<string, number>();
    for (const k of seen) got.set(k, (got.get(k) ?? 0) + 1);
    expect(got).toEqual(want);
    expect(seen).toContain(`${'7'.repeat(88)}:${FIXTURE_START + 5}`);
    expect(pages).toBeGreaterThan(3);
  });

  it('rejects a forged pagination token', async () => {
    await expect(s.operatorAnalytics.transactions({ filters: {}, sortOrder: 'desc', limit: 5, cursor: 'garbage' })).rejects.toThrow(/pagination token/);
  });
});

describe('address transactions', () => {
  const mid = FIXTURE_START + 86_400 + 999;
  /** Filter cases: the analytics filters, and the same question as a SQL condition. */
  const cases: [string, object, string, Record<string, unknown>][] = [
    ['range.gte', { range: { gte: mid } }, "block_time >= toDateTime({g:UInt32}, 'UTC')", { g: mid }],
    ['range.lte', { range: { lte: mid } }, "block_time <= toDateTime({l:UInt32}, 'UTC')", { l: mid }],
    [
      'range both',
      { range: { gte: FIXTURE_START + 5000, lte: mid } },
      "block_time BETWEEN toDateTime({g:UInt32}, 'UTC') AND toDateTime({l:UInt32}, 'UTC')",
      { g: FIXTURE_START + 5000, l: mid },
    ],
    ['status succeeded', { status: 'succeeded' }, 'success', {}],
    ['status failed', { status: 'failed' }, 'NOT success', {}],
    ['status all', { status: 'all' }, '1', {}],
    ['protocols', { protocols: ['whirlpool', 'pump_amm'] }, "protocol_name IN ('whirlpool', 'pump_amm')", {}],
    ['programIds', { programIds: [PROGRAM_OF.jupiter_v6] }, 'program_id = {p:String}', { p: PROGRAM_OF.jupiter_v6 }],
    [
      'signatures',
      { signatures: [b58('hot-0', 88), b58('hot-25', 88), b58('hot-3', 88), b58('hot-100', 88), b58('nope', 88)] },
      'signature IN {s:Array(String)}',
      { s: [b58('hot-0', 88), b58('hot-25', 88), b58('hot-3', 88), b58('hot-100', 88)] },
    ],
    [
      'all combined',
      {
        range: { gte: FIXTURE_START + 5000, lte: FIXTURE_START + 170_000 },
        status: 'succeeded',
        protocols: ['jupiter_v6', 'pump_fun', 'whirlpool'],
        programIds: [PROGRAM_OF.pump_fun, PROGRAM_OF.whirlpool],
      },
      "block_time BETWEEN toDateTime({g:UInt32}, 'UTC') AND toDateTime({l:UInt32}, 'UTC') AND success AND protocol_name IN ('jupiter_v6', 'pump_fun', 'whirlpool') AND program_id IN {p:Array(String)}",
      { g: FIXTURE_START + 5000, l: FIXTURE_START + 170_000, p: [PROGRAM_OF.pump_fun, PROGRAM_OF.whirlpool] },
    ],
  ];

  it.each(cases)('filter %s: the same records, in order (both orders), as the SQL condition; the count agrees', async (label, filters, where, params) => {
    for (const sortOrder of ['asc', 'desc'] as const) {
      const page = await s.operatorAnalytics.addressTransactions({ address: HOT, filters, sortOrder, limit: 10_000 });
      expect(page.data).toEqual(await oracle.addressTransactions(s, HOT, where, params, ADDRESS_ORDER[sortOrder]));
    }
    expect(await s.operatorAnalytics.addressTransactionCount(HOT, filters)).toBe((await oracle.addressTransactions(s, HOT, where, params)).length);
    if (label !== 'status all')
      expect((await oracle.addressTransactions(s, HOT, where, params)).length).toBeLessThan((await oracle.addressTransactions(s, HOT)).length);
  });

  it('a program id is an address: it matches every visible record of that program; hidden protocols are left out', async () => {
    const page = await s.operatorAnalytics.addressTransactions({ address: PROGRAM_OF.whirlpool!, filters: {}, sortOrder: 'asc', limit: 10_000 });
    const want = await oracle.addressTransactions(s, PROGRAM_OF.whirlpool!);
    expect(want.length).toBeGreaterThan(200);
    expect(page).toEqual({ data: want, next: null });
    const hot = await s.operatorAnalytics.addressTransactions({ address: HOT, filters: {}, sortOrder: 'asc', limit: 10_000 });
    expect(hot.data.some((t) => t.protocolName === 'raydium_amm_v4')).toBe(false);
    expect(await oracle.countStored(s, "has(accounts, {a:String}) AND protocol_name = 'raydium_amm_v4'", { a: HOT })).toBeGreaterThan(0);
  });
});

describe('fee statistics', () => {
  const check = async (
    protocols: readonly string[],
    got: { totalTransactions: number; totalFees: number; minFee: number; maxFee: number; averageFee: number; p50Fee: number; p95Fee: number; p99Fee: number },
    range?: Range,
  ) => {
    const ref = await oracle.feeStats(s, protocols, range);
    expect(ref.totalTransactions).toBeGreaterThan(0);
    const { p50Fee, p95Fee, p99Fee, ...exact } = got;
    expect(exact).toMatchObject(
      close({ totalTransactions: ref.totalTransactions, totalFees: ref.totalFees, minFee: ref.minFee, maxFee: ref.maxFee, averageFee: ref.averageFee }),
    );
    // t-digest percentiles are approximate: ordered, within [min, max], near the exact values.
    expect(p50Fee).toBeLessThanOrEqual(p95Fee);
    expect(p95Fee).toBeLessThanOrEqual(p99Fee);
    [
      [p50Fee, ref.p50Fee],
      [p95Fee, ref.p95Fee],
      [p99Fee, ref.p99Fee],
    ].forEach(([a, e]) => {
      expect(a).toBeGreaterThanOrEqual(got.minFee);
      expect(a).toBeLessThanOrEqual(got.maxFee);
      expect(Math.abs(a! - e!) / Math.max(e!, 1)).toBeLessThan(0.35);
    });
  };

  it('one protocol over a range: exact totals and extremes, close percentiles; its one per-protocol item is the overall one', async () => {
    const range = { gte: FIXTURE_START, lte: FIXTURE_START + 2 * 86_400 - 1 };
    const { overall, protocols } = await s.operatorAnalytics.feeStats('jupiter_v6', range);
    expect(overall.protocolName).toBe('jupiter_v6');
    await check(['jupiter_v6'], overall, range);
    expect(protocols).toEqual([overall]);
  });

  it('all visible protocols together, and each protocol', async () => {
    const { overall, protocols } = await s.operatorAnalytics.feeStats(undefined, {});
    expect(overall.protocolName).toBeNull();
    await check(ACTIVE_PROTOCOLS, overall);
    expect(protocols.map((p) => p.protocolName)).toEqual(await oracle.activeProtocols(s));
    for (const p of protocols) await check([p.protocolName!], p);
    expect(protocols.reduce((n, p) => n + p.totalTransactions, 0)).toBe(overall.totalTransactions);
  });

  it('zeros for an empty range', async () => {
    expect((await s.operatorAnalytics.feeStats(undefined, { gte: 1000, lte: 2000 })).overall).toMatchObject({
      totalTransactions: 0,
      totalFees: 0,
      minFee: 0,
      maxFee: 0,
      p99Fee: 0,
    });
  });
});

describe('global statistics', () => {
  it('equal the base table over the visible protocols', async () => {
    const active = await oracle.activeProtocols(s);
    const { storage, ...got } = await s.operatorAnalytics.globalStats();
    expect(got).toEqual(close(await oracle.globalStats(s, active)));
    expect(storage.bytesOnDisk).toBeGreaterThan(0);
  });
});

describe('protocol registry', () => {
  it('activating a protocol makes its stored records visible', async () => {
    await expect(s.operatorAnalytics.protocolStats('meteora_dlmm')).rejects.toThrow();
    await s.registry.setActive('meteora_dlmm', true);
    s.analytics.invalidate();
    const stats = await s.operatorAnalytics.protocolStats('meteora_dlmm');
    expect(stats).toEqual(await oracle.protocolStats(s, 'meteora_dlmm'));
    expect(stats.totalTransactions).toBeGreaterThan(0);
    await s.registry.setActive('meteora_dlmm', false);
    await expect(s.operatorAnalytics.protocolStats('meteora_dlmm')).rejects.toThrow();
  });
});
