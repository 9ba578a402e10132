// Fair sharing of the SQL sessions between plans (api/services/sql/concurrency-gate.ts, PLAN_HEAVY_SHARE):
// free keys running the heaviest queries their plan allows hold at most their share of the
// sessions, so another plan's key is answered while they run, never after them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyHeaders, createKey } from '../support/api-key.ts';
import { ingestDemo } from '../support/fixtures.ts';
import { startApp } from '../support/services.ts';

let t: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  t = await startApp({ SQL_TIMEOUT_SECONDS: '8', SQL_SESSIONS: '2', SQL_QUEUE_PER_KEY: '0' });
  await ingestDemo(t.services, 2000);
});
afterAll(async () => t?.cleanup());

// Within the free budget (4M row pairs), but hundreds of hashes per pair: it runs to the time-out.
const HEAVY =
  'SELECT count() FROM transactions a JOIN transactions b ON a.signature = b.signature OR 1 = 1 WHERE arraySum(arrayMap(x -> sipHash64(x, a.fee, b.fee) % 2, range(200))) > 0';

const sql = (headers: Record<string, string>, query: string) =>
  t.app.inject({ method: 'POST', url: '/v1/query', headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify({ query }) });

describe('SQL sessions shared between plans', () => {
  it("two free keys with heavy queries hold one session between them; an enterprise key's query runs on the other at once", async () => {
    const free1 = { 'x-api-key': (await createKey(t.app, 'free', 'free-1')).key };
    const free2 = { 'x-api-key': (await createKey(t.app, 'free', 'free-2')).key };
    const enterprise = await apiKeyHeaders(t.app, 'enterprise');
    const first = sql(free1, HEAVY);
    for (let i = 0; i < 200 && t.services.sqlSandbox.stats().running === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const second = sql(free2, HEAVY);
    for (let i = 0; i < 200 && t.services.sqlSandbox.stats().waiting === 0; i++) await new Promise((r) => setTimeout(r, 20));
    // The second free query waits although a session is free: that one is kept for the other plans.
    expect(t.services.sqlSandbox.stats()).toEqual({ running: 1, waiting: 1 });
    const quick = await sql(enterprise, 'SELECT 1 AS one');
    expect(quick.statusCode).toBe(200);
    // Answered while the free queries still ran or waited: it never queued behind them.
    expect(t.services.sqlSandbox.stats().running + t.services.sqlSandbox.stats().waiting).toBe(2);
    const [a, b] = await Promise.all([first, second]);
    expect(a.statusCode, a.body).toBe(408);
    expect([408, 429]).toContain(b.statusCode);
  }, 60_000);
});
