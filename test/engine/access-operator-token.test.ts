// Wrong operator tokens (ADMIN_TOKEN on /admin/*, METRICS_TOKEN or ADMIN_TOKEN on /metrics)
// are limited per client address in one budget, so neither secret can be guessed at speed;
// the window clock is injected so the test moves to the next minute instead of waiting.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_TOKEN_FAILURES_PER_MINUTE } from '../../api/services/access/operator-auth.ts';
import { ADMIN_TOKEN, startApp } from '../support/services.ts';

const METRICS_TOKEN = 'test-metrics-token-0123456789';
// 20 s into a minute: 40 s are left in the window.
let now = Date.UTC(2030, 0, 1, 12, 0, 20);
let ctx: Awaited<ReturnType<typeof startApp>>;

beforeAll(async () => {
  ctx = await startApp({ METRICS_TOKEN }, { now: () => now });
});
afterAll(async () => {
  await ctx?.cleanup();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const admin = (ip: string, token: string, url = '/admin/keys') => ctx.app.inject({ method: 'GET', url, headers: bearer(token), remoteAddress: ip });
const metrics = (ip: string, token: string) => ctx.app.inject({ method: 'GET', url: '/metrics', headers: bearer(token), remoteAddress: ip });

describe('failed operator-token attempts', () => {
  it('the limit is 20 wrong tokens a minute per address', () => {
    expect(OPERATOR_TOKEN_FAILURES_PER_MINUTE).toBe(20);
  });

  it('80 wrong admin tokens: 20 answered 403, the other 60 answered 429, and then the right token is 429 too until the window ends', async () => {
    const ip = '192.0.2.10';
    const statuses: number[] = [];
    for (let i = 0; i < 80; i++) {
      const res = await admin(ip, `guess-${i}-aaaaaaaaaaaaaaaa`);
      statuses.push(res.statusCode);
      if (i < 20) {
        expect(res.json()).toEqual({ error: 'Forbidden', message: 'Invalid admin token' });
        expect(res.headers['x-ratelimit-limit']).toBe('20');
        expect(res.headers['x-ratelimit-remaining']).toBe(String(19 - i));
        expect(res.headers['x-ratelimit-plan']).toBe('free');
        expect(res.headers['retry-after']).toBeUndefined();
      }
    }
    expect(statuses.filter((s) => s === 403)).toHaveLength(20);
    expect(statuses.slice(20).every((s) => s === 429)).toBe(true);

    const right = await admin(ip, ADMIN_TOKEN);
    expect(right.statusCode).toBe(429);
    expect(right.json()).toEqual({
      error: 'Too Many Requests',
      message: 'Too many failed operator-token attempts from this address: 20 per minute; retry after 40 s',
    });
    expect(right.headers['retry-after']).toBe('40');
    expect(right.headers['x-ratelimit-limit']).toBe('20');
    expect(right.headers['x-ratelimit-remaining']).toBe('0');
    expect(right.headers['x-ratelimit-reset']).toBe('2030-01-01T12:01:00.000Z');
    expect(right.headers['x-ratelimit-plan']).toBe('free');
    // No admin write slips through either, nor a missing token, nor an unknown admin path.
    const create = await ctx.app.inject({
      method: 'POST',
      url: '/admin/keys',
      headers: bearer(ADMIN_TOKEN),
      payload: { name: 'x', plan: 'free' },
      remoteAddress: ip,
    });
    expect(create.statusCode).toBe(429);
    expect((await ctx.app.inject({ method: 'GET', url: '/admin/keys', remoteAddress: ip })).statusCode).toBe(429);
    expect((await admin(ip, ADMIN_TOKEN, '/admin/no-such-thing')).statusCode).toBe(429);
    // /metrics shares the budget: the admin token is accepted there, and so is the metrics token.
    expect((await metrics(ip, METRICS_TOKEN)).statusCode).toBe(429);

    // Another address is unaffected.
    expect((await admin('192.0.2.11', ADMIN_TOKEN)).statusCode).toBe(200);
    // The next window starts afresh.
    now += 40_000;
    const fresh = await admin(ip, ADMIN_TOKEN);
    expect(fresh.statusCode).toBe(200);
    expect(fresh.headers['x-ratelimit-remaining']).toBe('20');
    expect(fresh.headers['retry-after']).toBeUndefined();
  });

  it('wrong metrics tokens spend the same budget as wrong admin tokens', async () => {
    const ip = '192.0.2.20';
    for (let i = 0; i < 10; i++) expect((await metrics(ip, `nope-${i}`)).statusCode).toBe(403);
    const res = await metrics(ip, 'still-wrong');
    expect(res.json()).toEqual({ error: 'Forbidden', message: 'Invalid metrics token' });
    expect(res.headers['x-ratelimit-remaining']).toBe('9');
    for (let i = 0; i < 9; i++) expect((await admin(ip, `nope-${i}`)).statusCode).toBe(403);
    expect((await admin(ip, ADMIN_TOKEN)).statusCode).toBe(429);
    expect((await metrics(ip, METRICS_TOKEN)).statusCode).toBe(429);
  });

  it('a correct token and a missing one spend nothing, and both carry the headers', async () => {
    const ip = '192.0.2.30';
    for (let i = 0; i < 5; i++) expect((await admin(ip, ADMIN_TOKEN)).statusCode).toBe(200);
    const none = await ctx.app.inject({ method: 'GET', url: '/admin/keys', remoteAddress: ip });
    expect(none.statusCode).toBe(401);
    expect(none.headers['x-ratelimit-remaining']).toBe('20');
    const ok = await metrics(ip, METRICS_TOKEN);
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['x-ratelimit-limit']).toBe('20');
    expect(ok.headers['x-ratelimit-remaining']).toBe('20');
    expect(ok.headers['x-ratelimit-plan']).toBe('free');
  });

  it('unknown admin paths and methods are behind the token', async () => {
    const ip = '192.0.2.40';
    const anon = await ctx.app.inject({ method: 'GET', url: '/admin/secret-route', remoteAddress: ip });
    expect(anon.statusCode).toBe(401);
    const wrong = await ctx.app.inject({ method: 'DELETE', url: '/admin/keys', headers: bearer('wrong'), remoteAddress: ip });
    expect(wrong.statusCode).toBe(403);
    const known = await ctx.app.inject({ method: 'DELETE', url: '/admin/keys', headers: bearer(ADMIN_TOKEN), remoteAddress: ip });
    expect(known.statusCode).toBe(404);
    expect(known.json()).toEqual({ error: 'Not Found', message: 'no route for DELETE /admin/keys' });
  });

  it('refusals are counted in the metrics, by plan "operator" and reason "operator_token"', async () => {
    const res = await metrics('192.0.2.50', METRICS_TOKEN);
    expect(res.body).toMatch(/txa_rate_limit_rejections_total\{plan="operator"\} [1-9]/);
    expect(res.body).toMatch(/txa_auth_failures_total\{reason="operator_token"\} [1-9]/);
  });
});
