// getTransaction and getTransactions over JSON-RPC: every option and filter maps to the
// analytics request it means (the listings equal the analytics layer's, whose figures
// analytics.test.ts checks against the oracle), limits, errors, and keyset pagination by
// paginationToken (also while records land between pages), walked against the oracle.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestRecord } from '../../ingest/record-schema.ts';
import { startApp } from '../support/services.ts';
import { ACTIVE_PROTOCOLS, b58, FIXTURE_END, FIXTURE_START, hotRecords, ingest, ingestDemo, PROGRAM_OF } from '../support/fixtures.ts';
import { analyticsFilters, LISTING_ORDER, transactionsWhere, type TxObject } from '../support/oracle.ts';
import { RpcClient } from '../support/rpc-client.ts';

let ctx: Awaited<ReturnType<typeof startApp>>;
let rpc: RpcClient;

interface Page {
  data: TxObject[];
  paginationToken: string | null;
}

const { desc: DESC, asc: ASC } = LISTING_ORDER;
/** The analytics layer's page for a listing request, in wire form ({data, paginationToken}). */
/** The analytics listing for JSON-RPC's `filters`. */
const analyticsPage = async (filters: object, sortOrder: 'asc' | 'desc', limit: number) => {
  const p = await ctx.services.operatorAnalytics.transactions({ filters: analyticsFilters(filters), sortOrder, limit });
  return JSON.parse(JSON.stringify(p.data)) as TxObject[];
};

beforeAll(async () => {
  ctx = await startApp();
  rpc = await RpcClient.create(ctx.app);
  await ingestDemo(ctx.services, 3000);
  await ingest(ctx.services, hotRecords());
});
afterAll(async () => ctx?.cleanup());

const all = (where = '1', params: Record<string, unknown> = {}, order: string = DESC) => transactionsWhere(ctx.services, where, params, order);

describe('getTransaction', () => {
  it('returns the analytics record under the field names of SPEC, slot as a string', async () => {
    const [ref] = await all('instruction_index = 0 AND NOT success', {}, ASC);
    const got = await rpc.call<TxObject>('getTransaction', [ref!.signature]);
    expect(got).toEqual(JSON.parse(JSON.stringify(await ctx.services.operatorAnalytics.transaction(ref!.signature))));
    expect(got.signature).toBe(ref!.signature);
    expect(typeof got.slot).toBe('string');
    expect(Object.keys(got).sort()).toEqual([
      'accountsCount',
      'blockTime',
      'computeUnits',
      'fee',
      'instructionType',
      'programId',
      'protocolName',
      'signature',
      'slot',
      'success',
    ]);
  });

  it('is a null result (not an error) for an unknown signature and for a record of an inactive protocol', async () => {
    expect(await rpc.answer('getTransaction', [b58('never-stored', 88)])).toMatchObject({ result: null });
    expect(await rpc.answer('getTransaction', [b58('hot-3', 88)])).toMatchObject({ result: null }); // raydium_amm_v4, inactive
  });

  it('answers many concurrent lookups each with its own record (they share engine queries)', async () => {
    const refs = await all('instruction_index = 0', {}, ASC);
    // 16 at once: the enterprise key's cap on requests in flight (PLAN_CONCURRENCY).
    const known = refs.filter((_, i) => i % 37 === 0).slice(0, 12);
    const asked = [...known.map((r) => r.signature), b58('never-stored', 88), b58('hot-3', 88), known[0]!.signature, b58('hot-25', 88)];
    const expected = [...known, null, null, known[0], (await all('signature = {s:String}', { s: b58('hot-25', 88) }, 'instruction_index'))[0]];
    const got = await Promise.all(asked.map((s) => rpc.call('getTransaction', [s])));
    expect(got).toEqual(expected);
  });

  it('sends lookups that arrive while one is in flight as one query', async () => {
    const { SignatureLookup } = await import('../../api/analytics/records/signature-lookup.ts');
    let queries = 0;
    const wh = ctx.services.wh;
    const counting = {
      ...wh,
      query: <T>(sql: string, o?: Parameters<typeof wh.query>[1]) => {
        queries += 1;
        return wh.query<T>(sql, o);
      },
    } as typeof wh;
    const lookup = new SignatureLookup({ maxInFlight: 1, maxBatch: 200 });
    const refs = (await all('instruction_index = 0', {}, ASC)).slice(0, 50);
    const active = new Set(ACTIVE_PROTOCOLS);
    const got = await Promise.all(refs.map((r) => lookup.find(counting, r.signature, active)));
    expect(got).toEqual(refs);
    expect(queries).toBe(2); // the first alone, the 49 queued behind it together
  });

  it.each([
    ['not Base58', ['0OIl-not-base58'], /signature must be a Base58 signature of 64-88 characters/],
    ['too short', ['5'.repeat(63)], /signature must be a Base58 signature/],
    ['a number', [12345], /signature must be string/],
    ['missing', [], /signature \(params\[0\]\) is required/],
    ['no params at all', undefined, /signature \(params\[0\]\) is required/],
  ])('-32602 when the signature is %s', async (_label, params, data) => {
    const e = await rpc.error('getTransaction', params);
    expect(e).toMatchObject({ code: -32602, message: 'Invalid params' });
    expect(e.data).toMatch(data);
  });
});

describe('getTransactions defaults and options', () => {
  it('defaults: 100 records, newest first (the analytics listing), with a token', async () => {
    const page = await rpc.call<Page>('getTransactions');
    expect(page.data).toEqual(await analyticsPage({}, 'desc', 100));
    expect(typeof page.paginationToken).toBe('string');
    expect(await rpc.call<Page>('getTransactions', [{}])).toEqual(page);
    expect(await rpc.call<Page>('getTransactions', [null])).toEqual(page);
  });

  it('sortOrder asc and desc', async () => {
    expect((await rpc.call<Page>('getTransactions', [{ sortOrder: 'asc', limit: 50 }])).data).toEqual(await analyticsPage({}, 'asc', 50));
    expect((await rpc.call<Page>('getTransactions', [{ sortOrder: 'desc', limit: 50 }])).data).toEqual(await analyticsPage({}, 'desc', 50));
  });

  it('limit: 1 and 10000 (the maximum) accepted; the whole visible set fits in one page', async () => {
    expect((await rpc.call<Page>('getTransactions', [{ limit: 1 }])).data).toEqual(await analyticsPage({}, 'desc', 1));
    const everything = await all();
    expect(everything.length).toBeGreaterThan(2500);
    const page = await rpc.call<Page>('getTransactions', [{ limit: 10_000 }]);
    expect(page.data).toEqual(everything);
    expect(page.paginationToken).toBeNull();
  });

  it.each([
    [{ limit: 10_001 }, /options\.limit must be at most 10000 \(got 10001\)/],
    [{ limit: 0 }, /options\.limit must be at least 1/],
    [{ limit: 2.5 }, /options\.limit must be integer/],
    [{ limit: '10' }, /options\.limit must be integer/],
    [{ sortOrder: 'up' }, /options\.sortOrder must be one of "asc", "desc"/],
    [{ paginationToken: 'garbage' }, /paginationToken/],
    [{ pageSize: 5 }, /options\.pageSize is not an accepted field/],
    [{ filters: { status: 'ok' } }, /options\.filters\.status must be one of "succeeded", "failed", "all" \(got "ok"\)/],
    [{ filters: { protocols: ['nope_v1'] } }, /options\.filters\.protocols\[0\]: unknown protocol "nope_v1"/],
    [{ filters: { protocols: ['jupiter_v6', 'raydium_amm_v4'] } }, /options\.filters\.protocols\[1\]: unknown protocol "raydium_amm_v4"/],
    [{ filters: { signatures: ['0OIl'] } }, /options\.filters\.signatures\[0\] must be a Base58 signature/],
    [{ filters: { signatures: [] } }, /options\.filters\.signatures must not be empty/],
    [{ filters: { signatures: Array.from({ length: 1001 }, (_, i) => b58(`s${i}`, 88)) } }, /at most 1000 items/],
    [{ filters: { programIds: ['not/base58'] } }, /options\.filters\.programIds\[0\] must be a Base58 address/],
    [{ filters: { blockTime: { gte: 10, lte: 5 } } }, /options\.filters\.blockTime\.gte must not be later than/],
    [{ filters: { blockTime: { from: 10 } } }, /options\.filters\.blockTime\.from is not an accepted field/],
    [{ filters: { blockTime: { gte: -1 } } }, /options\.filters\.blockTime\.gte must be at least 0/],
    [{ filters: { blockTime: { gte: 1.5 } } }, /options\.filters\.blockTime\.gte must be a whole number/],
    [{ filters: { memo: 'x' } }, /options\.filters\.memo is not an accepted field/],
  ])('-32602 for %j', async (options, data) => {
    const e = await rpc.error('getTransactions', [options]);
    expect(e).toMatchObject({ code: -32602, message: 'Invalid params' });
    expect(e.data).toMatch(data);
  });

  it('list sizes: 1000 signatures and 100 protocols accepted, 101 protocols refused', async () => {
    const known = (await all('1', {}, ASC)).slice(0, 900).map((t) => t.signature);
    const sigs = [...new Set(known)];
    const padded = [...sigs, ...Array.from({ length: 1000 - sigs.length }, (_, i) => b58(`pad-${i}`, 88))];
    expect(padded).toHaveLength(1000);
    const page = await rpc.call<Page>('getTransactions', [{ filters: { signatures: padded }, limit: 10_000 }]);
    expect(page.data).toEqual(await all('signature IN {s:Array(String)}', { s: sigs }));
    const hundred = Array.from({ length: 100 }, (_, i) => ACTIVE_PROTOCOLS[i % ACTIVE_PROTOCOLS.length]!);
    expect((await rpc.call<Page>('getTransactions', [{ filters: { protocols: hundred }, limit: 5 }])).data).toEqual((await all()).slice(0, 5));
    const e = await rpc.error('getTransactions', [{ filters: { protocols: [...hundred, 'pump_fun'] } }]);
    expect(e.data).toMatch(/options\.filters\.protocols must hold at most 100 items/);
  });

  it('a token of another listing is refused', async () => {
    const addressPage = await rpc.call<Page>('getTransactionsForAddress', [PROGRAM_OF.jupiter_v6, { limit: 1 }]);
    expect(addressPage.paginationToken).toEqual(expect.any(String));
    const e = await rpc.error('getTransactions', [{ paginationToken: addressPage.paginationToken }]);
    expect(e.code).toBe(-32602);
  });
});

describe('getTransactions filters, alone and combined', () => {
  // The figures of each filter are checked in analytics.test.ts; here each option's name
  // and value reach the analytics layer as the same filter.
  const mid = FIXTURE_START + 86_400 + 1234;
  const late = FIXTURE_END - 40_000;
  const someSigs = async (): Promise<string[]> => {
    const rows = await all('1', {}, ASC);
    return [rows[5]!.signature, rows[500]!.signature, rows[1500]!.signature, b58('hot-25', 88), b58('hot-3', 88), b58('never-stored', 88)];
  };
  const cases: [string, () => Promise<object>][] = [
    ['blockTime.gte', async () => ({ blockTime: { gte: mid } })],
    ['blockTime.lte', async () => ({ blockTime: { lte: mid } })],
    ['blockTime both', async () => ({ blockTime: { gte: mid, lte: late } })],
    ['blockTime one second', async () => ({ blockTime: { gte: FIXTURE_START + 17, lte: FIXTURE_START + 17 } })],
    ['status succeeded', async () => ({ status: 'succeeded' })],
    ['status failed', async () => ({ status: 'failed' })],
    ['status all', async () => ({ status: 'all' })],
    ['protocols', async () => ({ protocols: ['pump_fun', 'whirlpool'] })],
    ['programIds', async () => ({ programIds: [PROGRAM_OF.jupiter_v6, PROGRAM_OF.pump_amm] })],
    ['programIds of an inactive protocol', async () => ({ programIds: [PROGRAM_OF.raydium_amm_v4] })],
    ['instructionTypes', async () => ({ instructionTypes: ['buy', 'route', 'claim'] })],
    ['signatures', async () => ({ signatures: await someSigs() })],
    [
      'all combined',
      async () => ({
        blockTime: { gte: FIXTURE_START + 3600, lte: late },
        status: 'failed',
        protocols: ['pump_fun', 'jupiter_v6', 'whirlpool'],
        programIds: [PROGRAM_OF.pump_fun, PROGRAM_OF.whirlpool],
        instructionTypes: ['buy', 'sell', 'swap'],
      }),
    ],
    [
      'signatures combined with status and protocols',
      async () => ({ signatures: await someSigs(), status: 'succeeded', protocols: ACTIVE_PROTOCOLS.slice(1) }),
    ],
  ];

  it.each(cases)('%s: the analytics listing for the same filter', async (label, make) => {
    const filters = await make();
    const unfiltered = (await analyticsPage({}, 'desc', 10_000)).length;
    for (const sortOrder of ['desc', 'asc'] as const) {
      const expected = await analyticsPage(filters, sortOrder, 10_000);
      // A filter the interface dropped would answer the whole set.
      if (label !== 'status all') expect(expected.length).toBeLessThan(unfiltered);
      const page = await rpc.call<Page>('getTransactions', [{ filters, sortOrder, limit: 10_000 }]);
      expect(page.data).toEqual(expected);
      expect(page.paginationToken).toBeNull();
    }
  });
});

describe('getTransactions pagination', () => {
  const walk = async (options: Record<string, unknown>, limit: number): Promise<{ data: TxObject[]; pages: number }> => {
    const data: TxObject[] = [];
    let token: string | null = null;
    let pages = 0;
    do {
      const page: Page = await rpc.call<Page>('getTransactions', [{ ...options, limit, ...(token ? { paginationToken: token } : {}) }]);
      expect(page.data.length).toBeLessThanOrEqual(limit);
      data.push(...page.data);
      token = page.paginationToken;
      pages += 1;
      expect(pages).toBeLessThan(1000);
    } while (token !== null);
    return { data, pages };
  };

  it.each([
    ['desc', DESC],
    ['asc', ASC],
  ] as const)('walking every page (%s) yields each record exactly once, in order', async (sortOrder, order) => {
    const expected = await all('1', {}, order);
    const { data, pages } = await walk({ sortOrder }, 97);
    expect(pages).toBe(Math.ceil(expected.length / 97) + (expected.length % 97 === 0 ? 1 : 0));
    expect(data).toEqual(expected);
  });

  it('pages of a filtered listing', async () => {
    const filters = { status: 'failed', protocols: ['pump_fun', 'jupiter_v6', 'whirlpool'] };
    const expected = await all("NOT success AND protocol_name IN ('pump_fun', 'jupiter_v6', 'whirlpool')");
    const { data } = await walk({ filters }, 13);
    expect(data).toEqual(expected);
  });

  it('records landing between pages: nothing skipped or repeated; new records behind the cursor are served once', async () => {
    const before = await all();
    const seen: TxObject[] = [];
    const inserted: { record: IngestRecord; after: TxObject }[] = [];
    let token: string | null = null;
    let round = 0;
    do {
      const page: Page = await rpc.call<Page>('getTransactions', [{ limit: 50, ...(token ? { paginationToken: token } : {}) }]);
      seen.push(...page.data);
      token = page.paginationToken;
      const last = page.data.at(-1);
      if (last && round < 30) {
        // Around the cursor: newer than everything, just older than the cursor, and at the
        // cursor's very second with signatures sorting either side of it.
        const mk = (label: string, blockTime: number, signature = b58(`live-${round}-${label}`, 88)): IngestRecord => ({
          signature,
          slot: 400_000_000 + round,
          block_time: blockTime,
          program_id: PROGRAM_OF.jupiter_v6!,
          protocol_name: 'jupiter_v6',
          instruction_type: 'route',
          fee: 5000,
          compute_units: 100_000 + round,
          accounts: [b58('live', 44)],
          success: true,
        });
        const batch = [
          mk('newest', FIXTURE_END + 1000 + round),
          mk('older', Math.max(FIXTURE_START, last.blockTime - 7)),
          mk('same-low', last.blockTime, `1${b58(`live-${round}-lo`, 87)}`),
          mk('same-high', last.blockTime, `z${b58(`live-${round}-hi`, 87)}`),
        ];
        await ingest(ctx.services, batch);
        inserted.push(...batch.map((record) => ({ record, after: last })));
      }
      round += 1;
    } while (token !== null);

    const keys = seen.map((t) => `${t.signature}|${t.computeUnits}`);
    expect(new Set(keys).size).toBe(keys.length); // no repeats
    const seenKeys = new Set(keys);
    for (const t of before) expect(seenKeys.has(`${t.signature}|${t.computeUnits}`)).toBe(true); // no skips
    // A record inserted after a page was served appears iff it sorts after that page's last
    // record (descending by blockTime, then signature): keyset semantics, exactly.
    let extra = 0;
    for (const { record: r, after } of inserted) {
      const isSeen = seenKeys.has(`${r.signature}|${r.compute_units}`);
      const behind = r.block_time < after.blockTime || (r.block_time === after.blockTime && r.signature < after.signature);
      expect(isSeen, `${r.signature} at ${r.block_time} vs cursor ${after.blockTime}`).toBe(behind);
      if (isSeen) extra += 1;
    }
    expect(seen.length).toBe(before.length + extra);
    expect(extra).toBeGreaterThan(0);
    // Order is still strictly descending by (blockTime, signature) across all pages.
    for (let i = 1; i < seen.length; i++) {
      const a = seen[i - 1]!;
      const b = seen[i]!;
      expect(a.blockTime > b.blockTime || (a.blockTime === b.blockTime && a.signature >= b.signature)).toBe(true);
    }
  });
});
