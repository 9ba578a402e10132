// REST /api/v1/transactions and /api/v1/transactions/:signature: filters, offset paging,
// the envelope and meta, parameter errors. Offset pages and totals are REST's own and are
// checked against the oracle; the records equal the analytics layer's (Analytics.transactions).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transaction } from '../../api/analytics/types.ts';
import { dayStart, FIXTURE_DAYS } from '../support/fixtures.ts';
import { countStored, hiddenSignature, transactionsWhere } from '../support/oracle.ts';
import { restGet, type Envelope } from '../support/rest-client.ts';
import { startAppWithData } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startAppWithData>>['t'];
let headers: Record<string, string>;
let active: string[];

beforeAll(async () => {
  ({ t, headers, active } = await startAppWithData(3000));
});
afterAll(async () => t.cleanup());

const get = restGet(
  () => t.app,
  () => headers,
);

/** Independent reference: one offset page of the listing (newest first), from the base table. */
async function reference(where: string, params: Record<string, unknown>, limit: number, offset = 0) {
  return (await transactionsWhere(t.services, where, params)).slice(offset, offset + limit);
}

const DAY2 = FIXTURE_DAYS[1];
const DAY2_START = dayStart(1);

describe('GET /api/v1/transactions', () => {
  it('lists the newest 100 visible records by default in the success envelope', async () => {
    const body = await get<Envelope<Transaction[]>>('/api/v1/transactions');
    expect(body.success).toBe(true);
    expect(body.data).toHaveLength(100);
    expect(body.meta).toMatchObject({ limit: 100, offset: 0, count: 100 });
    expect(body.data).toEqual(await reference('1', {}, 100));
    expect(body.meta.total).toBe(await countStored(t.services, 'protocol_name IN {a:Array(String)}', { a: active }));
    // Every field of the transaction object is present and typed as in JSON-RPC.
    const tx = body.data[0]!;
    expect(Object.keys(tx).sort()).toEqual([
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
    expect(typeof tx.slot).toBe('string');
  });

  it('filters by protocol, program and day range (inclusive, UTC) and pages with offset', async () => {
    const protocol = 'jupiter_v6';
    const url = `/api/v1/transactions?protocol_name=${protocol}&date_from=${DAY2}&date_to=${DAY2}&limit=7&offset=5`;
    const body = await get<Envelope<Transaction[]>>(url);
    const where = "protocol_name = {p:String} AND block_time >= toDateTime({from:UInt32}, 'UTC') AND block_time <= toDateTime({to:UInt32}, 'UTC')";
    const params = { p: protocol, from: DAY2_START, to: DAY2_START + 86_399 };
    expect(body.data).toEqual(await reference(where, params, 7, 5));
    expect(body.meta).toMatchObject({ limit: 7, offset: 5, count: 7 });
    expect(body.meta.total).toBe(await countStored(t.services, where, params));
    for (const tx of body.data) {
      expect(tx.protocolName).toBe(protocol);
      expect(tx.blockTime).toBeGreaterThanOrEqual(DAY2_START);
      expect(tx.blockTime).toBeLessThan(DAY2_START + 86_400);
    }

    const programId = body.data[0]!.programId;
    const byProgram = await get<Envelope<Transaction[]>>(`/api/v1/transactions?program_id=${programId}&limit=20`);
    expect(byProgram.data).toEqual(await reference('program_id = {pid:String}', { pid: programId }, 20));
    expect(byProgram.meta.total).toBeUndefined(); // not cheap for a program filter
  });

  it('pages consistently: offset pages concatenate to one long page', async () => {
    const long = await get<Envelope<Transaction[]>>('/api/v1/transactions?limit=30');
    const a = await get<Envelope<Transaction[]>>('/api/v1/transactions?limit=10&offset=0');
    const b = await get<Envelope<Transaction[]>>('/api/v1/transactions?limit=10&offset=10');
    const c = await get<Envelope<Transaction[]>>('/api/v1/transactions?limit=10&offset=20');
    expect([...a.data, ...b.data, ...c.data]).toEqual(long.data);
  });

  it('equals the JSON-RPC getTransactions answer (same analytics call)', async () => {
    const rest = await get<Envelope<Transaction[]>>(`/api/v1/transactions?protocol_name=pump_fun&date_from=${DAY2}&limit=50`);
    const rpc = await t.services.operatorAnalytics.transactions({
      filters: { protocols: ['pump_fun'], range: { gte: DAY2_START } },
      sortOrder: 'desc',
      limit: 50,
    });
    expect(rest.data).toEqual(rpc.data);
  });

  it('filters by signature', async () => {
    const [row] = await transactionsWhere(t.services, "protocol_name = 'whirlpool'");
    const body = await get<Envelope<Transaction[]>>(`/api/v1/transactions?signature=${row!.signature}`);
    expect(body.data).toEqual(await reference('signature = {s:String}', { s: row!.signature }, 100));
  });

  it('answers an empty page past the end; refuses an inactive or unknown protocol, as every door does', async () => {
    expect((await get<Envelope<Transaction[]>>('/api/v1/transactions?date_from=2030-01-01')).data).toEqual([]);
    expect((await get<{ message: string }>('/api/v1/transactions?protocol_name=raydium_amm_v4', 400)).message).toMatch(
      /^protocol_name: unknown protocol "raydium_amm_v4"/,
    );
    expect((await get<{ message: string }>('/api/v1/transactions?protocol_name=nope', 400)).message).toMatch(/^protocol_name: unknown protocol "nope"/);
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
    // The advice names what reaches further: the cursor.
    [
      'offset=9950&limit=100',
      /offset \+ limit must be at most 10000 \(got 10050\); to page further, drop offset and pass the meta\.next of each page as cursor/,
    ],
    ['cursor=', /cursor/],
    ['cursor=bm90LWEtdG9rZW4', /cursor is not a pagination token this method issued/],
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

describe('GET /api/v1/transactions keyset cursor (meta.next)', () => {
  type Page = Envelope<Transaction[]> & { meta: { next: string | null } };

  it('walks a whole day with cursor = meta.next: every record once, in order, past any offset window', async () => {
    const where = "block_time >= toDateTime({from:UInt32}, 'UTC') AND block_time <= toDateTime({to:UInt32}, 'UTC') AND protocol_name IN {a:Array(String)}";
    const all = await transactionsWhere(t.services, where, { from: DAY2_START, to: DAY2_START + 86_399, a: active });
    expect(all.length).toBeGreaterThan(300); // several pages
    const seen: Transaction[] = [];
    let url = `/api/v1/transactions?date_from=${DAY2}&date_to=${DAY2}&limit=137`;
    for (let pages = 0; pages < 100; pages += 1) {
      const page = await get<Page>(url);
      seen.push(...page.data);
      expect(page.meta.offset).toBe(0);
      if (page.meta.next === null) break;
      expect(page.data).toHaveLength(137);
      url = `/api/v1/transactions?date_from=${DAY2}&date_to=${DAY2}&limit=137&cursor=${encodeURIComponent(page.meta.next)}`;
    }
    expect(seen).toEqual(all);
  });

  it('an offset page also carries meta.next, resuming right after its last row', async () => {
    const long = await get<Page>('/api/v1/transactions?limit=40');
    const first = await get<Page>('/api/v1/transactions?limit=10&offset=20');
    expect(first.data).toEqual(long.data.slice(20, 30));
    const after = await get<Page>(`/api/v1/transactions?limit=10&cursor=${encodeURIComponent(first.meta.next!)}`);
    expect(after.data).toEqual(long.data.slice(30, 40));
  });

  it('is the JSON-RPC paginationToken of the same listing (one signed codec for every door)', async () => {
    const rpc = await t.services.operatorAnalytics.transactions({ filters: { protocols: ['jupiter_v6'] }, sortOrder: 'desc', limit: 5 });
    const rest = await get<Page>(`/api/v1/transactions?protocol_name=jupiter_v6&limit=5&cursor=${encodeURIComponent(rpc.next!)}`);
    const rpc2 = await t.services.operatorAnalytics.transactions({ filters: { protocols: ['jupiter_v6'] }, sortOrder: 'desc', limit: 5, cursor: rpc.next! });
    expect(rest.data).toEqual(rpc2.data);
    expect(rest.meta.next).toBe(rpc2.next);
  });

  it('refuses a cursor of other filters, an edited cursor, and cursor with offset, with advice', async () => {
    const page = await get<Page>('/api/v1/transactions?protocol_name=pump_fun&limit=3');
    const cursor = page.meta.next!;
    const other = await get<{ message: string }>(`/api/v1/transactions?protocol_name=whirlpool&cursor=${encodeURIComponent(cursor)}`, 400);
    expect(other.message).toMatch(/cursor belongs to a listing with other filters/);
    const edited = `${cursor.slice(0, -2)}${cursor.endsWith('A') ? 'B' : 'A'}`;
    expect((await get<{ message: string }>(`/api/v1/transactions?protocol_name=pump_fun&cursor=${edited}`, 400)).message).toMatch(
      /cursor is not a pagination token/,
    );
    const both = await get<{ message: string }>(`/api/v1/transactions?protocol_name=pump_fun&offset=3&cursor=${encodeURIComponent(cursor)}`, 400);
    expect(both.message).toMatch(/cursor and offset cannot be combined/);
  });

  it('is declared in the OpenAPI document: the cursor parameter and meta.next', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const op = doc.paths['/api/v1/transactions'].get;
    const cursor = op.parameters.find((p: { name: string }) => p.name === 'cursor');
    expect(cursor).toMatchObject({ in: 'query', required: false, schema: { type: 'string', maxLength: 1024 } });
    expect(op['x-cross-field-rules']).toContainEqual({ rule: 'issued', param: 'cursor', by: 'meta.next' });
    const meta = op.responses['200'].content['application/json'].schema.properties.meta;
    // OpenAPI 3.0 spells string-or-null as nullable.
    expect(meta.properties.next).toMatchObject({ type: 'string', nullable: true });
  });

  it('says next: null on the last page', async () => {
    const page = await get<Page>('/api/v1/transactions?date_from=2030-01-01');
    expect(page.meta.next).toBeNull();
  });
});

describe('GET /api/v1/transactions/:signature', () => {
  it('returns the analytics record (lowest instruction index) in the envelope', async () => {
    const [ref] = await transactionsWhere(t.services, '1', {}, 'signature, instruction_index');
    const body = await get<Envelope<Transaction>>(`/api/v1/transactions/${ref!.signature}`);
    expect(body.success).toBe(true);
    expect(body.meta.count).toBe(1);
    expect(body.data.signature).toBe(ref!.signature);
    expect(body.data).toEqual(await t.services.operatorAnalytics.transaction(ref!.signature));
  });

  it('404 {error, message} when absent or hidden (inactive protocol)', async () => {
    const absent = await get<{ error: string; message: string }>('/api/v1/transactions/1111111111111111111111111111111111111111111111111111111111111111', 404);
    expect(absent).toEqual({ error: 'Not Found', message: expect.stringMatching(/no transaction with signature/) });
    const hidden = await hiddenSignature(t.services, active);
    expect(hidden).toBeDefined();
    await get(`/api/v1/transactions/${hidden}`, 404);
  });
});
