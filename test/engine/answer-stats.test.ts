// The cost of every answer (issue 26): each answer on every door carries its statistics in
// X-Stats-* headers (GraphQL also in extensions.stats, REST in meta.stats; JSON-RPC and SQL
// keep SPEC's envelopes exactly); the figures come from one ledger, the request's budget,
// which the budgeted warehouse fills with what the engine reports; usage keeps the cost per
// key and method, and the dashboard's usage page shows it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Budget } from '../../core/budget.ts';
import { ANSWER_STATS_HEADERS } from '../../api/services/access/answer-stats.ts';
import { BudgetedWarehouse } from '../../warehouse/budgeted-warehouse.ts';
import { call, signUp } from '../support/dashboard-session.ts';
import { FIXTURE_DAYS } from '../support/fixtures.ts';
import { startAppWithData } from '../support/services.ts';

type Started = Awaited<ReturnType<typeof startAppWithData>>;
let s: Started;
beforeAll(async () => {
  s = await startAppWithData(3000);
});
afterAll(async () => s?.t.cleanup());

const statsOf = (headers: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(ANSWER_STATS_HEADERS).map(([field, name]) => {
      const v = headers[name];
      expect(typeof v, `header ${name}`).toBe('string');
      expect(String(v)).toMatch(/^\d+$/);
      return [field, Number(v)];
    }),
  ) as { elapsedMs: number; rowsRead: number; bytesRead: number; cost: number };

describe('the ledger: what the engine read, per request', () => {
  it('records the rows and bytes a statement read, as the engine counts them (numbers(N) reads N rows)', async () => {
    const { services } = s.t;
    const budget = new Budget('free', 'rest');
    const wh = new BudgetedWarehouse(services.wh, 'probe').under(budget);
    await wh.query('SELECT sum(number) AS s FROM numbers(100000)');
    await wh.query('SELECT count() AS c FROM numbers(2500)');
    expect(budget.rowsReadSoFar).toBe(102_500);
    const stats = budget.stats();
    expect(stats.rowsRead).toBe(102_500);
    expect(stats.bytesRead).toBe(102_500 * 8); // UInt64
    // Nothing was charged up front: the cost is what was read.
    expect(stats.cost).toBe(102_500);
    // Taken once: later reads do not change an answer already described.
    budget.recordRead(5, 5);
    expect(budget.stats()).toEqual(stats);
  });
});

describe('every door carries the statistics', () => {
  it('REST: headers, and the same figures in meta.stats; an answer from the result cache read nothing', async () => {
    const url = `/api/v1/analytics/protocols?protocol_name=${s.active[0]}&date_from=${FIXTURE_DAYS[0]}&date_to=${FIXTURE_DAYS[2]}`;
    const first = await s.t.app.inject({ method: 'GET', url, headers: s.headers });
    expect(first.statusCode, first.body).toBe(200);
    const h = statsOf(first.headers);
    expect(first.json().meta.stats).toEqual(h);
    expect(h.rowsRead).toBeGreaterThan(0);
    expect(h.bytesRead).toBeGreaterThanOrEqual(h.rowsRead);
    expect(h.cost).toBeGreaterThanOrEqual(h.rowsRead);
    const again = await s.t.app.inject({ method: 'GET', url, headers: s.headers });
    const h2 = statsOf(again.headers);
    expect(again.json().meta.stats).toEqual(h2);
    expect(h2.rowsRead).toBe(0);
    expect(h2.cost).toBe(0);
    // A browser may read them once CORS admits its origin; without an Origin no CORS header is sent.
    expect(first.headers['access-control-expose-headers']).toBeUndefined();
    const browser = await s.t.app.inject({ method: 'GET', url, headers: { ...s.headers, origin: 'https://dashboard.example' } });
    for (const name of Object.values(ANSWER_STATS_HEADERS)) expect(String(browser.headers['access-control-expose-headers'])).toContain(name);
  });

  it("JSON-RPC: headers only, the envelope stays SPEC's", async () => {
    const res = await s.t.app.inject({
      method: 'POST',
      url: '/v1/rpc',
      headers: s.headers,
      payload: { jsonrpc: '2.0', id: 1, method: 'getTransactions', params: [{ limit: 5 }] },
    });
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json()).sort()).toEqual(['id', 'jsonrpc', 'result']);
    const h = statsOf(res.headers);
    expect(h.rowsRead).toBeGreaterThan(0);
  });

  it('GraphQL: extensions.stats equals the headers, beside extensions.cost', async () => {
    const res = await s.t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: s.headers,
      payload: { query: `{ protocolStats(filters: { protocols: ["${s.active[1]}"] }) { protocolName totalTransactions } }` },
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    const h = statsOf(res.headers);
    expect(body.extensions.stats).toEqual(h);
    expect(h.cost).toBeGreaterThanOrEqual(body.extensions.cost.requested);
  });

  it('SQL: headers only ({data, count, query} as SPEC fixes it), the cost charged before running', async () => {
    const res = await s.t.app.inject({
      method: 'POST',
      url: '/v1/query',
      headers: s.headers,
      payload: { query: 'SELECT protocol_name, count() AS n FROM transactions GROUP BY protocol_name' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(Object.keys(res.json()).sort()).toEqual(['count', 'data', 'query']);
    expect(statsOf(res.headers).cost).toBeGreaterThan(0);
    const csv = await s.t.app.inject({
      method: 'POST',
      url: '/v1/query',
      headers: s.headers,
      payload: { query: 'SELECT signature FROM transactions LIMIT 3', format: 'csv' },
    });
    expect(csv.statusCode).toBe(200);
    statsOf(csv.headers);
  });

  it('exports API and errors: the headers too (an error read what it read)', async () => {
    const list = await s.t.app.inject({ method: 'GET', url: '/v1/exports', headers: s.headers });
    expect(list.statusCode, list.body).toBe(200);
    statsOf(list.headers);
    const bad = await s.t.app.inject({ method: 'GET', url: '/api/v1/analytics/protocols', headers: s.headers });
    expect(bad.statusCode).toBe(400);
    expect(statsOf(bad.headers).rowsRead).toBe(0);
  });

  it('no statistics where nothing is metered (no key)', async () => {
    const res = await s.t.app.inject({ method: 'GET', url: '/api/v1/stats' });
    expect(res.statusCode).toBe(401);
    expect(res.headers[ANSWER_STATS_HEADERS.cost]).toBeUndefined();
  });
});

describe('usage: cost per key and per method over time', () => {
  it("the dashboard's usage page sums each answer's cost per key, per method and per bucket", async () => {
    const { app } = s.t;
    const session = await signUp(app, 'cost@example.com');
    const made = await call(app, session, 'POST', '/dashboard/api/keys', { name: 'researcher', environment: 'production' });
    expect(made.statusCode, made.body).toBe(201);
    const key = made.json<{ id: string; key: string }>();
    let total = 0;
    const perMethod = new Map<string, number>();
    const ask = async (method: 'GET' | 'POST', url: string, payload?: object, label = `${method} ${url.split('?')[0]}`) => {
      const res = await app.inject({ method, url, headers: { 'x-api-key': key.key }, ...(payload === undefined ? {} : { payload }) });
      expect(res.statusCode, res.body).toBe(200);
      const cost = Number(res.headers[ANSWER_STATS_HEADERS.cost]);
      total += cost;
      perMethod.set(label, (perMethod.get(label) ?? 0) + cost);
    };
    await ask('POST', '/v1/query', { query: 'SELECT count() AS n FROM transactions' });
    await ask('GET', `/api/v1/analytics/time-series?date_from=${FIXTURE_DAYS[0]}&date_to=${FIXTURE_DAYS[1]}`, undefined, 'GET /api/v1/analytics/time-series');
    await ask('POST', '/v1/rpc', { jsonrpc: '2.0', id: 1, method: 'getTransactions', params: [{ limit: 7 }] }, 'getTransactions');
    expect(total).toBeGreaterThan(0);

    const u = (await call(app, session, 'GET', '/dashboard/api/usage?key=all&granularity=minute')).json();
    expect(u.totals.cost).toBe(total);
    const mine = u.keys.find((k: { keyId: string }) => k.keyId === key.id);
    expect(mine.cost).toBe(total);
    expect(mine.costPerBucket.reduce((a: number, b: number) => a + b, 0)).toBe(total);
    expect(u.buckets.reduce((a: number, b: { cost: number }) => a + b.cost, 0)).toBe(total);
    for (const [label, cost] of perMethod) {
      const m = u.methods.find((x: { label: string }) => x.label.endsWith(label));
      expect(m?.cost, label).toBe(cost);
      // Over time too: the costly methods' buckets add up to their cost.
      const c = u.costlyMethods.find((x: { label: string }) => x.label.endsWith(label));
      if (cost > 0)
        expect(
          c.costPerBucket.reduce((a: number, b: number) => a + b, 0),
          label,
        ).toBe(cost);
    }
  });
});
