// The records of an address page (issue 25, the hottest address; issue 37: one statement,
// address rows by record id joined to tx_by_rid). A page dense in time (many protocols in a
// few seconds, as the hottest address's pages are) and a sparse one (a few records over
// days) answer exactly as the base-table oracle, with every filter, in both orders, with a
// record sharing a stored signature's 64-bit key (a hash collision, which the signatures
// filter must not take for the other) and an address row without its record.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGNATURE_RECORDS } from '../../warehouse/signature-records.ts';
import type { IngestRecord } from '../../ingest/record-schema.ts';
import { SignatureLookup } from '../../api/analytics/records/signature-lookup.ts';
import { startApp } from '../support/services.ts';
import { b58, FIXTURE_START, ingest, ingestDemo, PROGRAM_OF } from '../support/fixtures.ts';
import { ADDRESS_ORDER, addressTransactions, transaction, type TxObject } from '../support/oracle.ts';
import { RpcClient } from '../support/rpc-client.ts';
import { packRid } from '../../ingest/record-id.ts';

let ctx: Awaited<ReturnType<typeof startApp>>;
let rpc: RpcClient;

const DENSE = b58('dense-address', 44);
const SPARSE = b58('sparse-address', 44);
const DENSE_START = FIXTURE_START + 40_000;
const PROTOCOLS = ['jupiter_v6', 'pump_fun', 'whirlpool', 'pump_amm', 'raydium_cp_swap', 'jupiter_v4', 'raydium_amm_v4'];

/** 300 records of DENSE within 40 seconds across seven protocols (one hidden), some with a second instruction. */
function denseRecords(): IngestRecord[] {
  return Array.from({ length: 300 }, (_, i): IngestRecord[] => {
    const protocol = PROTOCOLS[(i * 3) % PROTOCOLS.length]!;
    const base: IngestRecord = {
      signature: b58(`dense-${i}`, 88),
      instruction_index: 0,
      slot: 310_000_000 + i,
      block_time: DENSE_START + Math.floor(i / 8),
      program_id: PROGRAM_OF[protocol]!,
      protocol_name: protocol,
      instruction_type: i % 3 === 0 ? 'swap' : 'buy',
      fee: 5000 + i,
      compute_units: 30_000 + i * 13,
      accounts: [DENSE, b58(`dense-acct-${i % 4}`, 44)],
      success: i % 6 !== 0,
    };
    return i % 9 === 0 ? [base, { ...base, instruction_index: 2, instruction_type: 'claim', compute_units: base.compute_units + 1 }] : [base];
  }).flat();
}

/** 40 records of SPARSE, hours apart over two and a half days. */
function sparseRecords(): IngestRecord[] {
  return Array.from({ length: 40 }, (_, i): IngestRecord => {
    const protocol = PROTOCOLS[i % PROTOCOLS.length]!;
    return {
      signature: b58(`sparse-${i}`, 88),
      instruction_index: 0,
      slot: 320_000_000 + i,
      block_time: FIXTURE_START + 600 + i * 5400,
      program_id: PROGRAM_OF[protocol]!,
      protocol_name: protocol,
      instruction_type: 'swap',
      fee: 7000 + i,
      compute_units: 50_000 + i,
      accounts: [SPARSE],
      success: i % 5 !== 0,
    };
  });
}

beforeAll(async () => {
  ctx = await startApp();
  rpc = await RpcClient.create(ctx.app);
  await ingestDemo(ctx.services, 1500);
  await ingest(ctx.services, [...denseRecords(), ...sparseRecords()]);
  const wh = ctx.services.wh;
  // A record of another signature under a stored record's 64-bit key (a hash collision, made
  // by hand): an index entry of the same key and instruction index, with an id of its own,
  // and a record at another time, with another program; each must be passed over, and the
  // stored record still served.
  for (const [i, [label, of, dt, protocol]] of (
    [
      ['collider-a', 'dense-17', 1, 'jupiter_v6'],
      ['collider-b', 'sparse-7', 0, 'whirlpool'],
      ['collider-c', 'dense-40', 0, 'pump_amm'],
    ] as const
  ).entries()) {
    const params = { s: b58(label, 88), of: b58(of, 88), dt, p: PROGRAM_OF[protocol]!, pn: protocol, r: ((1n << 63n) | BigInt(i)).toString() };
    await wh.exec(
      `INSERT INTO tx_by_rid (rid, record)
       SELECT {r:UInt64}, toJSONString(({s:String}, instruction_index, toString(slot + 1), toUInt32(block_time) + {dt:UInt32}, {p:String}, {pn:String},
         instruction_type, toString(fee + 1), compute_units, accounts_count, success))
       FROM ${SIGNATURE_RECORDS} WHERE signature = {of:String}`,
      { params: { ...params, sigs: [params.of] } },
    );
    await wh.exec('INSERT INTO tx_rid_by_sig SELECT cityHash64(signature), instruction_index, {r:UInt64} FROM transactions WHERE signature = {of:String}', {
      params,
    });
  }
  // Address rows without records (a crash between the two tables' commits), in each address's
  // range: an id in a slot of the address's records, at a position no record holds.
  for (const [addr, slot, bt] of [
    [DENSE, 310_000_003, DENSE_START + 3],
    [SPARSE, 320_000_010, FIXTURE_START + 600 + 10 * 5400],
  ] as const) {
    await wh.exec(
      `INSERT INTO tx_by_address_v2 (address_key, rid, block_time, program_id, protocol_name, success)
       SELECT reinterpretAsUInt128(sipHash128({a:String})), {rid:UInt64}, toDateTime({bt:UInt32}, 'UTC'), {p:String}, 'jupiter_v6', true`,
      { params: { a: addr, bt, rid: packRid(BigInt(slot), 40_000, 0).toString(), p: PROGRAM_OF.jupiter_v6 } },
    );
  }
});
afterAll(async () => ctx?.cleanup());

interface Page {
  data: TxObject[];
  paginationToken: string | null;
}

async function walk(addr: string, options: Record<string, unknown>, limit: number): Promise<TxObject[]> {
  const data: TxObject[] = [];
  let token: string | null = null;
  for (let round = 0; ; round++) {
    expect(round).toBeLessThan(500);
    const page: Page = await rpc.call<Page>('getTransactionsForAddress', [addr, { ...options, limit, ...(token ? { paginationToken: token } : {}) }]);
    data.push(...page.data);
    token = page.paginationToken;
    if (token === null) return data;
    expect(page.data.length).toBe(limit);
  }
}

describe("a dense page (the hottest address's kind) and a sparse one answer as the oracle", () => {
  const cases = (start: number, span: number): [string, Record<string, unknown>, string, Record<string, unknown>][] => [
    ['no filters', {}, '1', {}],
    ['blockTime gte', { blockTime: { gte: start + span / 2 } }, "block_time >= toDateTime({t:UInt32}, 'UTC')", { t: start + span / 2 }],
    [
      'blockTime lte, failed only',
      { blockTime: { lte: start + span / 2 }, status: 'failed' },
      "block_time <= toDateTime({t:UInt32}, 'UTC') AND NOT success",
      { t: start + span / 2 },
    ],
    [
      'succeeded, protocols and programIds',
      { status: 'succeeded', protocols: ['jupiter_v6', 'pump_fun', 'whirlpool'], programIds: [PROGRAM_OF.pump_fun, PROGRAM_OF.whirlpool] },
      "success AND protocol_name IN ('jupiter_v6', 'pump_fun', 'whirlpool') AND program_id IN {p:Array(String)}",
      { p: [PROGRAM_OF.pump_fun, PROGRAM_OF.whirlpool] },
    ],
    [
      'signatures (one with a collider, one without a record)',
      { signatures: [b58('dense-17', 88), b58('dense-27', 88), b58('sparse-7', 88), b58('sparse-3', 88), b58('dense-orphan', 88), b58('collider-a', 88)] },
      'signature IN {s:Array(String)}',
      { s: [b58('dense-17', 88), b58('dense-27', 88), b58('sparse-7', 88), b58('sparse-3', 88)] },
    ],
  ];

  for (const [label, addr, start, span] of [
    ['dense', DENSE, DENSE_START, 40],
    ['sparse', SPARSE, FIXTURE_START, 220_000],
  ] as const) {
    it.each(cases(start, span))(`${label}: %s — every page, both orders, limits 7 and 100`, async (_case, filters, where, params) => {
      for (const [sortOrder, order] of [
        ['asc', ADDRESS_ORDER.asc],
        ['desc', ADDRESS_ORDER.desc],
      ] as const) {
        const expected = await addressTransactions(ctx.services, addr, where, params, order);
        expect(expected.length).toBeGreaterThan(0);
        for (const limit of [7, 100]) expect(await walk(addr, { filters, sortOrder }, limit)).toEqual(expected);
      }
    });
  }

  it("the collided and orphaned references really are in the pages' ranges (the cases above exercise them)", async () => {
    const [n] = await ctx.services.wh.query<{ n: string }>(
      `SELECT count() AS n FROM tx_rid_by_sig WHERE sig_key IN (cityHash64({a:String}), cityHash64({b:String}), cityHash64({c:String}))`,
      { params: { a: b58('dense-17', 88), b: b58('sparse-7', 88), c: b58('dense-40', 88) } },
    );
    expect(Number(n!.n)).toBe(6);
    const dense = await walk(DENSE, {}, 100);
    for (const served of ['dense-17', 'dense-40']) expect(dense.some((t) => t.signature === b58(served, 88))).toBe(true);
    const [orphans] = await ctx.services.wh.query<{ n: string }>('SELECT count() AS n FROM tx_by_address_v2 WHERE rid NOT IN (SELECT rid FROM tx_by_rid)');
    expect(Number(orphans!.n)).toBe(2);
    for (const passedOver of ['collider-a', 'collider-c']) expect(dense.some((t) => t.signature === b58(passedOver, 88))).toBe(false);
  });
});

describe('one coalesced read serves signatures and signature keys together', () => {
  it("getTransaction lookups and a page's keys in one batch each get what they asked for", async () => {
    const wh = ctx.services.wh;
    // One batch in flight, so the reads after the first go out together as the test describes.
    const lookup = new SignatureLookup({ maxInFlight: 1 });
    const keyRows = await wh.query<{ sk: string }>(
      `SELECT DISTINCT toString(cityHash64(signature)) AS sk FROM transactions WHERE has(accounts, {a:String}) ORDER BY sk LIMIT 60`,
      { params: { a: DENSE } },
    );
    const [k17] = await wh.query<{ sk: string }>('SELECT toString(cityHash64({s:String})) AS sk', { params: { s: b58('dense-17', 88) } });
    const keys = [...new Set([...keyRows.map((r) => r.sk), k17!.sk]), '12345678901234567890'];
    const active = new Set(await ctx.services.analytics.protocols());
    const sigs = [b58('dense-9', 88), b58('sparse-12', 88), b58('collider-a', 88), b58('nope', 88)];
    // The first read goes out alone; the rest wait for it and go out as one mixed batch.
    const first = lookup.find(wh, b58('dense-1', 88), active);
    const byKeys = lookup.byKeys(wh, keys);
    const found = sigs.map((s) => lookup.find(wh, s, active));
    const small = lookup.byKeys(wh, keys.slice(0, 5));
    expect(await first).toEqual(await transaction(ctx.services, b58('dense-1', 88)));
    for (const [i, s] of sigs.slice(0, 2).entries()) expect(await found[i]).toEqual(await transaction(ctx.services, s));
    // Indexed only under dense-17's key (among `keys`): read in this batch through it, the
    // record answers its own signature, never dense-17's (the keys' answers below).
    expect(await found[2]).toMatchObject({ signature: b58('collider-a', 88) });
    expect(await found[3]).toBeNull();
    // Every record under each key, whatever its protocol (the caller matches them to references).
    const expected = await wh.query<{ signature: string; instruction_index: number; sk: string }>(
      `SELECT signature, instruction_index, toString(cityHash64(signature)) AS sk FROM transactions WHERE toString(cityHash64(signature)) IN {k:Array(String)}`,
      { params: { k: keys } },
    );
    const id = (r: { signature: string; instruction_index: number; sk: string }) => `${r.sk}|${r.signature}|${Number(r.instruction_index)}`;
    expect((await byKeys).map(id).sort()).toEqual(expected.map(id).sort());
    expect(new Set((await small).map((r) => r.sk))).toEqual(new Set(keys.slice(0, 5)));
  });
});
