// The public system's GraphQL names, accepted beside ours (issue 38, item 7): the metrics
// SUM_ACCOUNTS_COUNT and AVG_ACCOUNTS_COUNT (node fields sumAccountsCount, avgAccountsCount)
// answer what SUM_ACCOUNTS and AVG_ACCOUNTS answer, which stay, marked deprecated; and the
// range filters take BigInt bounds, a string or a number, compared exactly up to 2^64-1 (a
// bound rounded through a double cannot tell 2^64-1 from 2^64-2).
import { describe, expect, it } from 'vitest';
import { addRanges, type Conditions } from '../../api/analytics/question/model.ts';
import { parseBigIntLiteral, parseBigIntValue } from '../../api/doors/graphql/bigint-scalar.ts';
import { parseValue } from 'graphql';
import { b58, FIXTURE_START, PROGRAM_OF } from '../support/fixtures.ts';
import { BASE_COLUMNS } from '../../warehouse/tables.ts';
import { dataOf } from '../support/graphql-client.ts';
import { graphqlFixture } from '../support/graphql-fixture.ts';

const { t, gql } = graphqlFixture(600);
const sql = <T>(text: string, params: Record<string, unknown> = {}) => t().services.wh.query<T>(text, { params });

/** Slots a double cannot tell apart: 2^64-1 and 2^64-2 both round to 2^64, 2^53+1 to 2^53. */
const HUGE_SLOTS = ['18446744073709551615', '18446744073709551614', '9007199254740993', '9007199254740992'] as const;

async function ingestHugeSlots(): Promise<void> {
  const records = HUGE_SLOTS.map((slot, i) => ({
    signature: b58(`huge-slot-${i}`, 88),
    slot,
    block_time: FIXTURE_START + 3600 + i,
    program_id: PROGRAM_OF.jupiter_v6!,
    protocol_name: 'jupiter_v6',
    instruction_type: 'route',
    fee: 5000 + i,
    compute_units: 100_000,
    accounts_count: 3,
    success: true,
  }));
  // Ingest refuses slots past the record id's (docs/ingest-record-id.md); a store holds such
  // slots from before migration 110, so they are written into the base table directly.
  const lines = records.map((r, i) => JSON.stringify({ ...r, transaction_index: i })).join('\n');
  await t().services.wh.insertBytes('transactions', Buffer.from(lines), 'JSONEachRow', { columns: BASE_COLUMNS });
}

describe("metrics under the public system's names", () => {
  it('SUM_ACCOUNTS_COUNT and AVG_ACCOUNTS_COUNT answer in sumAccountsCount and avgAccountsCount, equal to the base table and to the older names', async () => {
    const d = await dataOf(
      gql(`{
      peer: transactions(groupBy: [PROTOCOL], metrics: [COUNT, SUM_ACCOUNTS_COUNT, AVG_ACCOUNTS_COUNT], sort: { field: SUM_ACCOUNTS_COUNT, direction: DESC }) {
        nodes { protocol count sumAccountsCount avgAccountsCount sumAccounts avgAccounts } }
      ours: transactions(groupBy: [PROTOCOL], metrics: [COUNT, SUM_ACCOUNTS, AVG_ACCOUNTS], sort: { field: SUM_ACCOUNTS, direction: DESC }) {
        nodes { protocol count sumAccountsCount avgAccountsCount sumAccounts avgAccounts } } }`),
    );
    const ref = await sql<{ p: string; n: string; s: string }>(
      `SELECT protocol_name AS p, count() AS n, sum(accounts_count) AS s FROM transactions WHERE protocol_name IN {a:Array(String)} GROUP BY p`,
      { a: await t().services.registry.activeNames() },
    );
    const want = ref.map((r) => ({ protocol: r.p, count: Number(r.n), sum: Number(r.s) })).sort((a, b) => b.sum - a.sum || (a.protocol < b.protocol ? 1 : -1));
    expect(want.length).toBeGreaterThan(1);
    type N = { protocol: string; count: number; sumAccountsCount: number; avgAccountsCount: number; sumAccounts: number; avgAccounts: number };
    for (const nodes of [d.peer.nodes, d.ours.nodes] as N[][]) {
      expect(nodes.map((n) => n.protocol)).toEqual(want.map((w) => w.protocol));
      for (const [i, n] of nodes.entries()) {
        // One metric, two names: both fields carry it whichever name asked.
        expect([n.sumAccountsCount, n.sumAccounts]).toEqual([want[i]!.sum, want[i]!.sum]);
        expect(n.avgAccountsCount).toBe(want[i]!.sum / want[i]!.count);
        expect(n.avgAccounts).toBe(n.avgAccountsCount);
      }
    }
  });

  it('timeSeries labels each series with the name the request used', async () => {
    const d = await dataOf(
      gql(
        `{ timeSeries(filters: { dateRange: { start: "2024-12-29", end: "2024-12-29" } }, bucketBy: DAY, metrics: [AVG_ACCOUNTS_COUNT, SUM_ACCOUNTS]) { value label } }`,
      ),
    );
    expect(d.timeSeries.map((p: { label: string }) => p.label)).toEqual(['all:AVG_ACCOUNTS_COUNT', 'all:SUM_ACCOUNTS']);
    expect(d.timeSeries[1].value).toBeGreaterThan(0);
  });

  it('refuses one metric named twice, once under each name', async () => {
    const r = await gql('{ transactions(metrics: [SUM_ACCOUNTS, SUM_ACCOUNTS_COUNT]) { nodes { count } } }');
    expect(r.body.errors?.[0]).toMatchObject({
      message: 'metrics[1]: SUM_ACCOUNTS_COUNT is the metric SUM_ACCOUNTS names; name it once',
      extensions: { code: 'BAD_USER_INPUT' },
    });
  });

  it("marks the older names deprecated, with a reason naming the new one; SPEC's metric names are not deprecated", async () => {
    const d = await dataOf(
      gql(`{
      metric: __type(name: "Metric") { enumValues(includeDeprecated: true) { name isDeprecated deprecationReason } }
      sort: __type(name: "SortField") { enumValues(includeDeprecated: true) { name isDeprecated deprecationReason } }
      node: __type(name: "TransactionNode") { fields(includeDeprecated: true) { name isDeprecated deprecationReason } } }`),
    );
    type V = { name: string; isDeprecated: boolean; deprecationReason: string | null };
    for (const values of [d.metric.enumValues, d.sort.enumValues] as V[][]) {
      const by = new Map(values.map((v) => [v.name, v]));
      expect(by.get('SUM_ACCOUNTS')).toMatchObject({
        isDeprecated: true,
        deprecationReason: expect.stringMatching(/^Use SUM_ACCOUNTS_COUNT \(node field sumAccountsCount\)/),
      });
      expect(by.get('AVG_ACCOUNTS')).toMatchObject({
        isDeprecated: true,
        deprecationReason: expect.stringMatching(/^Use AVG_ACCOUNTS_COUNT \(node field avgAccountsCount\)/),
      });
      for (const name of [
        'SUM_ACCOUNTS_COUNT',
        'AVG_ACCOUNTS_COUNT',
        'COUNT',
        'AVG_FEE',
        'MIN_FEE',
        'MAX_FEE',
        'P50_FEE',
        'P95_FEE',
        'P99_FEE',
        'SUM_FEE',
        'P95_COMPUTE_UNITS',
      ]) {
        expect(by.get(name), name).toMatchObject({ isDeprecated: false });
      }
      expect(values.filter((v) => v.isDeprecated).map((v) => v.name)).toEqual(['SUM_ACCOUNTS', 'AVG_ACCOUNTS']);
    }
    const fields = new Map((d.node.fields as V[]).map((f) => [f.name, f]));
    expect(fields.get('sumAccounts')).toMatchObject({ isDeprecated: true, deprecationReason: expect.stringContaining('SUM_ACCOUNTS_COUNT') });
    expect(fields.get('avgAccounts')).toMatchObject({ isDeprecated: true, deprecationReason: expect.stringContaining('AVG_ACCOUNTS_COUNT') });
    expect(fields.get('sumAccountsCount')).toMatchObject({ isDeprecated: false });
    expect(fields.get('avgAccountsCount')).toMatchObject({ isDeprecated: false });
  });
});

describe('BigInt range bounds', () => {
  it("takes a client's filters with bounds as strings (the public system's form) and as numbers, alike", async () => {
    const query = 'query($f: TransactionFilters) { transactions(filters: $f, metrics: [COUNT]) { nodes { count } } }';
    const [low] = await sql<{ s: string }>('SELECT toString(quantileExact(0.3)(slot)) AS s FROM transactions');
    const asText = { slotRange: { min: low!.s }, feeRange: { min: '5000', max: '2000000000' }, computeRange: { max: '1400000' } };
    const asNumbers = { slotRange: { min: Number(low!.s) }, feeRange: { min: 5000, max: 2_000_000_000 }, computeRange: { max: 1_400_000 } };
    const [a, b] = [await dataOf(gql(query, { f: asText })), await dataOf(gql(query, { f: asNumbers }))];
    const [ref] = await sql<{ n: string }>(
      'SELECT count() AS n FROM transactions WHERE protocol_name IN {a:Array(String)} AND slot >= {s:UInt64} AND fee BETWEEN 5000 AND 2000000000 AND compute_units <= 1400000',
      { a: await t().services.registry.activeNames(), s: low!.s },
    );
    expect(a.transactions.nodes[0].count).toBe(Number(ref!.n));
    expect(Number(ref!.n)).toBeGreaterThan(0);
    expect(b).toEqual(a);
  });

  it('compares slots past 2^53 exactly, up to 2^64-1, in listings and in groups', async () => {
    await ingestHugeSlots();
    const slotsOf = async (range: string): Promise<string[]> =>
      (
        await dataOf(gql(`{ transactions(filters: { slotRange: ${range} }, sort: { field: SLOT, direction: ASC }) { nodes { slot } } }`))
      ).transactions.nodes.map((n: { slot: string }) => n.slot);
    expect(await slotsOf('{ min: "18446744073709551615" }')).toEqual(['18446744073709551615']);
    expect(await slotsOf('{ min: "18446744073709551614", max: "18446744073709551614" }')).toEqual(['18446744073709551614']);
    expect(await slotsOf('{ min: 9007199254740993, max: 9007199254740993 }')).toEqual(['9007199254740993']);
    expect(await slotsOf('{ min: "9007199254740992", max: "9007199254740992" }')).toEqual(['9007199254740992']);
    expect(await slotsOf('{ min: "9007199254740992" }')).toEqual([...HUGE_SLOTS].reverse());
    const groups = await dataOf(
      gql(
        '{ transactions(filters: { slotRange: { max: "18446744073709551614", min: "9007199254740993" } }, groupBy: [PROTOCOL], metrics: [COUNT]) { nodes { protocol count } } }',
      ),
    );
    expect(groups.transactions.nodes).toEqual([{ protocol: 'jupiter_v6', count: 2 }]);
  });

  it('reaches SQL as bound UInt64 parameters holding the exact decimal text', () => {
    const c: Conditions = { where: [], params: {} };
    addRanges(c, { slot: { min: '18446744073709551615' }, fee: { max: '9007199254740993' }, computeUnits: { min: '1' } });
    expect(c.where).toEqual(['toUInt64(slot) >= {r_slot_min:UInt64}', 'fee <= {r_fee_max:UInt64}', 'compute_units >= {r_computeUnits_min:UInt32}']);
    expect(c.params).toEqual({ r_slot_min: '18446744073709551615', r_fee_max: '9007199254740993', r_computeUnits_min: '1' });
  });

  it('parses to canonical decimal text, and refuses what is not an exact integer in range', () => {
    expect(parseBigIntValue('18446744073709551615')).toBe('18446744073709551615');
    expect(parseBigIntValue('007')).toBe('7');
    expect(parseBigIntValue(-0)).toBe('0');
    expect(parseBigIntValue(Number.MAX_SAFE_INTEGER)).toBe('9007199254740991');
    expect(parseBigIntValue(-9_223_372_036_854_775_808n)).toBe('-9223372036854775808');
    for (const [literal, want] of [
      ['12', '12'],
      ['"12"', '12'],
      ['1.0', '1'],
      ['2.5e1', '25'],
      ['1200e-2', '12'],
      ['-0.0', '0'],
      ['18446744073709551615', '18446744073709551615'],
    ] as const) {
      expect(parseBigIntLiteral(parseValue(literal)), literal).toBe(want);
    }
    for (const v of [
      1.5,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      2 ** 53,
      1e30,
      true,
      null,
      {},
      [],
      '1e3',
      '12.0',
      ' 12',
      '0x10',
      '',
      '18446744073709551616',
      '-9223372036854775809',
    ]) {
      expect(() => parseBigIntValue(v), String(v)).toThrow(/^BigInt cannot represent /);
    }
    for (const literal of ['1.5', '1e20', '1e-1', 'true', 'null', 'NaN', '[1]', '{ a: 1 }', '"1e3"', '18446744073709551616']) {
      expect(() => parseBigIntLiteral(parseValue(literal)), literal).toThrow(/^BigInt cannot represent /);
    }
  });
});
