// Polls of SQL executions are cheap, not free (docs/rest-and-sql.md, "SQL executions"): a key's
// polls spend a window of their own (EXECUTION_POLLS_PER_MINUTE), answered 429 with
// Retry-After past it; a poll of an id the key has no execution under is charged like any
// request; and a flood of refused requests is logged one line per key per window, with a
// count, not two lines per request (api/services/access/refusal-log.ts). Before, polls were free: one
// free key made 3,941 polls a second, and 66,054 polls of unknown ids in 20 s, each logged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SampledRefusalLog } from '../../api/services/access/refusal-log.ts';
import { REFUSAL_LOG_WINDOW_SECONDS } from '../../core/limits/access.ts';
import { EXECUTION_POLLS_PER_MINUTE } from '../../core/limits/sql.ts';
import { PLAN_LIMITS } from '../../core/plans.ts';
import { createKey } from '../support/api-key.ts';
import { captureLog } from '../support/log-capture.ts';
import { startApp } from '../support/services.ts';

const log = captureLog('info');
/** The rate windows' clock: each test moves it a minute on, into windows of its own. */
let clock = Date.now();
let t: Awaited<ReturnType<typeof startApp>>;

beforeAll(async () => {
  t = await startApp({}, { logger: log.logger, now: () => clock });
});
afterAll(async () => t?.cleanup());

const UNKNOWN = 'exp_AAAAAAAAAAAAAAAA';
const poll = (key: string, id: string) => t.app.inject({ method: 'GET', url: `/v1/query/executions/${id}`, headers: { 'x-api-key': key } });

async function freshKeyWithExecution(name: string): Promise<{ key: string; id: string }> {
  clock += 60_000;
  const { key } = await createKey(t.app, 'free', name);
  const started = await t.app.inject({ method: 'POST', url: '/v1/query/executions', headers: { 'x-api-key': key }, payload: { query: 'SELECT 1 AS one' } });
  expect(started.statusCode, started.body).toBe(202);
  return { key, id: started.json<{ id: string }>().id };
}

describe('polls of an execution', () => {
  it(`spend a window of their own, ${EXECUTION_POLLS_PER_MINUTE} a minute, not the plan's requests; the next is 429 with Retry-After`, async () => {
    const { key, id } = await freshKeyWithExecution('polls');
    const remaining = (await poll(key, id)).headers['x-ratelimit-remaining'];
    for (let i = 1; i < EXECUTION_POLLS_PER_MINUTE; i++) {
      const res = await poll(key, id);
      expect(res.statusCode, `poll ${i + 1}`).toBe(200);
      expect(res.headers['x-ratelimit-remaining']).toBe(remaining);
    }
    const refused = await poll(key, id);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({
      error: 'Too Many Requests',
      message: expect.stringMatching(new RegExp(`^Too many polls: ${EXECUTION_POLLS_PER_MINUTE} polls of SQL executions per minute per API key`)),
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Other requests of the key are not held back by its polls.
    const page = await t.app.inject({ method: 'GET', url: `/v1/query/executions/${id}/results`, headers: { 'x-api-key': key } });
    expect([200, 409]).toContain(page.statusCode);
    clock += 60_000;
    expect((await poll(key, id)).statusCode).toBe(200);
  });

  it("of an id the key has no execution under are charged like any request: the plan's window runs out", async () => {
    const { key } = await freshKeyWithExecution('unknown-ids');
    const other = await freshKeyWithExecution('other-key');
    clock += 60_000;
    const ids = [UNKNOWN, other.id];
    for (let i = 0; i < PLAN_LIMITS.free; i++) {
      const res = await poll(key, ids[i % 2]!);
      expect(res.statusCode).toBe(404);
      expect(Number(res.headers['x-ratelimit-remaining'])).toBe(PLAN_LIMITS.free - i - 1);
    }
    const refused = await poll(key, UNKNOWN);
    expect(refused.statusCode).toBe(429);
    expect(refused.json<{ message: string }>().message).toMatch(/^Rate limit exceeded: 100 requests per minute for plan free/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });
});

describe('a flood of refused requests in the log', () => {
  it('makes one line per key per window, then one line with the count, not two per request', async () => {
    const { key, id } = await freshKeyWithExecution('flood');
    for (let i = 0; i < EXECUTION_POLLS_PER_MINUTE; i++) await poll(key, id);
    // A second app on the same services: closing it logs the count of its open window.
    const { buildApp } = await import('../../api/server/app.ts');
    const app = await buildApp(t.services);
    const before = log.text().length;
    const started = Date.now();
    const FLOOD = 300;
    for (let i = 0; i < FLOOD; i++) {
      const res = await app.inject({ method: 'GET', url: `/v1/query/executions/${id}`, headers: { 'x-api-key': key } });
      expect(res.statusCode).toBe(429);
    }
    const windows = Math.ceil((Date.now() - started) / (REFUSAL_LOG_WINDOW_SECONDS * 1000));
    // Lines of requests and of refusals (not the service's background work).
    const since = (): Record<string, unknown>[] =>
      log
        .text()
        .slice(before)
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.reqId !== undefined || l.subject !== undefined);
    const during = since();
    // The first request's "incoming request", its refusal's line, then at most a count per
    // window that ended while the flood went on (2 x 300 lines before).
    expect(during.length).toBeLessThanOrEqual(2 + windows);
    expect(during.find((l) => l.statusCode === 429)).toMatchObject({ subject: expect.stringMatching(/^key:/), req: { url: `/v1/query/executions/${id}` } });
    await app.close();
    const counted = since().filter((l) => typeof l.refused === 'number');
    expect(counted.reduce((n, l) => n + Number(l.refused), 0)).toBe(FLOOD - 1);
  });
});

describe('the sampled refusal log', () => {
  it("logs a key's first refusal, counts the rest per window, rolls on while they go on, and stops after", () => {
    const sink = captureLog('info');
    let now = 0;
    const ctl = new SampledRefusalLog(sink.logger, () => now);
    const refuse = (keyId: string | null, ip = '10.0.0.1') =>
      ctl.requestCompleted(
        null,
        { id: 'r', method: 'GET', url: '/x', ip, apiKey: keyId === null ? null : { id: keyId, name: 'k', plan: 'free' } } as never,
        { statusCode: 429, elapsedTime: 1, log: sink.logger } as never,
      );
    const lines = (): { msg: string; refused?: number; subject?: string }[] =>
      sink
        .text()
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l));
    for (let i = 0; i < 50; i++) refuse('k1');
    refuse(null);
    expect(lines().map((l) => l.subject)).toEqual(['key:k1', 'ip:10.0.0.1']);
    now += REFUSAL_LOG_WINDOW_SECONDS * 1000;
    for (let i = 0; i < 5; i++) refuse('k1');
    ctl.flush();
    // k1: 49 in its first window and 5 after it ended, counted there; the address had one.
    expect(
      lines()
        .slice(2)
        .map((l) => [l.subject, l.refused]),
    ).toEqual([['key:k1', 54]]);
    now += REFUSAL_LOG_WINDOW_SECONDS * 1000;
    ctl.flush();
    // Nothing more: the windows are closed, and the next refusal is logged at once again.
    expect(lines()).toHaveLength(3);
    refuse('k1');
    expect(lines()).toHaveLength(4);
    ctl.stop();
  });
});
