// Joins priced by the rows they produce (an outside review: the cost check counted rows
// read, so a self-join on `success` passed as 0.5M rows and produced 56.7 billion pairs).
// On 40,000 records a free key's budget (100M) is small enough for the audit's shapes to be
// over it, and every legitimate join stays far under it.
import { Budget } from '../../core/budget.ts';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAN_JOIN_ROWS } from '../../core/plans.ts';
import { apiKeyHeaders } from '../support/api-key.ts';
import { ingestDemo } from '../support/fixtures.ts';
import { startApp } from '../support/services.ts';

interface Hostile {
  category: string;
  query: unknown;
  outcome?: 'refused' | 'runs';
}

const ROWS = 40_000;
const joinCases = (JSON.parse(readFileSync(new URL('../fixtures/hostile-queries.json', import.meta.url), 'utf8')) as Hostile[]).filter(
  (h) => h.category === 'join',
);
const legitJoins = (JSON.parse(readFileSync(new URL('../fixtures/legit-queries.json', import.meta.url), 'utf8')) as string[]).filter((q) =>
  /\bJOIN\b/i.test(q),
);

let t: Awaited<ReturnType<typeof startApp>>;
let free: Record<string, string>;

beforeAll(async () => {
  t = await startApp({ SQL_TIMEOUT_SECONDS: '10' });
  free = await apiKeyHeaders(t.app, 'free');
  await ingestDemo(t.services, ROWS);
});
afterAll(async () => t?.cleanup());

const sql = (query: string) =>
  t.app.inject({ method: 'POST', url: '/v1/query', headers: { ...free, 'content-type': 'application/json' }, payload: JSON.stringify({ query }) });

const NARROWING = [/signature and instruction_index/, /date range/, /aggregated subqueries/, /hourly tables/];

describe("the audit's joins are refused before they run", () => {
  it('a self-join on a two-valued key (success), however few rows it reads', async () => {
    const res = await sql('SELECT count() FROM transactions t1 JOIN transactions t2 ON t1.success = t2.success WHERE t1.fee > 0');
    expect(res.statusCode).toBe(400);
    const { error, message } = res.json() as { error: string; message: string };
    expect(error).toBe('Invalid query');
    expect(message).toMatch(/its joins would produce about \d+(\.\d)?[MB] rows \(t1 × t2 on success: about/);
    expect(message).toMatch(/the free plan allows 100\.0M per query/);
    for (const hint of NARROWING) expect(message).toMatch(hint);
    // Refused from the estimate: nothing ran, and no session is held.
    expect(t.services.sqlSandbox.stats()).toEqual({ running: 0, waiting: 0 });
  });

  it('a condition on one side only (ON t1.fee = t1.fee) is a cross join', async () => {
    const res = await sql('SELECT count() FROM transactions t1 JOIN transactions t2 ON t1.fee = t1.fee');
    expect(res.statusCode).toBe(400);
    expect((res.json() as { message: string }).message).toMatch(/no equality between plain columns of both sides: every row with every row/);
    const cost = await t.services.sqlSandbox.cost(
      { key: 'cost', plan: 'free', budget: new Budget('free', 'sql') },
      'SELECT count() FROM transactions t1 JOIN transactions t2 ON t1.fee = t1.fee',
    );
    expect(cost.joinRows).toBe(ROWS * ROWS); // every row with every row
  });

  it('a join in a scalar or IN subquery is refused before the engine plans the query (planning runs such subqueries)', async () => {
    for (const query of [
      'SELECT (SELECT count() FROM transactions a, transactions b WHERE cityHash64(a.signature, b.signature) % 7 = 1) AS n',
      'SELECT count() FROM transactions WHERE fee IN (SELECT a.fee FROM transactions a, transactions b WHERE cityHash64(a.signature, b.signature) % 7 = 1)',
    ]) {
      const res = await sql(query);
      expect(res.statusCode, res.body).toBe(400);
      expect((res.json() as { message: string }).message).toMatch(/its joins would produce about 1.6B rows/);
      // Refused from the estimate (the join alone is about 10 s of hashing here): no session is held.
      expect(t.services.sqlSandbox.stats()).toEqual({ running: 0, waiting: 0 });
    }
  });

  it("a CTE whose body joins itself (WITH RECURSIVE) is refused, and the key's next query still finds a session", async () => {
    // The 2026-11 review: pricing awaited the CTE's own pending price, so the request never
    // answered and the free plan's SQL session stayed taken until the process restarted.
    const res = await sql(
      'WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT r.n + 1 FROM r JOIN transactions t ON t.instruction_index = r.n WHERE r.n < 5) SELECT count() FROM r',
    );
    expect(res.statusCode, res.body).toBe(400);
    expect((res.json() as { message: string }).message).toMatch(/join whose output cannot be estimated/);
    const next = await sql('SELECT 1 AS one');
    expect(next.statusCode, next.body).toBe(200);
    expect(t.services.sqlSandbox.stats()).toEqual({ running: 0, waiting: 0 });
  });

  it('PASTE JOIN pairs rows by position: priced as the sum of its sides, and runs', async () => {
    const q = 'SELECT count() AS n FROM transactions a PASTE JOIN transactions b';
    const cost = await t.services.sqlSandbox.cost({ key: 'cost', plan: 'free', budget: new Budget('free', 'sql') }, q);
    expect(cost.joinRows).toBe(2 * ROWS);
    const res = await sql(q);
    expect(res.statusCode, res.body).toBe(200);
  });
});

describe('while a join runs', () => {
  it("keeps the engine's own join limits: right-side rows and bytes, throwing past them", async () => {
    const settings = await t.services.sqlSandbox.settings('free', {}, {});
    expect(settings).toMatchObject({ max_rows_in_join: PLAN_JOIN_ROWS.free, join_overflow_mode: 'throw' });
    expect(Number(settings.max_bytes_in_join)).toBeGreaterThan(0);
  });
});

describe('legitimate joins pass for a free key', () => {
  it.each(legitJoins.map((q) => [q.slice(0, 90), q] as const))('%s', async (_name, query) => {
    const res = await sql(query);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
  });

  it('prices a self-join on signature by the most rows one signature has', async () => {
    const [most] = await t.services.wh.query<{ n: string }>('SELECT max(c) AS n FROM (SELECT count() AS c FROM transactions GROUP BY signature)');
    const cost = await t.services.sqlSandbox.cost(
      { key: 'cost', plan: 'free', budget: new Budget('free', 'sql') },
      'SELECT count() FROM transactions a JOIN transactions b ON a.signature = b.signature',
    );
    expect(cost.joinRows).toBe(ROWS * Number(most?.n));
  });

  it('prices transactions joined with protocol_hourly on protocol_name and hour at most one hourly row per record', async () => {
    const cost = await t.services.sqlSandbox.cost(
      { key: 'cost', plan: 'free', budget: new Budget('free', 'sql') },
      'SELECT count() FROM transactions AS t JOIN protocol_hourly AS h ON h.protocol_name = t.protocol_name AND h.hour_start = toStartOfHour(t.block_time)',
    );
    expect(cost.joinRows).toBeLessThanOrEqual(ROWS);
  });
});

describe('hostile join corpus (test/fixtures/hostile-queries.json, category "join")', () => {
  it('holds every join shape the review asked for', () => {
    const text = joinCases.map((h) => String(h.query)).join('\n');
    for (const shape of [
      /t1\.fee = t1\.fee/,
      /\.success = \w+\.success/,
      /\.protocol_name = \w+\.protocol_name/,
      /\.instruction_type = \w+\.instruction_type/,
      /\.date = \w+\.date/,
      /JOIN transactions c ON/,
      /WITH \w+ AS \(SELECT .* JOIN/,
      /IN \(SELECT .* JOIN/,
      /ARRAY JOIN/,
      /arrayJoin\(range\(/,
      /transactions a, transactions b JOIN/,
    ]) {
      expect(text).toMatch(shape);
    }
    expect(joinCases.every((h) => h.outcome === 'refused' || h.outcome === 'runs')).toBe(true);
  });

  it.each(joinCases.map((h) => [`${h.outcome}: ${String(h.query).slice(0, 100)}`, h] as const))('%s', async (_name, h) => {
    const res = await sql(String(h.query));
    if (h.outcome === 'runs') {
      expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    } else {
      expect(res.statusCode, res.body.slice(0, 300)).toBe(400);
      expect((res.json() as { message: string }).message).toMatch(/join/);
    }
  });
});
