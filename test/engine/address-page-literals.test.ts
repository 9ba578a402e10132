// The address page without bound parameters (issue 37): on the embedded transport its
// statements carry their values as literals (warehouse/literal-params.ts), so they run on the
// serving sessions beside each other rather than in chDB's one process-wide line of bound
// statements. The same pages, counts and rows read as the bound form (the server transport's),
// page after page, with every filter: the literals leave the answer and the key's granules as
// they were (a key condition over sipHash128(unhex(…)) still picks the address's range).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countAddressTransactions, listAddressTransactions, type AddressListRequest } from '../../api/analytics/records/address-transactions.ts';
import type { QueryOptions, Warehouse } from '../../warehouse/warehouse.ts';
import { TABLES } from '../../warehouse/tables.ts';
import { ingestDemo, PROGRAM_OF } from '../support/fixtures.ts';
import { activeProtocols, busiestAccount } from '../support/oracle.ts';
import { startServices } from '../support/services.ts';

let services: Awaited<ReturnType<typeof startServices>>;
let hot: string;
let visible: string[];

/** The services' warehouse, with what its statements asked for and read; `bound`: literalParams taken away. */
function probe(bound: boolean): Warehouse & { literal: boolean[]; rowsRead: number } {
  const inner = services.wh;
  const seen = { literal: [] as boolean[], rowsRead: 0 };
  const opts = (o: QueryOptions = {}): QueryOptions => {
    seen.literal.push(o.params === undefined || o.literalParams === true);
    return {
      ...o,
      // No condition cache: the second of two runs would read fewer granules either way.
      settings: { ...o.settings, use_query_condition_cache: 0 },
      literalParams: bound ? false : o.literalParams,
      onStats: (s) => {
        seen.rowsRead += s.rowsRead;
        o.onStats?.(s);
      },
    };
  };
  return Object.assign(seen, {
    transport: inner.transport,
    query: <T>(sql: string, o?: QueryOptions) => inner.query<T>(sql, opts(o)),
    queryText: (sql: string, f: string, o?: QueryOptions) => inner.queryText(sql, f, opts(o)),
    stream: (sql: string, f: string, o?: QueryOptions) => inner.stream(sql, f, opts(o)),
    insert: inner.insert.bind(inner),
    insertBytes: inner.insertBytes.bind(inner),
    exec: (sql: string, o?: QueryOptions) => inner.exec(sql, opts(o)),
    close: async () => {},
  });
}

beforeAll(async () => {
  services = await startServices();
  await ingestDemo(services, 2000);
  hot = await busiestAccount(services);
  visible = await activeProtocols(services);
});
afterAll(async () => services?.cleanup());

/** Every page of a listing, walked with its cursors, and what the statements read and asked for. */
async function walk(wh: ReturnType<typeof probe>, req: Omit<AddressListRequest, 'cursor'>) {
  const pages: unknown[] = [];
  let cursor: string | undefined;
  do {
    const page = await listAddressTransactions(wh, services.pageTokens, { ...req, cursor }, visible);
    pages.push(page.data);
    cursor = page.next ?? undefined;
  } while (cursor !== undefined);
  const count = await countAddressTransactions(wh, req.address, req.filters, visible);
  return { pages, count, rowsRead: wh.rowsRead, literal: wh.literal };
}

describe('address pages with literal parameters', () => {
  const cases: [string, () => Omit<AddressListRequest, 'cursor'>][] = [
    ['the busiest account, newest first', () => ({ address: hot, filters: {}, sortOrder: 'desc', limit: 7 })],
    ['the busiest account, oldest first, succeeded only', () => ({ address: hot, filters: { status: 'succeeded' }, sortOrder: 'asc', limit: 5 })],
    [
      'a time range and programIds',
      () => ({
        address: hot,
        filters: { range: { gte: 0, lte: 4294967295 }, programIds: [PROGRAM_OF.jupiter_v6!, "x'); DROP TABLE tx_by_rid; --"] },
        sortOrder: 'desc',
        limit: 3,
      }),
    ],
    ['an address no record has, with quotes and a NUL', () => ({ address: "no'such\\\0address", filters: {}, sortOrder: 'desc', limit: 10 })],
  ];

  it.each(cases)('%s: the same pages, count and rows read as bound, with no bound statement', async (_label, req) => {
    const bound = await walk(probe(true), req());
    const literal = await walk(probe(false), req());
    expect(literal.pages).toEqual(bound.pages);
    expect(literal.count).toBe(bound.count);
    expect(literal.rowsRead).toBe(bound.rowsRead);
    expect(literal.literal.every(Boolean)).toBe(true);
  });

  it("reads the address's granules, not the whole table", async () => {
    const wh = probe(false);
    await listAddressTransactions(wh, services.pageTokens, { address: hot, filters: {}, sortOrder: 'desc', limit: 10 }, visible);
    const [row] = await services.wh.query<{ n: string }>(`SELECT count() AS n FROM ${TABLES.txByAddress}`);
    expect(wh.rowsRead).toBeLessThan(Number(row!.n));
  });
});
