// GraphQL answers bounded and streamed (the hostile review's findings): a document's items
// are bounded across its aliases before anything runs (and counted as fields answer where
// their number is known only then), each answer has a byte budget and is written out in
// chunks so the event loop is never held for long, listings are charged for every statement
// they may run, and no HTML page can be framed.
import { describe, expect, it } from 'vitest';
import { GRAPHQL_MAX_DOCUMENT_POINTS, GRAPHQL_RESPONSE_BUDGET_BYTES } from '../../core/limits/graphql.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { longestLoopBlock } from '../support/loop-probe.ts';
import { graphqlFixture, STRICT } from '../support/graphql-fixture.ts';

const fx = graphqlFixture(20_000);
const { gql, appWith } = fx;

/** The review's field: hourly buckets over 26 days, by protocol and instruction type, 4 metrics (~95,000 points on this data). */
const AUDIT_FIELD =
  'timeSeries(filters: {dateRange: {start: "2024-12-06", end: "2024-12-31"}}, bucketBy: HOUR, groupBy: [PROTOCOL, INSTRUCTION_TYPE], metrics: [COUNT, SUM_FEE, MAX_FEE, MIN_FEE]) { timestamp value label }';
const aliased = (n: number, field: string, comment = '') =>
  `${comment ? `# ${comment}\n` : ''}{ ${Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ')} }`;

describe("the review's document: ten aliased hourly time series", () => {
  it("is refused before it runs, naming the document's limit, with a small answer and the event loop free", async () => {
    const { result: r, maxBlockMs } = await longestLoopBlock(() => gql(aliased(10, AUDIT_FIELD, `unique ${Math.random()}`), undefined, STRICT));
    console.info(`the review's document: longest event-loop block ${maxBlockMs.toFixed(0)} ms, ${r.text.length} bytes`);
    expect(r.status).toBe(400);
    expect(r.body.data).toBeUndefined();
    expect(r.body.errors).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(new RegExp(`at most ${GRAPHQL_MAX_DOCUMENT_POINTS} are allowed per document; ask for less`)),
        extensions: { code: 'QUERY_TOO_COMPLEX' },
      }),
    ]);
    expect(r.text.length).toBeLessThan(10_000);
    // The event-loop figure is printed, not asserted (no wall-clock assertions): bench/hostile-load.ts measures it as ratios.
  });

  it('where the series are known only once read (by instruction type), the items are counted as fields answer and stop at the bound', async () => {
    // One protocol before reading, dozens of instruction types after: 48 x 1 x 1 = 48 planned points.
    const field =
      'timeSeries(filters: {protocols: ["jupiter_v6"], dateRange: {start: "2024-12-30", end: "2024-12-31"}}, groupBy: [INSTRUCTION_TYPE]) { value }';
    const small = await appWith({ maxDocumentPoints: 200 });
    const r = await graphqlClient(() => small, fx.headers)(aliased(3, field));
    expect(r.status).toBe(200);
    expect(r.body.errors?.[0]).toMatchObject({
      message: expect.stringMatching(/answer more than 200 items .* at most 200 are allowed per document/),
      extensions: { code: 'QUERY_TOO_COMPLEX' },
    });
    // Under the real bound the same document is answered.
    const whole = await gql(aliased(3, field));
    expect(whole.body.errors).toBeUndefined();
    expect((whole.body.data!.a0 as unknown[]).length).toBeGreaterThan(200 / 3);
  });
});

describe('a heavy document within the limits', () => {
  it('is answered whole, streamed, under the byte budget, without holding the event loop for long', async () => {
    // 10 x 624 hours x 7 protocols = 43,680 points planned: under GRAPHQL_MAX_DOCUMENT_POINTS.
    const field =
      'timeSeries(filters: {dateRange: {start: "2024-12-06", end: "2024-12-31"}}, bucketBy: HOUR, groupBy: [PROTOCOL], metrics: [COUNT]) { timestamp value label }';
    const { result: r, maxBlockMs } = await longestLoopBlock(() => gql(aliased(10, field, `heavy ${Math.random()}`)));
    console.info(`heavy allowed document: longest event-loop block ${maxBlockMs.toFixed(0)} ms, ${r.text.length} bytes`);
    expect(r.status).toBe(200);
    expect(r.body.errors).toBeUndefined();
    expect(Object.keys(r.body.data!)).toHaveLength(10);
    expect(r.text.length).toBeGreaterThan(2_000_000);
    expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(GRAPHQL_RESPONSE_BUDGET_BYTES);
    // The event-loop figure is printed above, not asserted (no wall-clock assertions); the
    // chunked writer's own test compares it with JSON.stringify in one run.
  });
});

describe('the byte budget of one answer', () => {
  it('fields whose part would pass it answer null with QUERY_TOO_COMPLEX naming the budget; the fields before keep theirs; never a 5xx', async () => {
    const small = await appWith({ responseBudgetBytes: 300_000 });
    const listing = 'transactions(pagination: {first: 500}) { edges { node { signature slot blockTime programId protocolName fee } cursor } }';
    const r = await graphqlClient(() => small, fx.headers)(aliased(3, listing), undefined, STRICT);
    expect(r.status).toBe(200);
    expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(300_000);
    expect((r.body.data!.a0 as { edges: unknown[] }).edges).toHaveLength(500);
    expect(r.body.data!.a1).toBeNull();
    expect(r.body.data!.a2).toBeNull();
    expect(r.body.errors).toEqual([
      {
        message: expect.stringMatching(/^this field's answer would take the response past its 300000 bytes budget; ask for less \(a smaller pagination\.first/),
        path: ['a1'],
        extensions: { code: 'QUERY_TOO_COMPLEX' },
      },
      { message: expect.any(String), path: ['a2'], extensions: { code: 'QUERY_TOO_COMPLEX' } },
    ]);
    expect(r.body.extensions.cost.requested).toBeGreaterThan(0);
  });

  it('an answer cut for the budget is not remembered: the next identical request is cut again, not answered from the answer cache', async () => {
    const small = await appWith({ responseBudgetBytes: 100_000 });
    const q = aliased(2, 'transactions(pagination: {first: 300}) { edges { cursor } }');
    const send = graphqlClient(() => small, fx.headers);
    const first = await send(q);
    const again = await send(q);
    expect(first.body.errors?.length).toBeGreaterThan(0);
    // The same answer but its statistics (each request's own: api/services/access/answer-stats.ts).
    expect(withoutStats(again.text)).toBe(withoutStats(first.text));
  });
});

/** An answer's text without extensions.stats, which differs per request by design. */
const withoutStats = (text: string): string => text.replace(/,"stats":\{[^}]*\}/, '');

describe('the answer cache', () => {
  it('answers an identical query again from the bytes it kept, the same text', async () => {
    const q = `# memo ${Math.random()}\n{ protocols protocolStats { protocolName totalTransactions } }`;
    const first = await gql(q);
    const again = await gql(q);
    expect(first.status).toBe(200);
    expect(withoutStats(again.text)).toBe(withoutStats(first.text));
    // Answered from the answer cache: nothing read again.
    expect((again.body.extensions as unknown as { stats: { rowsRead: number } }).stats.rowsRead).toBe(0);
  });
});

describe('listings are charged for every statement they may run', () => {
  it('a listing thinned by instructionTypes is charged for the whole-range read it may fall back to, as queryComplexity says', async () => {
    const plain = await gql('{ transactions(pagination: {first: 100}) { pageInfo { hasNextPage } } }');
    const thinned = await gql('{ transactions(filters: { instructionTypes: ["swap"] }, pagination: {first: 100}) { pageInfo { hasNextPage } } }');
    const says = await gql('{ queryComplexity(filters: { instructionTypes: ["swap"] }) { score baseCost estimatedRows } }');
    expect(thinned.status).toBe(200);
    // Two statements: the page window and the whole range.
    expect(says.body.data!.queryComplexity.baseCost).toBe(2000);
    expect(thinned.body.extensions.cost.requested).toBe(says.body.data!.queryComplexity.score);
    expect(thinned.body.extensions.cost.requested).toBeGreaterThan(plain.body.extensions.cost.requested + 1000);
    // The whole range of 20,000 records is among what is charged.
    expect(says.body.data!.queryComplexity.estimatedRows).toBeGreaterThanOrEqual(20_000);
  });

  it('a plan whose budget covers the window but not the whole range refuses it before it runs', async () => {
    const q =
      '{ transactions(filters: { programIds: ["JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4"] }, pagination: {first: 100}) { pageInfo { hasNextPage } } }';
    const plain = await gql('{ transactions(pagination: {first: 100}) { pageInfo { hasNextPage } } }');
    const budget = plain.body.extensions.cost.requested + 1000;
    const tight = await appWith({ budgets: { free: budget, x402: budget, enterprise: budget } });
    const r = await graphqlClient(() => tight, fx.headers)(q, undefined, STRICT);
    expect(r.status).toBe(400);
    expect(r.body.errors?.[0]?.extensions.code).toBe('QUERY_TOO_COMPLEX');
    expect(r.body.extensions.cost.requested).toBeGreaterThan(budget);
  });
});

describe('no page can be framed', () => {
  it.each([
    ['Swagger UI', '/api/v1/docs'],
    ['GraphiQL', '/graphql'],
    ['the dashboard', '/dashboard'],
  ])("%s carries Content-Security-Policy frame-ancestors 'none' and X-Frame-Options DENY", async (_name, url) => {
    const res = await fx.t().app.inject({ method: 'GET', url, headers: { accept: 'text/html' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
    expect(res.headers['x-frame-options']).toBe('DENY');
  });
});
