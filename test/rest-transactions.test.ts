// REST /api/v1/transactions and /api/v1/transactions/:signature: filters, paging, the
// envelope, parameter errors, and values checked against independent SQL on the base table
// and against the JSON-RPC equivalent (Analytics.transactions).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transaction } from '../api/analytics/types.ts';
import { FIXTURE_START } from './support/fixtures.ts';
import { restGet, type Envelope } from './support/rest-client.ts';
import { startAppWithData } from './support/services.ts';

let t: Awaited<ReturnType<typeof startAppWithData>>['t'];
let headers: Record<string, string>;
let active: string[];

beforeAll(async () => {
  ({ t, headers, active } = await startAppWithData(3000));
});
afterAll(async () => t.cleanup());

const get = restGet(() => t.app, () => headers);

/** Independent reference: the same listing straight from the base table. */
async function reference(where: string, params: Record<string, unknown>, limit: number, offset = 0) {
  return t.services.wh.query<{ signature: string; block_time: number; fee: string; protocol_name: string }>(
    `SELECT signature, toUInt32(block_time) AS block_time, toString(fee) AS fee, protocol_name FROM transactions
     WHERE protocol_name IN {active:Array(String)} AND ${where}
     ORDER BY block_time DESC, signature DESC, instruction_index DESC LIMIT {lim:UInt32} OFFSET {off:UInt32}`,
    { params: { ...params, active, lim: limit, off: offset } },
  );
}

const key = (tx: Transaction) => `${tx.signature}|${tx.blockTime}|${tx.fee}|${tx.protocolName}`;
const refKey = (r: { signature: string; block_time: number; fee: string; protocol_name: string }) =>
  `${r.signature}|${Number(r.block_time)}|${Number(r.fee)}|${r.protocol_name}`;

const DAY2 = '2024-12-30';
const DAY2_START = FIXTURE_START + 86_400;

describe('GET /api/v1/transactions', () => {
  it('lists the newest 100 visible records by default in the success envelope', async () => {
    const body = await get<Envelope<Transaction[]>>('/api/v1/transactions');
    expect(body.success).toBe(true);
    expect(body.data).toHaveLength(100);
    expect(body.meta).toMatchObject({ limit: 100, offset: 0, count: 100 });
    const ref = await reference('1', {}, 100);
    expect(body.data.map(key)).toEqual(ref.map(refKey));
    const [all] = await t.services.wh.query<{ n: string }>('SELECT count() AS n FROM transactions WHERE protocol_name IN {a:Array(String)}', { params: { a: active } });
    expect(body.meta.total).toBe(Number(all?.n));
    // Every field of the transaction object is present and typed as in JSON-RPC.
    const tx = body.data[0]!;
    expect(Object.keys(tx).sort()).toEqual(['accountsCount', 'blockTime', 'computeUnits', 'fee', 'instructionType', 'programId', 'protocolName', 'signature', 'slot', 'success']);
    expect(typeof tx.slot).toBe('string');
  });

  it('filters by protocol, program and day range (inclusive, UTC) and pages with offset', async () => {
    const protocol = 'jupiter_v6';
    const url = `/api/v1/transactions?protocol_name=${protocol}&date_from=${DAY2}&date_to=${DAY2}&limit=7&offset=5`;
    const body = await get<Envelope<Transaction[]>>(url);
    const where = "protocol_name = {p:String} AND block_time >= toDateTime({from:UInt32}, 'UTC') AND block_time <= toDateTime({to:UInt32}, 'UTC')";
    const params = { p: protocol, from: DAY2_START, to: DAY2_START + 86_399 };
    const ref = await reference(where, params, 7, 5);
    expect(body.data.map(key)).toEqual(ref.map(refKey));
    expect(body.meta).toMatchObject({ limit: 7, offset: 5, count: 7 });
    const [n] = await t.services.wh.query<{ n: string }>(`SELECT count() AS n FROM transactions WHERE ${where}`, { params });
    expect(body.meta.total).toBe(Number(n?.n));
    for (const tx of body.data) {
      expect(tx.protocolName).toBe(protocol);
      expect(tx.blockTime).toBeGreaterThanOrEqual(DAY2_START);
      expect(tx.blockTime).toBeLessThan(DAY2_START + 86_400);
    }

    const programId = body.data[0]!.programId;
    const byProgram = await get<Envelope<Transaction[]>>(`/api/v1/transactions?program_id=${programId}&limit=20`);
    expect(byProgram.data.map(key)).toEqual((await reference('program_id = {pid:String}', { pid: programId }, 20)).map(refKey));
    expect(byProgram.meta.total).toBeUndefined(); // not cheap for a program filter
  });

  it('pages consistently: offset pages concatenate to one long page', async () => {
    const long = await get<Envelope<Transaction[]>>('/api/v1/transactions?limit=30');
    const a = await get<Envelope<Transaction[]>>('/api/v1/transactions?limit=10&offset=0');
    const b = await get<Envelope<Transaction[]>>('/api/v1/transactions?limit=10&offset=10');
    const c = await get<Envelope<Transaction[]>>('/api/v1/transactions?limit=10&offset=20');
    expect([...a.data, ...b.data, ...c.data].map(key)).toEqual(long.data.map(key));
  });

  it('equals the JSON-RPC getTransactions answer (same analytics call)', async () => {
    const rest = await get<Envelope<Transaction[]>>(`/api/v1/transactions?protocol_name=pump_fun&date_from=${DAY2}&limit=50`);
    const rpc = await t.services.analytics.transactions({
      filters: { protocols: ['pump_fun'], blockTime: { gte: DAY2_START } }, sortOrder: 'desc', limit: 50,
    });
    expect(rest.data).toEqual(rpc.data);
  });

  it('filters by signature', async () => {
    const [row] = await t.services.wh.query<{ signature: string }>('SELECT signature FROM transactions WHERE protocol_name = {p:String} LIMIT 1', { params: { p: 'whirlpool' } });
    const body = await get<Envelope<Transaction[]>>(`/api/v1/transactions?signature=${row!.signature}`);
    expect(body.data.length).toBeGreaterThanOrEqual(1);
    expect(body.data.every((tx) => tx.signature === row!.signature)).toBe(true);
  });

  it('answers an empty page past the end and for inactive or unknown protocols', async () => {
    expect((await get<Envelope<Transaction[]>>('/api/v1/transactions?date_from=2030-01-01')).data).toEqual([]);
    const hidden = await get<Envelope<Transaction[]>>('/api/v1/transactions?protocol_name=raydium_amm_v4');
    expect(hidden.data).toEqual([]);
    expect(hidden.meta.total).toBe(0);
    expect((await get<Envelope<Transaction[]>>('/api/v1/transactions?protocol_name=nope')).data).toEqual([]);
  });

  it('accepts the limits 1 and 1000', async () => {
    expect((await get<Envelope<Transaction[]>>('/api/v1/transactions?limit=1')).data).toHaveLength(1);
    expect((await get<Envelope<Transaction[]>>('/api/v1/transactions?limit=1000')).data).toHaveLength(1000);
  });

  it.each([
    ['limit=0', /limit/],
    ['limit=1001', /limit/],
    ['limit=abc', /limit/],
    ['limit=1.5', /limit/],
    ['offset=-1', /offset/],
    ['offset=x', /offset/],
    ['offset=9950&limit=100', /offset \+ limit must be at most 10000/],
    ['date_from=2024-13-01', /date_from/],
    ['date_from=2025-02-30', /date_from/],
    ['date_to=20250101', /date_to/],
    ['date_to=2025-1-1', /date_to/],
    ['date_from=yesterday', /date_from/],
    ['date_from=2025-01-02&date_to=2025-01-01', /date_from \(2025-01-02\) is after date_to \(2025-01-01\)/],
  ])('400 naming the parameter for %s', async (qs, pattern) => {
    const body = await get<{ error: string; message: string }>(`/api/v1/transactions?${qs}`, 400);
    expect(body.error).toBe('Bad Request');
    expect(body.message).toMatch(pattern);
  });
});

describe('GET /api/v1/transactions/:signature', () => {
  it('returns the record of lowest instruction index, as the base table holds it', async () => {
    const [ref] = await t.services.wh.query<{ signature: string; slot: string; block_time: number; fee: string; compute_units: number; instruction_type: string }>(
      `SELECT signature, toString(slot) AS slot, toUInt32(block_time) AS block_time, toString(fee) AS fee, compute_units, instruction_type
       FROM transactions WHERE protocol_name IN {a:Array(String)} ORDER BY signature, instruction_index LIMIT 1`, { params: { a: active } });
    const body = await get<Envelope<Transaction>>(`/api/v1/transactions/${ref!.signature}`);
    expect(body.success).toBe(true);
    expect(body.meta.count).toBe(1);
    expect(body.data).toMatchObject({
      signature: ref!.signature, slot: ref!.slot, blockTime: Number(ref!.block_time), fee: Number(ref!.fee),
      computeUnits: Number(ref!.compute_units), instructionType: ref!.instruction_type,
    });
    expect(body.data).toEqual(await t.services.analytics.transaction(ref!.signature));
  });

  it('404 {error, message} when absent or hidden (inactive protocol)', async () => {
    const absent = await get<{ error: string; message: string }>('/api/v1/transactions/1111111111111111111111111111111111111111111111111111111111111111', 404);
    expect(absent).toEqual({ error: 'Not Found', message: expect.stringMatching(/no transaction with signature/) });
    const [hidden] = await t.services.wh.query<{ signature: string }>(
      'SELECT signature FROM transactions WHERE protocol_name NOT IN {a:Array(String)} LIMIT 1', { params: { a: active } });
    expect(hidden).toBeDefined();
    await get(`/api/v1/transactions/${hidden!.signature}`, 404);
  });
});
