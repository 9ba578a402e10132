// getTransactionsForAddress: an address matches a record when it is one of its accounts or
// its program id. Each option and filter maps to the analytics request it means (whose
// figures analytics.test.ts checks against the oracle); the transactionDetails modes,
// limits, errors and paginationToken walks are checked here, the walks against the oracle
// (support/oracle.ts addressTransactions), in the listing's order (blockTime, then signature hash).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestRecord } from '../../ingest/record-schema.ts';
import { startApp } from '../support/services.ts';
import { b58, FIXTURE_END, FIXTURE_START, HOT, hotRecords, ingest, ingestDemo, PROGRAM_OF } from '../support/fixtures.ts';
import { ADDRESS_ORDER, addressTransactions, analyticsFilters, busiestAccount, countStored, type TxObject } from '../support/oracle.ts';
import { RpcClient } from '../support/rpc-client.ts';

let ctx: Awaited<ReturnType<typeof startApp>>;
let rpc: RpcClient;
let demoHot: string;

interface Page<T = TxObject> {
  data: T[];
  paginationToken: string | null;
  count?: number;
}

const { asc: ASC, desc: DESC } = ADDRESS_ORDER;

beforeAll(async () => {
  ctx = await startApp();
  rpc = await RpcClient.create(ctx.app);
  await ingestDemo(ctx.services, 3000);
  await ingest(ctx.services, hotRecords());
  // The busiest plain account of the demo data (Zipf-like popularity), not a program id.
  demoHot = await busiestAccount(ctx.services);
});
afterAll(async () => ctx?.cleanup());

const ref = (addr: string, where = '1', params: Record<string, unknown> = {}, order: string = ASC) =>
  addressTransactions(ctx.services, addr, where, params, order);
/** The analytics layer's records for an address listing, in wire form. */
/** The analytics listing for JSON-RPC's `filters`. */
const analyticsPage = async (address: string, filters: object, sortOrder: 'asc' | 'desc', limit: number) =>
  JSON.parse(
    JSON.stringify((await ctx.services.operatorAnalytics.addressTransactions({ address, filters: analyticsFilters(filters), sortOrder, limit })).data),
  ) as TxObject[];

describe('defaults and options', () => {
  it('defaults: full details, oldest first, 100 records', async () => {
    const expected = await ref(HOT);
    expect(expected.length).toBeGreaterThan(150);
    const page = await rpc.call<Page>('getTransactionsForAddress', [HOT]);
    expect(page.data).toEqual(expected.slice(0, 100));
    expect(typeof page.paginationToken).toBe('string');
    expect(await rpc.call('getTransactionsForAddress', [HOT, {}])).toEqual(page);
    expect(await rpc.call('getTransactionsForAddress', [HOT, null])).toEqual(page);
  });

  it('hides records of inactive protocols', async () => {
    const page = await rpc.call<Page>('getTransactionsForAddress', [HOT, { limit: 10_000 }]);
    expect(page.data.some((t) => t.protocolName === 'raydium_amm_v4')).toBe(false);
    expect(await countStored(ctx.services, "has(accounts, {a:String}) AND protocol_name = 'raydium_amm_v4'", { a: HOT })).toBeGreaterThan(0);
  });

  it('sortOrder desc', async () => {
    const page = await rpc.call<Page>('getTransactionsForAddress', [demoHot, { sortOrder: 'desc', limit: 30 }]);
    expect(page.data).toEqual((await ref(demoHot, '1', {}, DESC)).slice(0, 30));
  });

  it('a program id is an address: it matches every record of that program', async () => {
    const addr = PROGRAM_OF.whirlpool!;
    const page = await rpc.call<Page>('getTransactionsForAddress', [addr, { limit: 10_000 }]);
    const expected = await ref(addr);
    expect(expected.length).toBeGreaterThan(200);
    expect(page.data).toEqual(expected);
    expect(page.paginationToken).toBeNull();
  });

  it('limit 10000 (maximum) accepted, 10001 rejected, 0 rejected', async () => {
    expect((await rpc.call<Page>('getTransactionsForAddress', [demoHot, { limit: 10_000 }])).data).toEqual(await ref(demoHot));
    expect((await rpc.error('getTransactionsForAddress', [demoHot, { limit: 10_001 }])).data).toMatch(/options\.limit must be at most 10000/);
    expect((await rpc.error('getTransactionsForAddress', [demoHot, { limit: 0 }])).code).toBe(-32602);
  });

  it('transactionDetails "signatures": signature, instructionIndex, slot, blockTime and success only', async () => {
    const page = await rpc.call<Page<Record<string, unknown>>>('getTransactionsForAddress', [HOT, { transactionDetails: 'signatures', limit: 40 }]);
    const expected = (await ref(HOT))
      .slice(0, 40)
      .map((t) => ({ signature: t.signature, instructionIndex: t.instructionIndex, slot: t.slot, blockTime: t.blockTime, success: t.success }));
    expect(page.data).toEqual(expected);
    expect(typeof page.paginationToken).toBe('string');
  });

  it('transactionDetails "none": no records, the number of matching records in count', async () => {
    const page = await rpc.call<Page>('getTransactionsForAddress', [HOT, { transactionDetails: 'none' }]);
    expect(page).toEqual({ data: [], paginationToken: null, count: (await ref(HOT)).length });
    const filtered = await rpc.call<Page>('getTransactionsForAddress', [
      HOT,
      { transactionDetails: 'none', filters: { status: 'failed', protocols: ['pump_fun', 'jupiter_v6'] } },
    ]);
    expect(filtered.count).toBe((await ref(HOT, "NOT success AND protocol_name IN ('pump_fun', 'jupiter_v6')")).length);
    const sigs = [b58('hot-0', 88), b58('hot-25', 88), b58('hot-3', 88), b58('nope', 88)];
    const bySig = await rpc.call<Page>('getTransactionsForAddress', [HOT, { transactionDetails: 'none', filters: { signatures: sigs } }]);
    expect(bySig.count).toBe(4); // hot-0 and hot-25, two instructions each; hot-3 is hidden
  });

  it('an address with no records', async () => {
    expect(await rpc.call('getTransactionsForAddress', [b58('nobody', 44)])).toEqual({ data: [], paginationToken: null });
  });

  it.each([
    [['not base58!'], /address must be a Base58 address of 32-44 characters/],
    [[], /address \(params\[0\]\) is required/],
    [[42], /address must be string/],
    [[HOT, { filters: { instructionTypes: ['swap'] } }], /options\.filters\.instructionTypes is not an accepted field/],
    [[HOT, { transactionDetails: 'accounts' }], /options\.transactionDetails must be one of "full", "signatures", "none"/],
    [[HOT, { sortOrder: 'newest' }], /options\.sortOrder must be one of/],
    [[HOT, { filters: { status: 'pending' } }], /options\.filters\.status must be one of/],
    [[HOT, { filters: { protocols: ['drift_v2'] } }], /options\.filters\.protocols\[0\]: unknown protocol "drift_v2"/],
    [[HOT, { filters: { signatures: ['bad sig'] } }], /options\.filters\.signatures\[0\] must be a Base58 signature/],
    [[HOT, { paginationToken: 'WyJ4Il0' }], /paginationToken/],
    [[HOT, {}, {}], /getTransactionsForAddress takes at most 2 positional parameters \(address, options\)/],
  ])('-32602 for params %j', async (params, data) => {
    const e = await rpc.error('getTransactionsForAddress', params);
    expect(e).toMatchObject({ code: -32602, message: 'Invalid params' });
    expect(e.data).toMatch(data);
  });

  it('a getTransactions token is refused', async () => {
    const other = await rpc.call<Page>('getTransactions', [{ limit: 1 }]);
    expect((await rpc.error('getTransactionsForAddress', [HOT, { paginationToken: other.paginationToken }])).code).toBe(-32602);
  });
});

describe('filters, alone and combined', () => {
  // The figures of each filter are checked in analytics.test.ts; here each option's name
  // and value reach the analytics layer as the same filter.
  const mid = FIXTURE_START + 86_400 + 999;
  const cases: [string, object][] = [
    ['blockTime.gte', { blockTime: { gte: mid } }],
    ['blockTime.lte', { blockTime: { lte: mid } }],
    ['blockTime both', { blockTime: { gte: FIXTURE_START + 5000, lte: mid } }],
    ['status succeeded', { status: 'succeeded' }],
    ['status failed', { status: 'failed' }],
    ['status all', { status: 'all' }],
    ['protocols', { protocols: ['whirlpool', 'pump_amm'] }],
    ['programIds', { programIds: [PROGRAM_OF.jupiter_v6] }],
    ['signatures', { signatures: [b58('hot-0', 88), b58('hot-25', 88), b58('hot-3', 88), b58('hot-100', 88), b58('nope', 88)] }],
    [
      'all combined',
      {
        blockTime: { gte: FIXTURE_START + 5000, lte: FIXTURE_START + 170_000 },
        status: 'succeeded',
        protocols: ['jupiter_v6', 'pump_fun', 'whirlpool'],
        programIds: [PROGRAM_OF.pump_fun, PROGRAM_OF.whirlpool],
      },
    ],
  ];

  it.each(cases)('%s: the analytics listing for the same filter (HOT and the demo hot account)', async (label, filters) => {
    for (const addr of [HOT, demoHot]) {
      const unfiltered = (await ref(addr)).length;
      for (const sortOrder of ['asc', 'desc'] as const) {
        const expected = await analyticsPage(addr, filters, sortOrder, 10_000);
        // A filter the interface dropped would answer the whole set.
        if (label !== 'status all' && addr === HOT) expect(expected.length).toBeLessThan(unfiltered);
        const page = await rpc.call<Page>('getTransactionsForAddress', [addr, { filters, sortOrder, limit: 10_000 }]);
        expect(page.data).toEqual(expected);
      }
    }
  });
});

describe('pagination', () => {
  const walk = async (addr: string, options: Record<string, unknown>, limit: number, between?: (last: TxObject, round: number) => Promise<void>) => {
    const data: TxObject[] = [];
    let token: string | null = null;
    let round = 0;
    do {
      const page: Page = await rpc.call<Page>('getTransactionsForAddress', [addr, { ...options, limit, ...(token ? { paginationToken: token } : {}) }]);
      expect(page.data.length).toBeLessThanOrEqual(limit);
      data.push(...page.data);
      token = page.paginationToken;
      const last = page.data.at(-1);
      if (between && last && token) await between(last, round);
      round += 1;
      expect(round).toBeLessThan(1000);
    } while (token !== null);
    return data;
  };

  it.each([
    ['asc', ASC],
    ['desc', DESC],
  ] as const)('walking every page (%s) yields each record once, in order', async (sortOrder, order) => {
    expect(await walk(HOT, { sortOrder }, 7)).toEqual(await ref(HOT, '1', {}, order));
    expect(await walk(demoHot, { sortOrder }, 100)).toEqual(await ref(demoHot, '1', {}, order));
  });

  it('tells apart two instructions of one transaction by instructionIndex', async () => {
    const addr = b58('two-instructions', 44);
    const [base] = hotRecords('twoix', 1);
    await ingest(
      ctx.services,
      [0, 3].map((i) => ({ ...base!, instruction_index: i, accounts: [addr] })),
    );
    for (const transactionDetails of ['full', 'signatures'] as const) {
      const page = await rpc.call<Page<{ signature: string; instructionIndex: number }>>('getTransactionsForAddress', [addr, { transactionDetails }]);
      expect(page.data.map((t) => [t.signature, t.instructionIndex])).toEqual([
        [base!.signature, 0],
        [base!.signature, 3],
      ]);
    }
  });

  it('signatures-only pages walk the same records', async () => {
    const data = await walk(HOT, { transactionDetails: 'signatures', filters: { status: 'succeeded' } }, 11);
    expect(data.map((t) => t.signature)).toEqual((await ref(HOT, 'success')).map((t) => t.signature));
  });

  it('a half-stored record (a reference without its record) neither shows nor cuts a page', async () => {
    // Pages read ids from tx_by_address_v2 and records from tx_by_rid (110): the state a read
    // between the commits of the two tables sees, or a crash leaves, is an address row
    // without its record; it is passed over.
    const addr = b58('inflight-address', 44);
    await ingest(
      ctx.services,
      hotRecords('infl', 20).map((r) => ({ ...r, accounts: [addr] })),
    );
    const before = await ref(addr);
    const wh = ctx.services.wh;
    // An id just after (or before) a stored record's, at a position no record holds.
    const orphan = async (signature: string, blockTime: number) =>
      wh.exec(
        `INSERT INTO tx_by_address_v2 (address_key, rid, block_time, program_id, protocol_name, success)
       SELECT reinterpretAsUInt128(sipHash128({a:String})), bitOr(bitAnd(rid, bitNot(toUInt64(1073741823))), {pos:UInt64}), toDateTime({bt:UInt32}, 'UTC'), {p:String}, 'jupiter_v6', true
       FROM transactions WHERE signature = {s:String} AND instruction_index = 0`,
        { params: { a: addr, bt: blockTime, s: signature, pos: 131_000 * 8192, p: PROGRAM_OF.jupiter_v6 } },
      );
    await orphan(before[5]!.signature, before[5]!.blockTime);
    await orphan(before[15]!.signature, before[15]!.blockTime);

    const page1 = await rpc.call<Page>('getTransactionsForAddress', [addr, { limit: 10 }]);
    expect(page1.data).toEqual(before.slice(0, 10));
    for (const sortOrder of ['asc', 'desc'] as const) {
      expect(await walk(addr, { sortOrder }, 10)).toEqual(await ref(addr, '1', {}, sortOrder === 'asc' ? ASC : DESC));
    }
  });

  it('records landing between pages: no skips, no repeats; only records ahead of the cursor appear', async () => {
    const addr = b58('live-address', 44);
    // Slots follow time here, as on the chain: pages are in ledger order (slot, then position).
    await ingest(
      ctx.services,
      hotRecords('live', 120).map((r) => ({ ...r, slot: r.block_time, accounts: [addr] })),
    );
    const before = await ref(addr);
    const inserted: { record: IngestRecord; after: TxObject }[] = [];
    const data = await walk(addr, {}, 9, async (last, round) => {
      const mk = (label: string, blockTime: number): IngestRecord => ({
        signature: b58(`landing-${round}-${label}`, 88),
        slot: blockTime,
        block_time: blockTime,
        program_id: PROGRAM_OF.pump_fun!,
        protocol_name: 'pump_fun',
        instruction_type: 'buy',
        fee: 7000,
        compute_units: 31_000 + round,
        accounts: [addr],
        success: round % 2 === 0,
      });
      const batch = [mk('later', last.blockTime + 3600), mk('earlier', last.blockTime - 60), mk('same-second', last.blockTime)];
      await ingest(ctx.services, batch);
      inserted.push(...batch.map((record) => ({ record, after: last })));
    });
    const keys = data.map((t) => `${t.signature}|${t.computeUnits}`);
    expect(new Set(keys).size).toBe(keys.length);
    const seen = new Set(keys);
    for (const t of before) expect(seen.has(`${t.signature}|${t.computeUnits}`)).toBe(true);
    for (const { record, after } of inserted) {
      const isSeen = seen.has(`${record.signature}|${record.compute_units}`);
      if (record.block_time > after.blockTime) expect(isSeen).toBe(true);
      if (record.block_time < after.blockTime) expect(isSeen).toBe(false);
    }
    for (let i = 1; i < data.length; i++) expect(data[i]!.blockTime).toBeGreaterThanOrEqual(data[i - 1]!.blockTime);
    expect(data.length).toBeGreaterThan(before.length);
  });
});

describe("a hot address's whole history, page by page, against the reference (issue 15)", () => {
  // Every page of every listing below is compared with support/oracle.ts, which reads the
  // base table alone: whatever table or shared read serves pages, the answers are the same.
  const walk = async (addr: string, options: Record<string, unknown>, limit: number): Promise<TxObject[]> => {
    const data: TxObject[] = [];
    let token: string | null = null;
    for (let round = 0; ; round++) {
      expect(round).toBeLessThan(2000);
      const page: Page = await rpc.call<Page>('getTransactionsForAddress', [addr, { ...options, limit, ...(token ? { paginationToken: token } : {}) }]);
      expect(page.data.length).toBeLessThanOrEqual(limit);
      data.push(...page.data);
      token = page.paginationToken;
      if (token === null) return data;
      expect(page.data.length).toBe(limit); // only the last page is short
    }
  };
  const mid = FIXTURE_START + 86_400 + 999;
  const filterCases: [string, Record<string, unknown>, string, Record<string, unknown>][] = [
    ['no filters', {}, '1', {}],
    ['blockTime gte (after)', { blockTime: { gte: mid } }, "block_time >= toDateTime({t:UInt32}, 'UTC')", { t: mid }],
    ['blockTime lte (before)', { blockTime: { lte: mid } }, "block_time <= toDateTime({t:UInt32}, 'UTC')", { t: mid }],
    [
      'blockTime both, failed only',
      { blockTime: { gte: FIXTURE_START + 5000, lte: mid }, status: 'failed' },
      "block_time BETWEEN toDateTime({a:UInt32}, 'UTC') AND toDateTime({b:UInt32}, 'UTC') AND NOT success",
      { a: FIXTURE_START + 5000, b: mid },
    ],
    [
      'protocols and programIds',
      { protocols: ['jupiter_v6', 'pump_fun', 'whirlpool'], programIds: [PROGRAM_OF.pump_fun, PROGRAM_OF.whirlpool] },
      "protocol_name IN ('jupiter_v6', 'pump_fun', 'whirlpool') AND program_id IN {p:Array(String)}",
      { p: [PROGRAM_OF.pump_fun, PROGRAM_OF.whirlpool] },
    ],
    [
      'signatures',
      { signatures: [b58('hot-0', 88), b58('hot-25', 88), b58('hot-3', 88), b58('hot-100', 88), b58('hot-249', 88), b58('nope', 88)] },
      'signature IN {s:Array(String)}',
      { s: [b58('hot-0', 88), b58('hot-25', 88), b58('hot-3', 88), b58('hot-100', 88), b58('hot-249', 88)] },
    ],
  ];

  it.each(filterCases)('%s: every page, both orders, limits 1, 7 and 100, equals the reference', async (_label, filters, where, params) => {
    for (const [sortOrder, order] of [
      ['asc', ASC],
      ['desc', DESC],
    ] as const) {
      const expected = await ref(HOT, where, params, order);
      expect(expected.length).toBeGreaterThan(0);
      for (const limit of [1, 7, 100]) expect(await walk(HOT, { filters, sortOrder }, limit)).toEqual(expected);
      // Signatures-only pages: the same records, four fields each.
      expect(await walk(HOT, { filters, sortOrder, transactionDetails: 'signatures' }, 13)).toEqual(
        expected.map((t) => ({ signature: t.signature, instructionIndex: t.instructionIndex, slot: t.slot, blockTime: t.blockTime, success: t.success })),
      );
    }
  });

  it("the demo data's busiest account and a program id: every page of 100 in both orders", async () => {
    for (const addr of [demoHot, PROGRAM_OF.pump_fun!]) {
      for (const [sortOrder, order] of [
        ['asc', ASC],
        ['desc', DESC],
      ] as const) {
        const expected = await ref(addr, '1', {}, order);
        expect(expected.length).toBeGreaterThan(100);
        expect(await walk(addr, { sortOrder }, 100)).toEqual(expected);
      }
    }
  });

  it('concurrent identical requests (one shared read) each get the reference page', async () => {
    const expected = (await ref(HOT)).slice(0, 50);
    const pages = await Promise.all(Array.from({ length: 12 }, () => rpc.call<Page>('getTransactionsForAddress', [HOT, { limit: 50 }])));
    for (const p of pages) expect(p.data).toEqual(expected);
  });

  it('a request made after a record is stored sees it, even while an identical read is in flight', async () => {
    const addr = b58('shared-read-address', 44);
    await ingest(
      ctx.services,
      hotRecords('shared', 30).map((r) => ({ ...r, accounts: [addr] })),
    );
    const earlier = rpc.call<Page>('getTransactionsForAddress', [addr, { sortOrder: 'desc', limit: 5 }]);
    const newest: IngestRecord = {
      signature: b58('shared-newest', 88),
      slot: 600_000_000,
      block_time: FIXTURE_END - 1,
      program_id: PROGRAM_OF.pump_fun!,
      protocol_name: 'pump_fun',
      instruction_type: 'buy',
      fee: 5000,
      compute_units: 1000,
      accounts: [addr],
      success: true,
    };
    await ingest(ctx.services, [newest]);
    const later = await rpc.call<Page>('getTransactionsForAddress', [addr, { sortOrder: 'desc', limit: 5 }]);
    expect(later.data[0]).toMatchObject({ signature: newest.signature });
    expect(later.data).toEqual((await ref(addr, '1', {}, DESC)).slice(0, 5));
    await earlier;
  });
});
