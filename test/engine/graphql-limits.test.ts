// GraphQL's guard and edges: authentication and rate limits in GraphQL's error shape, each
// top-level field one request, every limit at its edge, bad input naming its argument, the
// one cost model (queryComplexity agrees with the guard that refuses over budget), the
// time-out, GET and GraphiQL.
import { describe, expect, it } from 'vitest';
import { GRAPHQL_MAX_ALIASES, GRAPHQL_MAX_DOCUMENT_CHARS, GRAPHQL_MAX_TOKENS } from '../../core/limits/graphql.ts';
import { PLAN_QUERY_BUDGET } from '../../api/services/sql/query-cost.ts';
import { apiKeyHeaders, createKey } from '../support/api-key.ts';
import { graphqlClient, type GraphqlReply } from '../support/graphql-client.ts';
import { graphqlFixture, STRICT } from '../support/graphql-fixture.ts';

const fx = graphqlFixture(1500);
const { gql, appWith } = fx;

function expectError(r: GraphqlReply<unknown>, status: number, code: string, message?: RegExp): void {
  expect(r.status, r.text.slice(0, 400)).toBe(status);
  expect(r.body.errors?.length, r.text.slice(0, 400)).toBeGreaterThan(0);
  expect(r.body.errors!.map((e) => e.extensions.code)).toContain(code);
  if (message) expect(r.body.errors!.map((e) => e.message).join('\n')).toMatch(message);
  expect(r.body.extensions.cost).toBeDefined();
  expect(r.text).not.toMatch(/\n\s+at |\.ts:\d+|node_modules|DB::Exception/);
}

describe('authentication and rate limits answer in GraphQL shape', () => {
  it('401 without a key, 403 with an unknown one, both with X-RateLimit-* and extensions.code', async () => {
    const none = await fx
      .t()
      .app.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: '{"query":"{ protocols }"}' });
    expect(none.statusCode).toBe(401);
    expect(none.json()).toMatchObject({ errors: [{ message: expect.stringMatching(/x-api-key/), extensions: { code: 'UNAUTHENTICATED' } }] });
    expect(none.headers['x-ratelimit-limit']).toBeDefined();
    const bad = await gql('{ protocols }', undefined, { 'x-api-key': 'txa_not_a_key_at_all' });
    expectError(bad, 403, 'FORBIDDEN');
  });

  it('counts each top-level field as one request, and refuses with 429 RATE_LIMITED and Retry-After once the plan is spent', async () => {
    const free = { 'x-api-key': (await createKey(fx.t().app, 'free', 'graphql-rate')).key };
    const send = (q: string) => gql(q, undefined, free);
    const one = await send('{ protocols }');
    const before = Number(one.headers['x-ratelimit-remaining']);
    const three = await send('{ protocols a: protocols b: protocolStats { protocolName } __typename }');
    expect(three.status).toBe(200);
    expect(before - Number(three.headers['x-ratelimit-remaining'])).toBe(3);
    const ten = `{ ${Array.from({ length: 10 }, (_, i) => `p${i}: protocols`).join(' ')} }`;
    let last: GraphqlReply<unknown> | undefined;
    for (let i = 0; i < 12; i++) {
      last = await send(ten);
      if (last.status === 429) break;
    }
    expectError(last!, 429, 'RATE_LIMITED', /Rate limit exceeded/);
    expect(last!.headers['retry-after']).toMatch(/^\d+$/);
    expect(last!.headers['x-ratelimit-remaining']).toBe('0');
  });

  it('carries X-RateLimit-*, x-request-id and extensions.cost on answers with data and with errors', async () => {
    for (const r of [await gql('{ protocols }'), await gql('{ nope }', undefined, STRICT)]) {
      expect(r.headers['x-ratelimit-plan']).toBe('enterprise');
      expect(r.headers['x-request-id']).toBeDefined();
      expect(r.body.extensions.cost).toEqual({ requested: expect.any(Number), budget: PLAN_QUERY_BUDGET.enterprise });
    }
  });
});

describe('limits at their edges', () => {
  const listing = (first: number) => `{ transactions(pagination: { first: ${first} }) { edges { cursor } } }`;

  it('pagination.first: default 100, 1000 answered, 1001 and 0 refused naming it (never shrunk)', async () => {
    const d = await gql('{ transactions { edges { cursor } } }');
    expect(d.body.data!.transactions.edges).toHaveLength(100);
    const max = await gql(listing(1000));
    expect(max.body.data!.transactions.edges).toHaveLength(1000);
    expectError(await gql(listing(1001), undefined, STRICT), 400, 'BAD_USER_INPUT', /pagination\.first must be between 1 and 1000 \(got 1001\)/);
    expectError(await gql(listing(0), undefined, STRICT), 400, 'BAD_USER_INPUT', /pagination\.first/);
  });

  it(`aliases: ${GRAPHQL_MAX_ALIASES} answered, one more refused as QUERY_TOO_COMPLEX with 400 (a validation rule, not a 500)`, async () => {
    const aliased = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: protocols`).join(' ')} }`;
    expect((await gql(aliased(GRAPHQL_MAX_ALIASES))).status).toBe(200);
    expectError(await gql(aliased(GRAPHQL_MAX_ALIASES + 1), undefined, STRICT), 400, 'QUERY_TOO_COMPLEX', /more than 10 aliases/);
  });

  it('top-level fields: more than 10 refused even with few aliases', async () => {
    const q =
      '{ protocols protocolStats { protocolName } signature(signature: "x") { slot } queryComplexity { score } transactions { pageInfo { hasNextPage } } ' +
      'failedTransactions { pageInfo { hasNextPage } } timeSeries(filters: { dateRange: { start: "2024-12-30", end: "2024-12-30" } }) { value } ' +
      'a: protocols b: protocols c: protocols d: protocols }';
    expectError(await gql(q, undefined, STRICT), 400, 'QUERY_TOO_COMPLEX', /11 top-level fields; at most 10/);
  });

  it('depth: deeper than 8 refused through the validation context (400), introspection exempt', async () => {
    const deep = '{ transactions { edges { node { signature { a { b { c { d { e } } } } } } } } }';
    expectError(await gql(deep, undefined, STRICT), 400, 'QUERY_TOO_COMPLEX', /nests fields 9 deep; at most 8/);
    const introspection = '{ __schema { types { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } }';
    expect((await gql(introspection)).status).toBe(200);
  });

  it('document size and tokens', async () => {
    const long = `{ protocols }\n#${'x'.repeat(GRAPHQL_MAX_DOCUMENT_CHARS)}`;
    expectError(await gql(long, undefined, STRICT), 400, 'QUERY_TOO_COMPLEX', /characters long; at most 16384/);
    const tokens = `{ ${'a '.repeat(GRAPHQL_MAX_TOKENS + 1)}}`;
    expectError(await gql(tokens, undefined, STRICT), 400, 'QUERY_TOO_COMPLEX', /more than 4000 tokens/);
  });

  it('timeSeries buckets: 416 days of hours answered, 417 refused naming filters.dateRange', async () => {
    const series = (end: string) => `{ timeSeries(filters: { dateRange: { start: "2024-01-01", end: "${end}" } }, bucketBy: HOUR) { value } }`;
    const ok = await gql(series('2025-02-19')); // 416 days = 9984 buckets
    expect(ok.status).toBe(200);
    expect(ok.body.data!.timeSeries).toHaveLength(9984);
    expectError(
      await gql(series('2025-02-20'), undefined, STRICT),
      400,
      'BAD_USER_INPUT',
      /filters\.dateRange: the range spans 10008 hour buckets; at most 10000/,
    );
  });

  it('a request running past the time-out is answered with QUERY_TOO_COMPLEX, not left hanging', async () => {
    const app = await appWith({ timeoutMs: 1 });
    const r = await graphqlClient(
      () => app,
      fx.headers,
    )(
      '{ timeSeries(filters: { dateRange: { start: "2020-01-01", end: "2024-12-31" } }, bucketBy: DAY, metrics: [COUNT, P99_FEE], groupBy: [PROTOCOL, INSTRUCTION_TYPE]) { value } }',
    );
    expectError(r, 200, 'QUERY_TOO_COMPLEX', /ran longer than 0.001 s/);
  });
});

describe('bad input names its argument (BAD_USER_INPUT, 400 under graphql-response+json, 200 under JSON)', () => {
  const cases: [string, string, RegExp][] = [
    ['unknown enum value', '{ transactions(groupBy: [DAY]) { pageInfo { hasNextPage } } }', /Value "DAY" does not exist in "GroupBy" enum/],
    ['unknown metric in a variable', 'query($m: [Metric!]) { transactions(metrics: $m) { pageInfo { hasNextPage } } }', /Variable "\$m".*P42_FEE/],
    ['empty protocol list', '{ transactions(filters: { protocols: [] }) { pageInfo { hasNextPage } } }', /filters\.protocols must name at least one protocol/],
    [
      'unknown protocol',
      '{ protocolStats(filters: { protocols: ["jupiter_v6", "nope_v9"] }) { protocolName } }',
      /filters\.protocols\[1\]: unknown protocol "nope_v9" \(query \{ protocols \} lists the available ones\)/,
    ],
    [
      'start after end',
      '{ transactions(filters: { dateRange: { start: "2024-12-31", end: "2024-12-01" } }) { pageInfo { hasNextPage } } }',
      /filters\.dateRange\.start \(2024-12-31\) is after filters\.dateRange\.end \(2024-12-01\)/,
    ],
    [
      'impossible date',
      '{ transactions(filters: { dateRange: { start: "2024-02-30" } }) { pageInfo { hasNextPage } } }',
      /filters\.dateRange\.start must be a calendar date written YYYY-MM-DD/,
    ],
    [
      'date past storable time',
      '{ protocolStats(filters: { dateRange: { end: "2200-01-01" } }) { protocolName } }',
      /filters\.dateRange\.end must be between 1970-01-01 and 2106-02-07/,
    ],
    ['timeSeries without both ends', '{ timeSeries(filters: { dateRange: { start: "2024-12-30" } }) { value } }', /filters\.dateRange with both start and end/],
    [
      'garbage cursor',
      '{ transactions(pagination: { after: "bm90IGEgY3Vyc29y" }) { pageInfo { hasNextPage } } }',
      /pagination\.after is not a pagination token/,
    ],
    ['sort.field without groups', '{ transactions(sort: { field: COUNT }) { pageInfo { hasNextPage } } }', /sort\.field sorts groups/],
    [
      'record sort for groups',
      '{ transactions(groupBy: [PROTOCOL], sort: { field: FEE }) { pageInfo { hasNextPage } } }',
      /sort\.field FEE sorts records; sort groups by a metric/,
    ],
    [
      'key sort without the key',
      '{ transactions(groupBy: [PROTOCOL], sort: { field: PROGRAM_ID }) { pageInfo { hasNextPage } } }',
      /sort\.field PROGRAM_ID sorts groups by a key they are grouped by/,
    ],
    [
      'inverted range',
      '{ transactions(groupBy: [PROTOCOL], filters: { feeRange: { min: 10, max: 5 } }) { pageInfo { hasNextPage } } }',
      /filters\.feeRange\.min \(10\) is above its max \(5\)/,
    ],
    [
      'fractional range',
      '{ transactions(groupBy: [PROTOCOL], filters: { computeRange: { min: 1.5 } }) { pageInfo { hasNextPage } } }',
      /BigInt cannot represent a non-integer value: 1\.5; write a whole number/,
    ],
    [
      'DATE groups in a series',
      '{ timeSeries(filters: { dateRange: { start: "2024-12-30", end: "2024-12-30" } }, groupBy: [WEEK]) { value } }',
      /groupBy\[0\] is "WEEK", not allowed in timeSeries: bucketBy sets the time buckets/,
    ],
    [
      'percentile of failures',
      '{ failedTransactions(metrics: [P95_FEE]) { pageInfo { hasNextPage } } }',
      /metrics\[0\] is "P95_FEE": failedTransactions offers COUNT, SUM_FEE and AVG_FEE/,
    ],
    [
      'HOUR groups in a series',
      '{ timeSeries(filters: { dateRange: { start: "2024-12-30", end: "2024-12-30" } }, groupBy: [HOUR]) { value } }',
      /groupBy\[0\] is "HOUR", not allowed in timeSeries/,
    ],
  ];
  it.each(cases)('%s', async (_name, query, message) => {
    const variables = query.includes('$m') ? { m: ['P42_FEE'] } : undefined;
    const strict = await gql(query, variables, STRICT);
    expectError(strict, 400, 'BAD_USER_INPUT', message);
    expect(strict.body.data).toBeUndefined();
    const plain = await gql(query, variables, { accept: 'application/json' });
    expectError(plain, 200, 'BAD_USER_INPUT', message);
  });

  it('a cursor from other filters, groupBy or sort is refused naming pagination.after', async () => {
    const first = await gql('{ transactions(filters: { protocols: ["pump_fun"] }, pagination: { first: 2 }) { pageInfo { endCursor } } }');
    const cursor = first.body.data!.transactions.pageInfo.endCursor as string;
    const other = await gql(
      'query($c: String) { transactions(filters: { protocols: ["whirlpool"] }, pagination: { first: 2, after: $c }) { pageInfo { endCursor } } }',
      { c: cursor },
      STRICT,
    );
    expectError(other, 400, 'BAD_USER_INPUT', /pagination\.after belongs to a listing with other filters/);
    const groups = await gql('{ transactions(groupBy: [PROTOCOL], pagination: { first: 2 }) { pageInfo { endCursor } } }');
    const g = groups.body.data!.transactions.pageInfo.endCursor as string;
    const sorted = await gql(
      'query($c: String) { transactions(groupBy: [PROTOCOL], sort: { field: COUNT, direction: ASC }, pagination: { first: 2, after: $c }) { pageInfo { endCursor } } }',
      { c: g },
      STRICT,
    );
    expectError(sorted, 400, 'BAD_USER_INPUT', /pagination\.after belongs to a listing with other filters/);
    const asRecords = await gql('query($c: String) { transactions(pagination: { first: 2, after: $c }) { pageInfo { endCursor } } }', { c: g }, STRICT);
    expectError(asRecords, 400, 'BAD_USER_INPUT', /pagination\.after is not a pagination token/);
  });
});

describe('one cost model: queryComplexity and the guard', () => {
  const questions = [
    [
      'groups',
      'filters: { protocols: ["pump_fun"], dateRange: { start: "2024-12-29", end: "2024-12-31" } }, groupBy: [PROTOCOL, HOUR], metrics: [COUNT, P95_FEE]',
    ],
    ['records', 'filters: { instructionTypes: ["swap"] }'],
  ] as const;

  it.each(questions)('queryComplexity(%s) scores exactly what the guard charges, and the guard refuses it just over budget', async (_kind, args) => {
    const qc = await gql(`{ queryComplexity(${args}) { score estimatedRows baseCost withinBudget recommendations } }`);
    const c = qc.body.data!.queryComplexity;
    expect(c.estimatedRows).toBeGreaterThan(0);
    expect(c.score).toBe(c.estimatedRows + c.baseCost);
    expect(c.withinBudget).toBe(true);
    const run = await gql(`{ transactions(${args}) { pageInfo { hasNextPage } } }`);
    expect(run.status).toBe(200);
    expect(run.body.extensions.cost.requested).toBe(c.score);

    const tight = await appWith({ budgets: { free: c.score - 1, x402: c.score - 1, enterprise: c.score - 1 } });
    const tgql = graphqlClient(() => tight, fx.headers);
    const refused = await tgql(`{ transactions(${args}) { pageInfo { hasNextPage } } }`, undefined, STRICT);
    expectError(refused, 400, 'QUERY_TOO_COMPLEX', new RegExp(`would cost ${c.score}.*allows ${c.score - 1}`));
    expect(refused.body.data).toBeUndefined();
    expect(refused.body.extensions.cost).toEqual({ requested: c.score, budget: c.score - 1 });
    const says = await tgql(`{ queryComplexity(${args}) { score withinBudget } }`);
    expect(says.body.data!.queryComplexity).toEqual({ score: c.score, withinBudget: false });

    const exact = await appWith({ budgets: { free: c.score, x402: c.score, enterprise: c.score } });
    expect((await graphqlClient(() => exact, fx.headers)(`{ transactions(${args}) { pageInfo { hasNextPage } } }`)).status).toBe(200);
  });

  it('recommends what a user can change: a narrower range, a protocol, a coarser bucket, fewer percentiles', async () => {
    const wide = await gql('{ queryComplexity(groupBy: [HOUR], metrics: [P99_FEE]) { recommendations } }');
    expect(wide.body.data!.queryComplexity.recommendations).toEqual([
      'narrow filters.dateRange (fewer days)',
      'add a protocol (filters.protocols)',
      'use a coarser bucket (bucketBy DAY, WEEK or MONTH, or groupBy without HOUR)',
      'drop a percentile metric (P50_FEE, P95_FEE, P99_FEE, P50_COMPUTE_UNITS, P95_COMPUTE_UNITS, P99_COMPUTE_UNITS)',
    ]);
    const narrow = await gql(
      '{ queryComplexity(filters: { protocols: ["pump_fun"], dateRange: { start: "2024-12-30", end: "2024-12-30" } }, groupBy: [PROTOCOL], metrics: [COUNT]) { recommendations } }',
    );
    expect(narrow.body.data!.queryComplexity.recommendations).toEqual([]);
  });

  it("a request's cost is the sum of its fields' costs", async () => {
    const a = await gql('{ protocolStats(filters: { protocols: ["pump_fun"] }) { protocolName } }');
    const b = await gql('{ timeSeries(filters: { dateRange: { start: "2024-12-30", end: "2024-12-31" } }) { value } }');
    const both = await gql(
      '{ protocolStats(filters: { protocols: ["pump_fun"] }) { protocolName } timeSeries(filters: { dateRange: { start: "2024-12-30", end: "2024-12-31" } }) { value } }',
    );
    expect(both.body.extensions.cost.requested).toBe(a.body.extensions.cost.requested + b.body.extensions.cost.requested);
  });
});

describe('HTTP: GET, methods, GraphiQL', () => {
  it('answers queries on GET (query string) and refuses mutations there with 405 and Allow: POST', async () => {
    const ok = await fx.t().app.inject({ method: 'GET', url: `/graphql?query=${encodeURIComponent('{ protocols }')}`, headers: fx.headers() });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().data.protocols.length).toBeGreaterThan(0);
    const mutation = await fx.t().app.inject({ method: 'GET', url: `/graphql?query=${encodeURIComponent('mutation { x }')}`, headers: fx.headers() });
    expect(mutation.statusCode).toBe(405);
    expect(mutation.headers.allow).toBe('POST');
    expect(mutation.json().errors[0].extensions.code).toBeDefined();
  });

  it('serves GraphiQL without a key, from files under a strict CSP with no inline script; data still needs a key', async () => {
    const page = await fx.t().app.inject({ method: 'GET', url: '/graphql', headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toMatch(/script-src 'self'/);
    expect(page.body).toMatch(/<script src="\/graphql\/graphiql\.js" defer><\/script>/);
    expect(page.body).not.toMatch(/<script>|<script [^>]*>[^<]+<\/script>|https?:\/\//);
    for (const asset of ['/graphql/graphiql.js', '/graphql/graphiql.css']) {
      const r = await fx.t().app.inject({ method: 'GET', url: asset });
      expect(r.statusCode, asset).toBe(200);
      expect(r.body).not.toMatch(/https?:\/\//);
    }
    const script = await fx.t().app.inject({ method: 'GET', url: '/graphql/graphiql.js' });
    expect(script.body).toMatch(/'x-api-key'/);
    // GraphiQL itself and React come from their npm packages, by name from an allow-list.
    for (const name of ['graphiql.min.js', 'graphiql.min.css', 'react.production.min.js', 'react-dom.production.min.js']) {
      expect(page.body, name).toContain(`/graphql/assets/${name}`);
      const r = await fx.t().app.inject({ method: 'GET', url: `/graphql/assets/${name}` });
      expect(r.statusCode, name).toBe(200);
    }
    for (const probe of ['package.json', '..%2Fpackage.json', '..%2F..%2Fcore%2Fconfig.ts', 'graphiql.min.js.map']) {
      expect((await fx.t().app.inject({ method: 'GET', url: `/graphql/assets/${probe}` })).statusCode, probe).toBe(404);
    }
    const data = await fx.t().app.inject({ method: 'GET', url: `/graphql?query=${encodeURIComponent('{ protocols }')}` });
    expect(data.statusCode).toBe(401);
  });

  it('answers malformed requests 400 in GraphQL shape', async () => {
    for (const payload of ['[]', '{"query": 1}', '{"query": "{ protocols }", "variables": "x"}', '{"nope": 1}', '{ "not json']) {
      const r = await fx.t().app.inject({ method: 'POST', url: '/graphql', headers: { ...fx.headers(), 'content-type': 'application/json' }, payload });
      expect(r.statusCode, payload).toBe(400);
      expect(r.json().errors[0].extensions.code, payload).toBe('BAD_USER_INPUT');
    }
    const text = await fx
      .t()
      .app.inject({ method: 'POST', url: '/graphql', headers: { ...fx.headers(), 'content-type': 'text/plain' }, payload: '{ protocols }' });
    expect(text.statusCode).toBe(415);
    expect(text.json().errors[0].message).toMatch(/application\/json/);
  });
});

it('keys of every plan get the budget of their plan', async () => {
  const x402 = await apiKeyHeaders(fx.t().app, 'x402');
  const r = await gql('{ protocols }', undefined, x402);
  expect(r.body.extensions.cost.budget).toBe(PLAN_QUERY_BUDGET.x402);
});
