// Adding a metric is one declaration in the question model: a service built with a catalog
// of measures that holds one more (a test-only failure rate, declared as a metric) shows it
// on every door that lets a client pick metrics (GraphQL's Metric and SortField enums, the
// group node's field, transactions, timeSeries and queryComplexity) and answers it against
// the base table, with no edit to any door. JSON-RPC and REST answer SPEC's fixed shapes
// (no door there takes a metrics choice), so their documents (OpenRPC, OpenAPI) are the same
// with or without it: nothing leaks there either.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Analytics } from '../../api/analytics/analytics.ts';
import { MEASURES, type Measure } from '../../api/analytics/question/model.ts';
import { buildApp } from '../../api/server/app.ts';
import { apiKeyHeaders } from '../support/api-key.ts';
import { FIXTURE_END, FIXTURE_START, ingestDemo } from '../support/fixtures.ts';
import { dataOf, graphqlClient } from '../support/graphql-client.ts';
import { startApp } from '../support/services.ts';

const failureRate: Measure = {
  metric: 'Failed records per hundred (test-only)',
  states: ['tx_count', 'success_count'],
  sql: '(sum(tx_count) - sum(success_count)) / sum(tx_count) * 100',
  type: 'number',
};
const WITH_RATE = { ...MEASURES, failureRate };

let t: Awaited<ReturnType<typeof startApp>>;
/** The same services answering the model's own measures (one engine per process). */
let plain: FastifyInstance;
let headers: Record<string, string>;

beforeAll(async () => {
  t = await startApp({}, { measures: WITH_RATE });
  const s = t.services;
  plain = await buildApp({ ...s, analytics: new Analytics(s.wh, s.registry, s.dataVersion, s.pageTokens) });
  headers = await apiKeyHeaders(t.app);
  await ingestDemo(s, 3000, 7);
});
afterAll(async () => {
  await plain.close();
  await t.cleanup();
});

const gql = graphqlClient(
  () => t.app,
  () => headers,
);

/** Failure rate per protocol over [gte, lte], by scanning the base table alone. */
async function reference(gte: number, lte: number): Promise<Map<string, number>> {
  const rows = await t.services.wh.query<{ p: string; failed: string; n: string }>(
    `SELECT protocol_name AS p, countIf(NOT success) AS failed, count() AS n FROM transactions
     WHERE block_time BETWEEN toDateTime({gte:UInt32}, 'UTC') AND toDateTime({lte:UInt32}, 'UTC') AND protocol_name IN {ps:Array(String)}
     GROUP BY p`,
    { params: { gte, lte, ps: await t.services.registry.activeNames() } },
  );
  return new Map(rows.map((r) => [r.p, (Number(r.failed) / Number(r.n)) * 100]));
}

describe('a measure declared as a metric in the model', () => {
  it('is a value of Metric and SortField and a field of the group node, only where it was declared', async () => {
    const q =
      '{ m: __type(name: "Metric") { enumValues { name } } s: __type(name: "SortField") { enumValues { name } } n: __type(name: "TransactionNode") { fields { name } } }';
    const withRate = await dataOf(gql(q));
    expect(withRate.m.enumValues.map((v: { name: string }) => v.name)).toContain('FAILURE_RATE');
    expect(withRate.s.enumValues.map((v: { name: string }) => v.name)).toContain('FAILURE_RATE');
    expect(withRate.n.fields.map((f: { name: string }) => f.name)).toContain('failureRate');
    const without = await dataOf(
      graphqlClient(
        () => plain,
        () => headers,
      )(q),
    );
    expect(without.m.enumValues.map((v: { name: string }) => v.name)).not.toContain('FAILURE_RATE');
  });

  it('answers transactions(groupBy, metrics, sort) equal to the base table over the fixture window', async () => {
    const data = await dataOf(
      gql(`{ transactions(filters: { dateRange: { start: "2024-12-29", end: "2024-12-31" } }, groupBy: [PROTOCOL], metrics: [FAILURE_RATE, COUNT], sort: { field: FAILURE_RATE, direction: ASC }) {
      edges { node { protocol failureRate count } } } }`),
    );
    const nodes = data.transactions.edges.map((e: { node: { protocol: string; failureRate: number } }) => e.node);
    const want = await reference(FIXTURE_START, FIXTURE_END - 1);
    expect(nodes.length).toBe(want.size);
    for (const n of nodes) expect(n.failureRate).toBeCloseTo(want.get(n.protocol)!, 9);
    const rates = nodes.map((n: { failureRate: number }) => n.failureRate);
    expect(rates).toEqual([...rates].sort((a, b) => a - b));
  });

  it('answers timeSeries and queryComplexity too', async () => {
    const data = await dataOf(
      gql(`{ timeSeries(filters: { protocols: ["pump_fun"], dateRange: { start: "2024-12-30", end: "2024-12-30" } }, bucketBy: DAY, metrics: [FAILURE_RATE]) { timestamp value label }
      queryComplexity(groupBy: [PROTOCOL], metrics: [FAILURE_RATE]) { score } }`),
    );
    const day = FIXTURE_START + 86_400;
    const want = await reference(day, day + 86_399);
    expect(data.timeSeries).toEqual([{ timestamp: day, value: expect.any(Number), label: 'all:FAILURE_RATE' }]);
    expect(data.timeSeries[0].value).toBeCloseTo(want.get('pump_fun')!, 9);
    expect(data.queryComplexity.score).toBeGreaterThan(0);
  });

  it('leaves the JSON-RPC and REST contracts as they were: their documents are identical', async () => {
    for (const url of ['/v1/openrpc.json', '/api/v1/openapi.json']) {
      const [a, b] = await Promise.all([t.app.inject({ url }), plain.inject({ url })]);
      expect(a.statusCode).toBe(200);
      expect(a.body).toBe(b.body);
    }
  });
});
