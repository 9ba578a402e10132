// The records by signature (migration 090's JSON array per record, in tx_by_rid, found
// through the signature index tx_rid_by_sig since 110; warehouse/signature-records.ts) answer exactly what the base table holds, for hostile field values
// ingested through the real pipeline: instruction types with every character a JSON
// string escapes (quotes, backslashes, '/', control characters, U+2028/2029), emoji, the
// largest numbers each field takes, and a record whose raw bytes carry invalid UTF-8 (as a
// Kafka message may: the pipeline hands received bytes to the engine as they came). Every
// door that reads them (getTransaction, REST, GraphQL, an address page, a listing with a
// signatures filter and its count) equals the base-table oracle; a replay stores nothing
// twice; a view repair of their buckets leaves each record once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignatureLookup } from '../../api/analytics/records/signature-lookup.ts';
import { SIGNATURE_RECORDS, signatureRecordField } from '../../warehouse/signature-records.ts';
import { rebuildViewBuckets } from '../../warehouse/view-repair.ts';
import { apiKeyHeaders } from '../support/api-key.ts';
import { b58, FIXTURE_START, ingest, PROGRAM_OF } from '../support/fixtures.ts';
import { addressTransactions, ADDRESS_ORDER, transaction, transactionsWhere, type TxObject } from '../support/oracle.ts';
import { dataOf, graphqlClient } from '../support/graphql-client.ts';
import { restGet, type Envelope } from '../support/rest-client.ts';
import { RpcClient } from '../support/rpc-client.ts';
import { startApp } from '../support/services.ts';

const ADDR = b58('hostile-fields-address', 44);
const T0 = FIXTURE_START + 7200;

/** Instruction types a JSON array must carry exactly (any 1-128 characters pass ingest). */
const TYPES = [
  'say "hi" \\ back\\slash',
  'a/b</script>',
  '\u0000\u0001\u001f\u007f',
  'line\nbreak\ttab\rcr\b\f',
  '\u2028\u2029',
  '😀 emoji é ß 中',
  '\\u0041 not an escape',
  '[1,2,3]',
  'x'.repeat(128),
  '😀'.repeat(64),
];

function line(i: number, instructionType: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    signature: b58(`hostile-field-${i}`, 88),
    instruction_index: i % 3,
    slot: 330_000_000 + i,
    block_time: T0 + i * 600,
    program_id: PROGRAM_OF.jupiter_v6,
    protocol_name: 'jupiter_v6',
    instruction_type: instructionType,
    fee: 5000 + i,
    compute_units: 60_000 + i,
    accounts: [ADDR],
    accounts_count: 1,
    success: i % 2 === 0,
    ...extra,
  });
}

/** The largest value of every number the record carries. */
const MAXIMA = line(90, 'max', {
  slot: '17179869182',
  fee: Number.MAX_SAFE_INTEGER,
  compute_units: 4294967295,
  accounts_count: 65535,
  instruction_index: 8191,
  success: false,
});

/** A line whose instruction_type carries bytes that are not UTF-8, as received bytes. */
function invalidUtf8(i: number): Uint8Array {
  const [pre, post] = line(i, 'MARK').split('MARK') as [string, string];
  return new Uint8Array(Buffer.concat([Buffer.from(`${pre}A`), Buffer.from([0xff, 0xfe, 0xed, 0xa0, 0x80, 0xc0]), Buffer.from(`B${post}`)]));
}

const RECORDS: (string | Uint8Array)[] = [...TYPES.map((t, i) => line(i, t)), MAXIMA, invalidUtf8(91), invalidUtf8(92)];
/** A record whose bad bytes reached the base table as they came (a store that took Kafka records before the pipeline re-serialised such lines). */
const LEGACY = 93;
const SIGNATURES = [...TYPES.map((_, i) => b58(`hostile-field-${i}`, 88)), ...[90, 91, 92, LEGACY].map((i) => b58(`hostile-field-${i}`, 88))];

let ctx: Awaited<ReturnType<typeof startApp>>;
let rpc: RpcClient;
let headers: Record<string, string>;

const ingestAll = () =>
  ctx.services.pipeline.ingest(
    RECORDS.map((value, i) => ({ value, position: { line: i + 1 } })),
    'test',
  );
const baseCount = async (): Promise<number> =>
  Number(
    (
      await ctx.services.wh.query<{ n: string }>('SELECT count() AS n FROM transactions WHERE signature IN {s:Array(String)}', { params: { s: SIGNATURES } })
    )[0]!.n,
  );
const storedBySignature = async (): Promise<number> =>
  Number(
    (
      await ctx.services.wh.query<{ n: string }>('SELECT count() AS n FROM tx_rid_by_sig WHERE sig_key IN (SELECT cityHash64(arrayJoin({s:Array(String)})))', {
        params: { s: SIGNATURES },
      })
    )[0]!.n,
  );

beforeAll(async () => {
  ctx = await startApp();
  rpc = await RpcClient.create(ctx.app);
  headers = await apiKeyHeaders(ctx.app);
  const report = await ingestAll();
  expect(report.rejected).toEqual([]);
  expect(report.accepted).toBe(RECORDS.length);
  await ctx.services.wh.insertBytes('transactions', Buffer.from(invalidUtf8(LEGACY)), 'JSONEachRow');
});
afterAll(async () => ctx?.cleanup());

describe('hostile field values read back through every door exactly as the base table holds them', () => {
  it('getTransaction, REST and GraphQL by signature', async () => {
    const rest = restGet(
      () => ctx.app,
      () => headers,
    );
    const gql = graphqlClient(
      () => ctx.app,
      () => headers,
    );
    for (const s of SIGNATURES) {
      const expected = await transaction(ctx.services, s);
      expect(expected).not.toBeNull();
      expect(await rpc.call('getTransaction', [s])).toEqual(expected);
      expect((await rest<Envelope<TxObject>>(`/api/v1/transactions/${s}`)).data).toEqual(expected);
      const d = await dataOf(
        gql(
          'query($s: String!) { signature(signature: $s) { signature slot blockTime programId protocolName instructionType fee computeUnits accountsCount success } }',
          { s },
        ),
      );
      expect(d.signature).toEqual(expected);
    }
  });

  it('an address page and a listing filtered by signatures, with its count', async () => {
    const page = await rpc.call<{ data: TxObject[] }>('getTransactionsForAddress', [ADDR, { limit: 100, sortOrder: 'asc' }]);
    expect(page.data).toEqual(await addressTransactions(ctx.services, ADDR, '1', {}, ADDRESS_ORDER.asc));
    const expected = await transactionsWhere(ctx.services, 'signature IN {s:Array(String)}', { s: SIGNATURES });
    expect(expected.length).toBe(SIGNATURES.length);
    const listed = await rpc.call<{ data: TxObject[] }>('getTransactions', [{ limit: 100, filters: { signatures: SIGNATURES } }]);
    expect(listed.data).toEqual(expected);
    const byAddressAndSignatures = await rpc.call<{ data: TxObject[] }>('getTransactionsForAddress', [
      ADDR,
      { limit: 100, sortOrder: 'asc', filters: { signatures: SIGNATURES } },
    ]);
    expect(byAddressAndSignatures.data).toEqual(page.data);
    const gql = graphqlClient(
      () => ctx.app,
      () => headers,
    );
    const d = await dataOf(
      gql(
        'query($s: [String!]) { transactions(filters: {signatures: $s}, pagination: {first: 100}) { totalCount totalCountIsEstimate nodes { signature instructionType } } }',
        { s: SIGNATURES },
      ),
    );
    expect(d.transactions.totalCount).toBe(expected.length);
    expect(d.transactions.nodes).toEqual(expected.map((t) => ({ signature: t.signature, instructionType: t.instructionType })));
  });
});

describe('a listing filtered by signatures and sorted by a record column, paged', () => {
  // Without LEGACY: its stored bytes are not UTF-8, and a cursor carries the value as text
  // (U+FFFD for each bad byte), which sorts before the stored bytes: sorted by instruction
  // type, the page after it would start with it again (known, for stores holding such rows).
  const sorted = SIGNATURES.filter((s) => s !== b58(`hostile-field-${LEGACY}`, 88));
  // The oracle selects slot as text under its own name: sort it as the number.
  it.each([
    ['INSTRUCTION_TYPE', 'instruction_type'],
    ['FEE', 'fee'],
    ['SLOT', 'toUInt64(slot)'],
    ['COMPUTE_UNITS', 'compute_units'],
  ] as const)('by %s, both directions, pages of 1 and 3', async (field, column) => {
    const gql = graphqlClient(
      () => ctx.app,
      () => headers,
    );
    for (const [direction, pageSize] of [
      ['ASC', 1],
      ['DESC', 1],
      ['ASC', 3],
      ['DESC', 3],
    ] as const) {
      const expected = (
        await transactionsWhere(
          ctx.services,
          'signature IN {s:Array(String)}',
          { s: sorted },
          ['', 'block_time', 'signature', 'instruction_index'].map((c) => `${c || column} ${direction}`).join(', '),
        )
      ).map((t) => [t.signature, t.instructionType]);
      const got: unknown[] = [];
      let after: string | null = null;
      for (let i = 0; i < 40; i++) {
        const d: { transactions: { nodes: { signature: string; instructionType: string }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } } =
          await dataOf(
            gql(
              `query($s: [String!], $after: String, $n: Int) { transactions(filters: {signatures: $s}, sort: {field: ${field}, direction: ${direction}}, pagination: {first: $n, after: $after}) {
          nodes { signature instructionType } pageInfo { hasNextPage endCursor } } }`,
              { s: sorted, after, n: pageSize },
            ),
          );
        got.push(...d.transactions.nodes.map((n) => [n.signature, n.instructionType]));
        if (!d.transactions.pageInfo.hasNextPage) break;
        after = d.transactions.pageInfo.endCursor;
      }
      expect(got).toEqual(expected);
    }
  });
});

describe('one field read from the stored array by SQL (deletes, benchmarks)', () => {
  it('signature, protocol and block time equal the base table for every hostile record', async () => {
    const got = await ctx.services.wh.query<{ s: string; p: string; t: string }>(
      `SELECT ${signatureRecordField('signature')} AS s, ${signatureRecordField('protocol_name')} AS p, toString(${signatureRecordField('block_time')}) AS t
       FROM tx_by_rid WHERE rid IN (SELECT rid FROM tx_rid_by_sig WHERE sig_key IN (SELECT cityHash64(arrayJoin({s:Array(String)})))) ORDER BY s, t`,
      { params: { s: SIGNATURES } },
    );
    const want = await ctx.services.wh.query<{ s: string; p: string; t: string }>(
      `SELECT signature AS s, protocol_name AS p, toString(toUInt32(block_time)) AS t FROM transactions
       WHERE signature IN {s:Array(String)} ORDER BY s, t`,
      { params: { s: SIGNATURES } },
    );
    expect(got.length).toBeGreaterThanOrEqual(SIGNATURES.length);
    expect(got).toEqual(want);
  });
});

describe('what the pipeline stores', () => {
  it('is text: a received line with bytes that are not UTF-8 is stored as it was checked (each bad sequence U+FFFD), not as the bytes came', async () => {
    const bad = await ctx.services.wh.query<{ s: string }>(
      'SELECT signature AS s FROM transactions WHERE signature IN {s:Array(String)} AND NOT isValidUTF8(instruction_type) ORDER BY s',
      { params: { s: SIGNATURES } },
    );
    expect(bad.map((r) => r.s)).toEqual([b58(`hostile-field-${LEGACY}`, 88)]);
    expect((await transaction(ctx.services, b58('hostile-field-91', 88)))!.instructionType).toBe(`A${'\ufffd'.repeat(6)}B`);
  });
});

describe('nothing stored twice', () => {
  it('a replay of the same records is all duplicates', async () => {
    const before = await baseCount();
    const report = await ctx.services.pipeline.ingest(
      [...RECORDS, invalidUtf8(LEGACY)].map((value, i) => ({ value, position: { line: i + 1 } })),
      'test',
    );
    expect([report.accepted, report.duplicates, report.rejected]).toEqual([0, RECORDS.length + 1, []]);
    expect(await baseCount()).toBe(before);
  });

  it('a view repair of their buckets leaves each record once in the records and the signature index, and every other row as it was', async () => {
    const wh = ctx.services.wh;
    // Beside the repaired buckets: a second instruction of a repaired signature in another
    // hour, and a record of another signature under a repaired record's key and instruction
    // (a hash collision, made by hand: an index entry with its own id) in another hour.
    // Neither is in a repaired bucket; both must stay.
    const other = T0 + 40 * 3600;
    await ingest(ctx.services, [line(5, 'second instruction, another hour', { instruction_index: 7, block_time: other })]);
    const params = { s: b58('collider', 88), of: b58('hostile-field-3', 88), dt: other - T0, r: ((1n << 63n) | 7n).toString() };
    await wh.exec(
      `INSERT INTO tx_by_rid (rid, record)
       SELECT {r:UInt64}, toJSONString(({s:String}, instruction_index, toString(slot), toUInt32(block_time) + {dt:UInt32}, program_id, protocol_name,
         instruction_type, toString(fee), compute_units, accounts_count, success))
       FROM ${SIGNATURE_RECORDS} WHERE signature = {of:String}`,
      { params: { ...params, sigs: [params.of] } },
    );
    await wh.exec('INSERT INTO tx_rid_by_sig SELECT cityHash64(signature), instruction_index, {r:UInt64} FROM transactions WHERE signature = {of:String}', {
      params,
    });
    const all = async () =>
      [
        ...(await wh.query<{ r: string }>(
          "SELECT concat(toString(sig_key), '#', toString(instruction_index), '#', toString(rid)) AS r FROM tx_rid_by_sig ORDER BY r",
        )),
        ...(await wh.query<{ r: string }>("SELECT concat(toString(rid), '#', record) AS r FROM tx_by_rid ORDER BY r")),
      ].map((x) => x.r);
    const before = await all();
    const buckets = [...new Set([...TYPES.keys(), 90, 91, 92, LEGACY].map((i) => T0 + i * 600))].map((t) => ({
      protocol_name: 'jupiter_v6',
      hour_start: t - (t % 3600),
    }));
    await rebuildViewBuckets(wh, buckets);
    expect(await storedBySignature()).toBe(SIGNATURES.length + 2);
    expect(await all()).toEqual(before);
    for (const s of SIGNATURES) expect(await rpc.call('getTransaction', [s])).toEqual(await transaction(ctx.services, s));
  });
});

describe('a record that does not decode', () => {
  it('fails only the lookups it may answer (those that found nothing), not the others read in the same batch', async () => {
    const wh = ctx.services.wh;
    const damaged = b58('damaged-record', 88);
    // A row written by hand or damaged: not the array migration 090 writes, under an id of its own.
    const params = { s: damaged, r: ((1n << 63n) | 8n).toString() };
    await wh.exec('INSERT INTO tx_rid_by_sig VALUES (cityHash64({s:String}), 0, {r:UInt64})', { params });
    await wh.exec("INSERT INTO tx_by_rid VALUES ({r:UInt64}, '[\"truncated')", { params });
    const active = new Set(await ctx.services.analytics.protocols());
    const [damagedKey] = await wh.query<{ k: string }>('SELECT toString(cityHash64({s:String})) AS k', { params: { s: damaged } });
    const lookup = new SignatureLookup();
    // The first read goes out alone; the rest wait for it and go out as one batch.
    const first = lookup.find(wh, SIGNATURES[0]!, active);
    const good = SIGNATURES.slice(1, 4).map((s) => lookup.find(wh, s, active));
    const bad = lookup.find(wh, damaged, active);
    const badKeys = lookup.byKeys(wh, [damagedKey!.k]);
    const outcomes = await Promise.allSettled([first, ...good, bad, badKeys]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'rejected']);
    for (const [i, s] of SIGNATURES.slice(0, 4).entries())
      expect((outcomes[i] as PromiseFulfilledResult<unknown>).value).toEqual(await transaction(ctx.services, s));
    await wh.exec('DELETE FROM tx_rid_by_sig WHERE sig_key = cityHash64({s:String})', { params });
    await wh.exec('DELETE FROM tx_by_rid WHERE rid = {r:UInt64}', { params });
  });
});
