// GraphQL connections paged both ways (Relay): for every connection that pages backward
// (transactions as records, transactions as groups, failedTransactions), a backward walk
// (last/before) holds exactly the items of a forward walk (first/after), in the same order,
// and both equal a direct engine read; pageInfo's four fields at both ends; totalCount
// against a direct engine count, and its estimate when the exact count would pass the
// budget; Relay's refusals and hostile cursors. exportJobs (an in-memory list) and the
// record sorts by a name (PROTOCOL, PROGRAM_ID, INSTRUCTION_TYPE) are walked the same way.
import { describe, expect, it } from 'vitest';
import { PAGE_TOKEN_MAX_CHARS } from '../../core/limits/questions.ts';
import { createKey } from '../support/api-key.ts';
import { FIXTURE_DAYS, PROGRAM_OF } from '../support/fixtures.ts';
import { dataOf, graphqlClient, type Gql, type GraphqlReply } from '../support/graphql-client.ts';
import { graphqlFixture, STRICT } from '../support/graphql-fixture.ts';

const fx = graphqlFixture(1500);
const { gql } = fx;
const sql = <T>(text: string, params: Record<string, unknown> = {}) => fx.t().services.wh.query<T>(text, { params });
const active = () => fx.t().services.registry.activeNames();

const PAGE_INFO = 'pageInfo { hasPreviousPage hasNextPage startCursor endCursor }';

interface PageInfo {
  hasPreviousPage: boolean;
  hasNextPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}
interface Conn<N> {
  edges: { node: N; cursor: string }[];
  nodes: N[];
  pageInfo: PageInfo;
  totalCount?: number;
  totalCountIsEstimate?: boolean;
}

/** One page of a connection field `field(args, pagination: $p)`, with `node` selected. */
async function page<N>(
  field: string,
  args: string,
  node: string,
  p: Record<string, unknown>,
  extra = 'totalCount totalCountIsEstimate',
  client: Gql = gql,
): Promise<Conn<N>> {
  const d = await dataOf(
    client(
      `query($p: Pagination) { c: ${field}(${args}${args ? ', ' : ''}pagination: $p) {
    edges { cursor node { ${node} } } nodes { ${node} } ${PAGE_INFO} ${extra} } }`,
      { p },
    ),
  );
  return d.c as Conn<N>;
}

/** Every page of a walk one way; checks each page's cursors and flags on the way. */
async function walk<N>(
  field: string,
  args: string,
  node: string,
  size: number,
  direction: 'forward' | 'backward',
  client: Gql = gql,
): Promise<{ items: N[]; pages: Conn<N>[] }> {
  const pages: Conn<N>[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 200; i++) {
    const p: Record<string, unknown> = direction === 'forward' ? { first: size, after: cursor } : { last: size, before: cursor };
    const c: Conn<N> = await page<N>(field, args, node, p, undefined, client);
    expect(c.nodes).toEqual(c.edges.map((e) => e.node));
    expect(c.pageInfo.startCursor).toBe(c.edges[0]?.cursor ?? null);
    expect(c.pageInfo.endCursor).toBe(c.edges.at(-1)?.cursor ?? null);
    pages.push(c);
    const [more, started] =
      direction === 'forward' ? [c.pageInfo.hasNextPage, c.pageInfo.hasPreviousPage] : [c.pageInfo.hasPreviousPage, c.pageInfo.hasNextPage];
    // The end a page starts from: the listing's edge without a cursor, items behind it with one.
    expect(started).toBe(cursor !== null);
    if (!more) break;
    expect(c.edges.length).toBe(size);
    cursor = direction === 'forward' ? c.pageInfo.endCursor : c.pageInfo.startCursor;
  }
  const items = direction === 'forward' ? pages.flatMap((c) => c.nodes) : [...pages].reverse().flatMap((c) => c.nodes);
  return { items, pages };
}

/** Forward and backward walks equal each other, the oracle's items in order, and totalCount the oracle's count. */
async function expectBothWays<N>(
  field: string,
  args: string,
  node: string,
  size: number,
  oracle: unknown[],
  key: (n: N) => unknown,
  client: Gql = gql,
): Promise<void> {
  expect(oracle.length).toBeGreaterThan(size); // more than one page each way
  const fwd = await walk<N>(field, args, node, size, 'forward', client);
  const bwd = await walk<N>(field, args, node, size, 'backward', client);
  expect(fwd.items.map(key)).toEqual(oracle);
  expect(bwd.items.map(key)).toEqual(oracle);
  expect(new Set(bwd.items.map((n) => JSON.stringify(key(n)))).size).toBe(new Set(oracle.map((o) => JSON.stringify(o))).size);
  for (const c of [...fwd.pages, ...bwd.pages]) expect([c.totalCount, c.totalCountIsEstimate]).toEqual([oracle.length, false]);
  // Relay: any edge cursor pages both ways. The page before forward page 2 is forward page 1.
  const before = await page<N>(field, args, node, { last: size, before: fwd.pages[1]!.pageInfo.startCursor }, undefined, client);
  expect(before.nodes.map(key)).toEqual(fwd.pages[0]!.nodes.map(key));
  expect([before.pageInfo.hasPreviousPage, before.pageInfo.hasNextPage]).toEqual([false, true]);
  // And the page after the first backward page's start is that page (the listing's end).
  const after = await page<N>(field, args, node, { first: size, after: bwd.pages[1]!.pageInfo.endCursor }, undefined, client);
  expect(after.nodes.map(key)).toEqual(bwd.pages[0]!.nodes.slice(0, size).map(key));
  expect(after.pageInfo.hasPreviousPage).toBe(true);
}

const DAYS = `dateRange: { start: "${FIXTURE_DAYS[0]}", end: "${FIXTURE_DAYS[2]}" }`;
type Rec = { signature: string; blockTime: number; instructionType: string };
const REC = 'signature blockTime instructionType';

/** The oracle of a record listing: the base table's records in the listing's keyset order. */
async function records(where: string, order: 'ASC' | 'DESC', params: Record<string, unknown> = {}): Promise<string[]> {
  const rows = await sql<{ k: string }>(
    `SELECT concat(toString(toUInt32(block_time)), ':', signature, ':', instruction_type) AS k FROM transactions
    WHERE protocol_name IN {active:Array(String)} ${where ? `AND ${where}` : ''}
    ORDER BY block_time ${order}, signature ${order}, instruction_index ${order}`,
    { active: await active(), ...params },
  );
  return rows.map((r) => r.k);
}
const recKey = (n: Rec): string => `${n.blockTime}:${n.signature}:${n.instructionType}`;

describe('transactions (records) page both ways', () => {
  it('newest first, no filters', async () => {
    await expectBothWays<Rec>('transactions', '', REC, 300, await records('', 'DESC'), recKey);
  });

  it('oldest first (sort ASC) with protocols and dateRange', async () => {
    await expectBothWays<Rec>(
      'transactions',
      `filters: { protocols: ["pump_fun", "jupiter_v6"], ${DAYS} }, sort: { direction: ASC }`,
      REC,
      97,
      await records("protocol_name IN ('pump_fun', 'jupiter_v6')", 'ASC'),
      recKey,
    );
  });

  it('with status, instructionTypes and programIds (filters the hourly views do not keep)', async () => {
    await expectBothWays<Rec>(
      'transactions',
      'filters: { status: SUCCEEDED, instructionTypes: ["buy", "sell", "swap"] }',
      REC,
      113,
      await records("success AND instruction_type IN ('buy', 'sell', 'swap')", 'DESC'),
      recKey,
    );
    await expectBothWays<Rec>(
      'transactions',
      `filters: { programIds: ["${PROGRAM_OF.pump_fun}", "${PROGRAM_OF.whirlpool}"] }`,
      REC,
      150,
      await records('program_id IN {p:Array(String)}', 'DESC', { p: [PROGRAM_OF.pump_fun, PROGRAM_OF.whirlpool] }),
      recKey,
    );
  });

  it('one page holding everything: no page before or after, both ways', async () => {
    const args = `filters: { protocols: ["whirlpool"], dateRange: { start: "${FIXTURE_DAYS[1]}", end: "${FIXTURE_DAYS[1]}" } }`;
    const oracle = await records(`protocol_name = 'whirlpool' AND toDate(block_time) = '${FIXTURE_DAYS[1]}'`, 'DESC');
    for (const p of [{ first: 1000 }, { last: 1000 }]) {
      const c = await page<Rec>('transactions', args, REC, p);
      expect(c.nodes.map(recKey)).toEqual(oracle);
      expect(c.pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: false });
      expect(c.totalCount).toBe(oracle.length);
    }
  });

  it('signatures: totalCount is a point read, exact', async () => {
    const [a, b] = (await records("protocol_name = 'pump_fun'", 'DESC')).map((k) => k.split(':')[1]!);
    const c = await page<Rec>('transactions', `filters: { signatures: ["${a}", "${b}"] }`, REC, { last: 1 });
    const [n] = await sql<{ n: string }>(
      'SELECT count() AS n FROM transactions WHERE signature IN {s:Array(String)} AND protocol_name IN {active:Array(String)}',
      { s: [a, b], active: await active() },
    );
    expect([c.totalCount, c.totalCountIsEstimate, c.edges.length, c.pageInfo.hasPreviousPage]).toEqual([Number(n!.n), false, 1, Number(n!.n) > 1]);
  });
});

type GroupNode = { protocol: string; hour: number; sumFee: number; count: number };

describe('transactions (groups) page both ways', () => {
  it('by PROTOCOL and HOUR sorted by SUM_FEE, ASC and DESC, with protocols and instructionTypes', async () => {
    for (const dir of ['ASC', 'DESC'] as const) {
      const ref = await sql<{ p: string; h: number; s: string }>(
        `SELECT protocol_name AS p, toUInt32(toStartOfHour(block_time)) AS h, sum(fee) AS s FROM transactions
         WHERE protocol_name IN {a:Array(String)} AND instruction_type IN ('buy', 'sell', 'swap', 'route')
         GROUP BY p, h ORDER BY s ${dir}, p ${dir}, h ${dir}`,
        { a: ['pump_fun', 'jupiter_v6', 'whirlpool', 'pump_amm'] },
      );
      await expectBothWays<GroupNode>(
        'transactions',
        `filters: { protocols: ["pump_fun", "jupiter_v6", "whirlpool", "pump_amm"], instructionTypes: ["buy", "sell", "swap", "route"] }, groupBy: [PROTOCOL, HOUR], metrics: [SUM_FEE], sort: { field: SUM_FEE, direction: ${dir} }`,
        'protocol hour sumFee',
        40,
        ref.map((r) => [r.p, r.h, Number(r.s)]),
        (n) => [n.protocol, n.hour, n.sumFee],
      );
    }
  });

  it('by PROTOCOL with COUNT over every protocol (groups tied on nothing but their key)', async () => {
    const ref = await sql<{ p: string; n: string }>(
      'SELECT protocol_name AS p, count() AS n FROM transactions WHERE protocol_name IN {a:Array(String)} GROUP BY p ORDER BY n DESC, p DESC',
      { a: await active() },
    );
    await expectBothWays<GroupNode>(
      'transactions',
      'groupBy: [PROTOCOL], metrics: [COUNT]',
      'protocol count',
      2,
      ref.map((r) => [r.p, Number(r.n)]),
      (n) => [n.protocol, n.count],
    );
  });

  it('metrics without groupBy: one group, no page before or after; totalCount 1', async () => {
    for (const p of [{ first: 5 }, { last: 5 }]) {
      const c = await page<GroupNode>('transactions', 'metrics: [COUNT]', 'count', p);
      expect([c.edges.length, c.totalCount, c.pageInfo.hasPreviousPage, c.pageInfo.hasNextPage]).toEqual([1, 1, false, false]);
    }
  });
});

describe('sorted listings and record-level filters (the question breadth) page both ways', () => {
  type Fee = { signature: string; blockTime: number; fee: number };
  it('records sorted by FEE, ASC and DESC, with a feeRange (base-table count, exact)', async () => {
    for (const dir of ['ASC', 'DESC'] as const) {
      const rows = await sql<{ k: string }>(
        `SELECT concat(toString(fee), ':', toString(toUInt32(block_time)), ':', signature) AS k FROM transactions
        WHERE protocol_name IN {active:Array(String)} AND fee >= 5000
        ORDER BY fee ${dir}, block_time ${dir}, signature ${dir}, instruction_index ${dir}`,
        { active: await active() },
      );
      await expectBothWays<Fee>(
        'transactions',
        `filters: { feeRange: { min: 5000 } }, sort: { field: FEE, direction: ${dir} }`,
        'signature blockTime fee',
        211,
        rows.map((r) => r.k),
        (n) => `${n.fee}:${n.blockTime}:${n.signature}`,
      );
    }
  });

  // The names a record carries: the string column first, then time, as the engine orders them.
  type Named = { signature: string; blockTime: number; protocolName: string; programId: string; instructionType: string };
  const NAMED = 'signature blockTime protocolName programId instructionType';
  for (const [field, column, of, dir, filter, where, size] of [
    [
      'PROTOCOL',
      'protocol_name',
      (n: Named) => n.protocolName,
      'ASC',
      `filters: { ${DAYS} }`,
      `block_time BETWEEN toDateTime('${FIXTURE_DAYS[0]} 00:00:00', 'UTC') AND toDateTime('${FIXTURE_DAYS[2]} 23:59:59', 'UTC')`,
      173,
    ],
    ['PROGRAM_ID', 'program_id', (n: Named) => n.programId, 'DESC', 'filters: { status: SUCCEEDED }', 'success', 199],
    [
      'INSTRUCTION_TYPE',
      'instruction_type',
      (n: Named) => n.instructionType,
      'ASC',
      'filters: { protocols: ["pump_fun", "jupiter_v6", "whirlpool"], feeRange: { max: 20000 } }',
      "protocol_name IN ('pump_fun', 'jupiter_v6', 'whirlpool') AND fee <= 20000",
      91,
    ],
  ] as const) {
    it(`records sorted by ${field} (${dir}) with a filter, then by time`, async () => {
      const rows = await sql<{ k: string }>(
        `SELECT concat(${column}, ':', toString(toUInt32(block_time)), ':', signature, ':', instruction_type) AS k FROM transactions
        WHERE protocol_name IN {active:Array(String)} AND ${where}
        ORDER BY ${column} ${dir}, block_time ${dir}, signature ${dir}, instruction_index ${dir}`,
        { active: await active() },
      );
      // The fixture has several values of the column, or the sort says nothing.
      expect(new Set(rows.map((r) => r.k.split(':')[0])).size).toBeGreaterThan(1);
      await expectBothWays<Named>(
        'transactions',
        `${filter}, sort: { field: ${field}, direction: ${dir} }`,
        NAMED,
        size,
        rows.map((r) => r.k),
        (n) => `${of(n)}:${n.blockTime}:${n.signature}:${n.instructionType}`,
      );
    });
  }

  it('a listing sorted by a name is priced by the cost model and held to the budget', async () => {
    const doc = '{ transactions(filters: { status: SUCCEEDED }, sort: { field: PROGRAM_ID }, pagination: { last: 50 }) { nodes { signature } } }';
    const cost = (await gql(doc)).body.extensions.cost.requested as number;
    expect(cost).toBeGreaterThan(0);
    const tight = await fx.appWith({ budgets: { free: cost - 1, x402: cost - 1, enterprise: cost - 1 } });
    const refused = await graphqlClient(() => tight, fx.headers)(doc, undefined, STRICT);
    expect([refused.status, refused.body.errors?.[0]?.extensions.code]).toEqual([400, 'QUERY_TOO_COMPLEX']);
    expect(refused.body.errors![0]!.message).toMatch(new RegExp(`would cost ${cost}`));
    const exact = await fx.appWith({ budgets: { free: cost, x402: cost, enterprise: cost } });
    expect((await graphqlClient(() => exact, fx.headers)(doc)).body.errors).toBeUndefined();
  });

  it('a cursor of one record sort is refused by another, and an edited one by its own', async () => {
    const c = await page<Named>('transactions', 'sort: { field: PROTOCOL }', 'signature', { first: 2 }, '');
    const cur = c.pageInfo.endCursor!;
    for (const other of ['FEE', 'PROGRAM_ID', 'DATE']) {
      const r = await gql(
        `{ transactions(sort: { field: ${other} }, pagination: { last: 2, before: ${JSON.stringify(cur)} }) { edges { cursor } } }`,
        undefined,
        STRICT,
      );
      expectRefused(r, /pagination\.before (is not a pagination token|belongs to a listing with other filters)/);
    }
    const parts = JSON.parse(Buffer.from(cur, 'base64url').toString('utf8')) as unknown[];
    const edited = Buffer.from(JSON.stringify([parts[0], `${String(parts[1])}z`, ...parts.slice(2)])).toString('base64url');
    const r = await gql(
      `{ transactions(sort: { field: PROTOCOL }, pagination: { first: 2, after: ${JSON.stringify(edited)} }) { edges { cursor } } }`,
      undefined,
      STRICT,
    );
    expectRefused(r, /pagination\.after is not a pagination token/);
  });

  it('groups sorted by a key (PROTOCOL, then DATE), with success (read from the base table)', async () => {
    for (const dir of ['ASC', 'DESC'] as const) {
      const ref = await sql<{ p: string; d: string; n: string }>(
        `SELECT protocol_name AS p, toString(toDate(block_time)) AS d, count() AS n FROM transactions
         WHERE protocol_name IN {a:Array(String)} AND success GROUP BY p, d ORDER BY p ${dir}, d ${dir}`,
        { a: await active() },
      );
      await expectBothWays<{ protocol: string; date: string; count: number }>(
        'transactions',
        `filters: { success: true }, groupBy: [PROTOCOL, DATE], sort: { field: PROTOCOL, direction: ${dir} }`,
        'protocol date count',
        3,
        ref.map((r) => [r.p, r.d, Number(r.n)]),
        (n) => [n.protocol, n.date, n.count],
      );
    }
  });

  it("a sorted listing's cursor is refused by the time-ordered listing, as before", async () => {
    const c = await page<Fee>('transactions', 'sort: { field: FEE }', 'signature', { first: 2 }, '');
    const r = await gql(`{ transactions(pagination: { last: 2, before: ${JSON.stringify(c.pageInfo.endCursor)} }) { edges { cursor } } }`, undefined, STRICT);
    expectRefused(r, /pagination\.before is not a pagination token/);
  });

  it("group totalCount with a record-level filter over budget: the views' count of the other filters, marked estimated", async () => {
    const args = 'filters: { feeRange: { min: 20000 } }, groupBy: [PROTOCOL, HOUR]';
    const [exact] = await sql<{ n: string }>(
      `SELECT count() AS n FROM (SELECT DISTINCT protocol_name, toStartOfHour(block_time) FROM transactions
      WHERE protocol_name IN {a:Array(String)} AND fee >= 20000)`,
      { a: await active() },
    );
    const [others] = await sql<{ n: string }>(
      `SELECT count() AS n FROM (SELECT DISTINCT protocol_name, toStartOfHour(block_time) FROM transactions
      WHERE protocol_name IN {a:Array(String)})`,
      { a: await active() },
    );
    expect(Number(others!.n)).toBeGreaterThan(Number(exact!.n));
    const ask = (client: Gql, extra: string) => client(`{ transactions(${args}, pagination: { first: 10 }) { edges { cursor } ${extra} } }`);
    const pageOnly = (await ask(gql, '')).body.extensions.cost.requested;
    const withCount = await ask(gql, 'totalCount totalCountIsEstimate');
    expect(withCount.body.data!.transactions).toMatchObject({ totalCount: Number(exact!.n), totalCountIsEstimate: false });
    const full = withCount.body.extensions.cost.requested;
    expect(full).toBeGreaterThan(pageOnly);
    const budget = full - 1;
    const tight = await fx.appWith({ budgets: { free: budget, x402: budget, enterprise: budget } });
    const estimated = await ask(
      graphqlClient(() => tight, fx.headers),
      'totalCount totalCountIsEstimate',
    );
    expect(estimated.status, estimated.text.slice(0, 300)).toBe(200);
    expect(estimated.body.data!.transactions).toMatchObject({ totalCount: Number(others!.n), totalCountIsEstimate: true });
    expect(estimated.body.extensions.cost.requested).toBeLessThanOrEqual(budget);
  });
});

describe('failedTransactions page both ways', () => {
  it('by PROTOCOL and error message, with errorPattern', async () => {
    const ref = await sql<{ p: string; e: string; n: string }>(
      `SELECT protocol_name AS p, error_message AS e, count() AS n FROM transactions
       WHERE NOT success AND protocol_name IN {a:Array(String)} AND positionCaseInsensitiveUTF8(error_message, 'error') > 0
       GROUP BY p, e ORDER BY n DESC, p DESC, e DESC`,
      { a: await active() },
    );
    await expectBothWays<{ protocolName: string; errorMessage: string; count: number }>(
      'failedTransactions',
      'filters: { errorPattern: "ERROR" }, groupBy: [PROTOCOL]',
      'protocolName errorMessage count',
      3,
      ref.map((r) => [r.p, r.e, Number(r.n)]),
      (n) => [n.protocolName, n.errorMessage, n.count],
    );
  });
});

describe('exportJobs pages both ways', () => {
  it("a key's jobs, newest first: the same jobs both ways, flags exact, totalCount exact; hostile cursors refused", async () => {
    // A key of its own, so the listing holds exactly the jobs made here; each is cancelled
    // at once (listed like any other, and no engine work).
    const { key } = await createKey(fx.t().app, 'enterprise', 'paging-jobs');
    const mine = graphqlClient(
      () => fx.t().app,
      () => ({ 'x-api-key': key }),
    );
    const made: string[] = [];
    for (let i = 0; i < 11; i++) {
      const d = await dataOf(mine(`mutation { exportDataset(config: { format: CSV, columns: ["fee"], filters: { protocols: ["whirlpool"] } }) { id } }`));
      made.push(d.exportDataset.id);
      await dataOf(mine('mutation($id: ID!) { cancelExportJob(id: $id) { id } }', { id: made.at(-1) }));
    }
    // The reference: creation order, newest first.
    await expectBothWays<{ id: string }>('exportJobs', '', 'id', 3, [...made].reverse(), (n) => n.id, mine);
    // Another key's cursor, and edited, forged or oversized ones, as before and after.
    const c = await page<{ id: string }>('exportJobs', '', 'id', { first: 2 }, '', mine);
    const good = c.pageInfo.endCursor!;
    const parts = JSON.parse(Buffer.from(good, 'base64url').toString('utf8')) as unknown[];
    const forged = Buffer.from(JSON.stringify([parts[0], (parts[1] as number) - 1, ...parts.slice(2)])).toString('base64url');
    const flipped = `${good.slice(0, 10)}${good[10] === 'A' ? 'B' : 'A'}${good.slice(11)}`;
    for (const bad of [forged, flipped, `${good}=`, 'bm90IGEgY3Vyc29y', '', 'A'.repeat(PAGE_TOKEN_MAX_CHARS + 1)]) {
      expectRefused(
        await mine(`{ exportJobs(pagination: { last: 2, before: ${JSON.stringify(bad)} }) { edges { cursor } } }`, undefined, STRICT),
        /pagination\.before is not a cursor/,
      );
      expectRefused(
        await mine(`{ exportJobs(pagination: { first: 2, after: ${JSON.stringify(bad)} }) { edges { cursor } } }`, undefined, STRICT),
        /pagination\.after is not a cursor/,
      );
    }
    expectRefused(
      await gql(`{ exportJobs(pagination: { last: 2, before: ${JSON.stringify(good)} }) { edges { cursor } } }`, undefined, STRICT),
      /pagination\.before is not a cursor/,
    );
  });
});

describe('totalCount when the exact count would pass the budget', () => {
  it("is the hourly views' count of every filter but programIds (an upper bound), marked estimated; exact when it fits", async () => {
    const programs = [PROGRAM_OF.pump_fun!];
    const args = `filters: { protocols: ["pump_fun", "jupiter_v6"], programIds: ["${programs[0]}"], ${DAYS} }`;
    const [exact] = await sql<{ n: string }>(
      "SELECT count() AS n FROM transactions WHERE protocol_name IN ('pump_fun', 'jupiter_v6') AND program_id IN {p:Array(String)}",
      { p: programs },
    );
    const [others] = await sql<{ n: string }>("SELECT count() AS n FROM transactions WHERE protocol_name IN ('pump_fun', 'jupiter_v6')");
    expect(Number(others!.n)).toBeGreaterThan(Number(exact!.n));
    const ask = (client: Gql, extra: string) => client(`{ transactions(${args}, pagination: { first: 10 }) { edges { cursor } ${extra} } }`);
    const pageOnly = (await ask(gql, '')).body.extensions.cost.requested;
    const withCount = await ask(gql, 'totalCount totalCountIsEstimate');
    expect(withCount.body.data!.transactions).toMatchObject({ totalCount: Number(exact!.n), totalCountIsEstimate: false });
    const full = withCount.body.extensions.cost.requested;
    expect(full).toBeGreaterThan(pageOnly);

    // A budget the page fits in but not the page and the exact count: the estimate, charged instead.
    const budget = full - 1;
    const tight = await fx.appWith({ budgets: { free: budget, x402: budget, enterprise: budget } });
    const viaTight = graphqlClient(() => tight, fx.headers);
    const estimated = await ask(viaTight, 'totalCount totalCountIsEstimate');
    expect(estimated.status, estimated.text.slice(0, 300)).toBe(200);
    expect(estimated.body.data!.transactions).toMatchObject({ totalCount: Number(others!.n), totalCountIsEstimate: true });
    expect(estimated.body.extensions.cost.requested).toBeLessThanOrEqual(budget);
    expect(estimated.body.extensions.cost.requested).toBeGreaterThan(pageOnly);
    // The same question with room for the exact count is exact.
    const roomy = await fx.appWith({ budgets: { free: full, x402: full, enterprise: full } });
    expect(
      (
        await ask(
          graphqlClient(() => roomy, fx.headers),
          'totalCount totalCountIsEstimate',
        )
      ).body.data!.transactions,
    ).toMatchObject({ totalCount: Number(exact!.n), totalCountIsEstimate: false });
  });

  it('is read (and charged) only when selected; so is the flag of the end a page starts from', async () => {
    const c = await page<Rec>('transactions', '', 'signature', { first: 5 }, '');
    const cost = async (q: string) => (await gql(q)).body.extensions.cost.requested;
    const base = `{ transactions(pagination: { first: 5, after: "${c.pageInfo.endCursor}" }) { edges { cursor } pageInfo { hasNextPage } `;
    const plain = await cost(`${base} } }`);
    expect(await cost(`${base} totalCount } }`)).toBeGreaterThan(plain);
    expect(await cost(`${base} pageInfo { hasPreviousPage } } }`)).toBeGreaterThan(plain);
    // On a first page the start is the listing's edge: nothing to read.
    expect(await cost('{ transactions(pagination: { first: 5 }) { edges { cursor } pageInfo { hasNextPage hasPreviousPage } } }')).toBe(
      await cost('{ transactions(pagination: { first: 5 }) { edges { cursor } pageInfo { hasNextPage } } }'),
    );
  });
});

function expectRefused(r: GraphqlReply<unknown>, message: RegExp): void {
  expect(r.status, r.text.slice(0, 400)).toBe(400);
  expect(r.body.data).toBeUndefined();
  expect(r.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
  expect(r.body.errors!.map((e) => e.message).join('\n')).toMatch(message);
  expect(r.text).not.toMatch(/\n\s+at |\.ts:\d+|node_modules|DB::Exception/);
}

describe("refusals (Relay's rules and hostile cursors) are 400 BAD_USER_INPUT naming the argument", () => {
  const ask = (field: string, pagination: string, extra = '') =>
    gql(`{ ${field}(${extra}pagination: { ${pagination} }) { edges { cursor } } }`, undefined, STRICT);

  it('first with last, after with before, first with before, last with after; sizes out of range', async () => {
    const c = await page<Rec>('transactions', '', 'signature', { first: 2 }, '');
    const cur = JSON.stringify(c.pageInfo.endCursor);
    for (const field of ['transactions', 'failedTransactions']) {
      expectRefused(await ask(field, 'first: 2, last: 2'), /pagination\.first and pagination\.last cannot be used together/);
      expectRefused(await ask(field, `after: ${cur}, before: ${cur}`), /pagination\.after and pagination\.before cannot be used together/);
      expectRefused(await ask(field, `first: 2, before: ${cur}`), /pagination\.before pages backward: use it with pagination\.last/);
      expectRefused(await ask(field, `last: 2, after: ${cur}`), /pagination\.after pages forward: use it with pagination\.first/);
      expectRefused(await ask(field, 'last: 0'), /pagination\.last must be between 1 and 1000/);
      expectRefused(await ask(field, 'last: 1001'), /pagination\.last must be between 1 and 1000/);
    }
    // exportJobs: the same rules; its page sizes are the export listing's (at most 100).
    const j = await page<{ id: string }>('exportJobs', '', 'id', { first: 1 }, '');
    const jc = JSON.stringify(j.pageInfo.endCursor ?? 'x');
    expectRefused(await ask('exportJobs', 'first: 2, last: 2'), /pagination\.first and pagination\.last cannot be used together/);
    expectRefused(await ask('exportJobs', `after: ${jc}, before: ${jc}`), /pagination\.after and pagination\.before cannot be used together/);
    expectRefused(await ask('exportJobs', `first: 2, before: ${jc}`), /pagination\.before pages backward/);
    expectRefused(await ask('exportJobs', `last: 2, after: ${jc}`), /pagination\.after pages forward/);
    expectRefused(await ask('exportJobs', 'last: 0'), /pagination\.last must be a whole number from 1 to 100/);
    expectRefused(await ask('exportJobs', 'last: 101'), /pagination\.last must be a whole number from 1 to 100/);
  });

  it('tampered, forged, foreign and oversized before cursors', async () => {
    const c = await page<Rec>('transactions', '', 'signature', { first: 2 }, '');
    const good = c.pageInfo.endCursor!;
    const decoded = JSON.parse(Buffer.from(good, 'base64url').toString('utf8')) as unknown[];
    const forged = Buffer.from(JSON.stringify([decoded[0], (decoded[1] as number) - 1, ...decoded.slice(2)])).toString('base64url');
    const flipped = `${good.slice(0, 10)}${good[10] === 'A' ? 'B' : 'A'}${good.slice(11)}`;
    for (const bad of [forged, flipped, 'bm90IGEgY3Vyc29y', `${good}=`]) {
      expectRefused(await ask('transactions', `last: 2, before: ${JSON.stringify(bad)}`), /pagination\.before is not a pagination token/);
    }
    expectRefused(
      await ask('transactions', `last: 2, before: ${JSON.stringify('A'.repeat(PAGE_TOKEN_MAX_CHARS + 1))}`),
      new RegExp(`pagination\\.before is not a cursor this service issued \\(at most ${PAGE_TOKEN_MAX_CHARS} characters\\)`),
    );
    expectRefused(await ask('transactions', 'last: 2, before: ""'), /pagination\.before is not a cursor/);
    // A cursor of this listing with other filters, and a group cursor sent to records.
    expectRefused(
      await ask('transactions', `last: 2, before: ${JSON.stringify(good)}`, 'filters: { status: FAILED }, '),
      /pagination\.before belongs to a listing with other filters/,
    );
    const g = await page<GroupNode>('transactions', 'groupBy: [PROTOCOL]', 'protocol', { first: 1 }, '');
    expectRefused(await ask('transactions', `last: 2, before: ${JSON.stringify(g.pageInfo.endCursor)}`), /pagination\.before is not a pagination token/);
    expectRefused(await ask('failedTransactions', `last: 2, before: ${JSON.stringify(g.pageInfo.endCursor)}`), /pagination\.before is not a pagination token/);
  });
});

describe('docs/graphql.md', () => {
  it('its paging example runs as written', async () => {
    const { readFileSync } = await import('node:fs');
    const doc = readFileSync(new URL('../../docs/graphql.md', import.meta.url), 'utf8');
    const example = /### Paging[\s\S]*?```graphql\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(example).toBeDefined();
    const d = await dataOf(gql(example!));
    const [n] = await sql<{ n: string }>("SELECT count() AS n FROM transactions WHERE protocol_name = 'pump_fun' AND NOT success");
    expect(d.transactions).toMatchObject({ totalCount: Number(n!.n), totalCountIsEstimate: false, pageInfo: { hasNextPage: false } });
    expect(d.transactions.nodes.length).toBe(Math.min(50, Number(n!.n)));
  });
});
