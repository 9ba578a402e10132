// Rate limits per key and plan in fixed one-minute windows (in-process store), with the
// window clock injected so the test moves to the next minute instead of waiting for it.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { addAccessTestRoutes } from '../support/access-routes.ts';
import { adminHeaders, createKey } from '../support/api-key.ts';
import { startApp } from '../support/services.ts';

// 20 s into a minute: 40 s are left in the window.
let now = Date.UTC(2030, 0, 1, 12, 0, 20);
let ctx: Awaited<ReturnType<typeof startApp>>;

beforeAll(async () => {
  ctx = await startApp({ ANONYMOUS_RATE_LIMIT: '5' }, { now: () => now });
  addAccessTestRoutes(ctx.app);
  await ctx.app.ready();
});
afterAll(async () => {
  await ctx?.cleanup();
});

const get = (key: string, url = '/api/v1/__access-test') => ctx.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });

describe('per-key limit, free plan', () => {
  it('allows 100 requests a minute, answers the 101st with 429, and resets with the next window', async () => {
    const { key } = await createKey(ctx.app, 'free', 'limit-test');
    for (let i = 1; i <= 100; i++) {
      const res = await get(key);
      expect(res.statusCode, `request ${i}`).toBe(200);
      expect(res.headers['x-ratelimit-remaining']).toBe(String(100 - i));
    }
    const limited = await get(key);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({
      error: 'Too Many Requests',
      message: 'Rate limit exceeded: 100 requests per minute for plan free; retry after 40 s',
    });
    expect(limited.headers['retry-after']).toBe('40');
    expect(limited.headers['x-ratelimit-limit']).toBe('100');
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    expect(limited.headers['x-ratelimit-plan']).toBe('free');
    expect(limited.headers['x-ratelimit-reset']).toBe('2030-01-01T12:01:00.000Z');

    // Still limited later in the same window, with a shorter wait.
    now += 39_500;
    const later = await get(key);
    expect(later.statusCode).toBe(429);
    expect(later.headers['retry-after']).toBe('1');

    // The next window starts afresh.
    now += 1_000;
    const fresh = await get(key);
    expect(fresh.statusCode).toBe(200);
    expect(fresh.headers['x-ratelimit-remaining']).toBe('99');
    expect(fresh.headers['x-ratelimit-reset']).toBe('2030-01-01T12:02:00.000Z');
    expect(fresh.headers['retry-after']).toBeUndefined();
  });

  it('counts per key: another key of the same plan has its own window', async () => {
    const a = await createKey(ctx.app, 'free', 'a');
    const b = await createKey(ctx.app, 'free', 'b');
    for (let i = 0; i < 10; i++) await get(a.key);
    expect((await get(b.key)).headers['x-ratelimit-remaining']).toBe('99');
  });
});

describe('plans', () => {
  it('each plan announces its own limit, and a plan change applies at once', async () => {
    const { id, key } = await createKey(ctx.app, 'x402', 'plan-test');
    const x402 = await get(key);
    expect(x402.headers['x-ratelimit-limit']).toBe('500');
    expect(x402.headers['x-ratelimit-plan']).toBe('x402');
    const patch = await ctx.app.inject({ method: 'PATCH', url: `/admin/keys/${id}`, headers: adminHeaders(), payload: { plan: 'enterprise' } });
    expect(patch.statusCode).toBe(200);
    const ent = await get(key);
    expect(ent.headers['x-ratelimit-limit']).toBe('2000');
    expect(ent.headers['x-ratelimit-plan']).toBe('enterprise');
    // The window's count carries over: two requests so far.
    expect(ent.headers['x-ratelimit-remaining']).toBe('1998');
  });
});

describe('several units per request', () => {
  it('counts every call of a JSON-RPC batch', async () => {
    const { key } = await createKey(ctx.app, 'free', 'batch-test');
    const batch = Array.from({ length: 10 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'getProtocols' }));
    const res = await ctx.app.inject({ method: 'POST', url: '/v1/rpc', headers: { 'x-api-key': key }, payload: batch });
    expect(res.headers['x-ratelimit-remaining']).toBe('90');
    const single = await ctx.app.inject({
      method: 'POST',
      url: '/v1/rpc',
      headers: { 'x-api-key': key },
      payload: { jsonrpc: '2.0', id: 1, method: 'getProtocols' },
    });
    expect(single.headers['x-ratelimit-remaining']).toBe('89');
    // A batch larger than what is left is refused whole.
    const big = Array.from({ length: 95 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'getProtocols' }));
    const refused = await ctx.app.inject({ method: 'POST', url: '/v1/rpc', headers: { 'x-api-key': key }, payload: big });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('a batch refused for the rate limit is recorded in usage call by call: invented names folded, notifications left out', async () => {
    const { id, key } = await createKey(ctx.app, 'free', 'refused-batch');
    const post = (payload: unknown) => ctx.app.inject({ method: 'POST', url: '/v1/rpc', headers: { 'x-api-key': key }, payload: payload as object });
    const spend = await post(Array.from({ length: 98 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'getProtocols' })));
    expect(spend.headers['x-ratelimit-remaining']).toBe('2');
    const refused = await post([
      { jsonrpc: '2.0', id: 1, method: 'getProtocols' },
      { jsonrpc: '2.0', id: 2, method: 'probe_a' },
      { jsonrpc: '2.0', id: 3, method: 'probe_b' },
      { jsonrpc: '2.0', method: 'getProtocols' },
    ]);
    expect(refused.statusCode).toBe(429);
    const usage = await ctx.app.inject({ method: 'GET', url: `/admin/keys/${id}/usage?granularity=day&flush=true`, headers: adminHeaders() });
    const rows = usage.json<{ data: { method: string; requests: number; errors: number; rateLimited: number }[] }>().data;
    expect(Object.fromEntries(rows.map((r) => [r.method, { requests: r.requests, errors: r.errors, rateLimited: r.rateLimited }]))).toEqual({
      getProtocols: { requests: 99, errors: 1, rateLimited: 1 },
      '(unknown)': { requests: 2, errors: 2, rateLimited: 2 },
    });
  });

  it('request.consumeRateLimit(n) lets an adapter count extra units', async () => {
    const { key } = await createKey(ctx.app, 'free', 'units-test');
    const res = await ctx.app.inject({ method: 'POST', url: '/graphql/__access-test', headers: { 'x-api-key': key }, payload: { units: 4 } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-ratelimit-remaining']).toBe('95');
    const over = await ctx.app.inject({ method: 'POST', url: '/graphql/__access-test', headers: { 'x-api-key': key }, payload: { units: 200 } });
    expect(over.statusCode).toBe(429);
    expect(over.json()).toMatchObject({ error: 'Too Many Requests' });
  });
});

describe('requests without a valid key', () => {
  it('are limited per client IP, so keys cannot be guessed at speed', async () => {
    const guess = (i: number, ip = '203.0.113.7') =>
      ctx.app.inject({ method: 'GET', url: '/api/v1/__access-test', headers: { 'x-api-key': `txa_guess_${i}` }, remoteAddress: ip });
    for (let i = 0; i < 5; i++) expect((await guess(i)).statusCode).toBe(403);
    const limited = await guess(5);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ error: 'Too Many Requests' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Per-address figures, labelled with the lowest plan (docs/access.md).
    expect(limited.headers['x-ratelimit-plan']).toBe('free');
    expect(limited.headers['x-ratelimit-limit']).toBe('5');
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    // Missing keys count against the same address budget.
    const missing = await ctx.app.inject({ method: 'GET', url: '/api/v1/__access-test', remoteAddress: '203.0.113.7' });
    expect(missing.statusCode).toBe(429);
    // Another address is unaffected, and so is a valid key from the limited address.
    expect((await guess(6, '203.0.113.8')).statusCode).toBe(403);
    const { key } = await createKey(ctx.app, 'free', 'ip-test');
    const ok = await ctx.app.inject({ method: 'GET', url: '/api/v1/__access-test', headers: { 'x-api-key': key }, remoteAddress: '203.0.113.7' });
    expect(ok.statusCode).toBe(200);
  });
});

describe('unknown keys once the address has spent its budget', () => {
  it('are refused 429 before any key lookup, so guessing cannot load the engine', async () => {
    const ip = '192.0.2.55';
    const query = vi.spyOn(ctx.services.wh, 'query');
    // A secret missing from the key snapshot is looked up by its hash (ApiKeyStore.findBySecret).
    const lookups = (): number => query.mock.calls.filter(([sql]) => /key_hash = \{hash/.test(sql)).length;
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const res = await ctx.app.inject({
        method: 'GET',
        url: '/api/v1/__access-test',
        headers: { 'x-api-key': `txa_${randomBytes(32).toString('base64url')}` },
        remoteAddress: ip,
      });
      statuses.push(res.statusCode);
    }
    const storeLookups = lookups();
    query.mockRestore();
    expect(statuses).toEqual([...Array(5).fill(403), ...Array(35).fill(429)]);
    expect(storeLookups).toBe(5);
  });
});

describe('X-RateLimit-* without a valid key', () => {
  const headersOf = (res: { headers: Record<string, unknown> }) => ({
    limit: res.headers['x-ratelimit-limit'],
    remaining: res.headers['x-ratelimit-remaining'],
    reset: res.headers['x-ratelimit-reset'],
    plan: res.headers['x-ratelimit-plan'],
    retryAfter: res.headers['retry-after'],
  });

  it("401 and 403 carry the address's per-IP figures, counting down", async () => {
    const ip = '198.51.100.21';
    const missing = await ctx.app.inject({ method: 'GET', url: '/api/v1/__access-test', remoteAddress: ip });
    expect(missing.statusCode).toBe(401);
    const reset = new Date((Math.floor(now / 60_000) + 1) * 60_000).toISOString();
    expect(headersOf(missing)).toEqual({ limit: '5', remaining: '4', reset, plan: 'free', retryAfter: undefined });
    const wrong = await ctx.app.inject({ method: 'POST', url: '/v1/rpc', headers: { 'x-api-key': 'txa_wrong' }, payload: {}, remoteAddress: ip });
    expect(wrong.statusCode).toBe(403);
    expect(headersOf(wrong)).toEqual({ limit: '5', remaining: '3', reset, plan: 'free', retryAfter: undefined });
  });

  it('responses outside any limit (/health) show the figures without spending them', async () => {
    const ip = '198.51.100.22';
    await ctx.app.inject({ method: 'GET', url: '/api/v1/__access-test', remoteAddress: ip });
    const health = await ctx.app.inject({ method: 'GET', url: '/health', remoteAddress: ip });
    expect(health.statusCode).toBe(200);
    expect(headersOf(health)).toMatchObject({ limit: '5', remaining: '4', plan: 'free', retryAfter: undefined });
    expect(headersOf(await ctx.app.inject({ method: 'GET', url: '/health', remoteAddress: ip }))).toMatchObject({ remaining: '4' });
    // A fresh address shows its whole budget.
    expect(headersOf(await ctx.app.inject({ method: 'GET', url: '/health', remoteAddress: '198.51.100.23' }))).toMatchObject({
      limit: '5',
      remaining: '5',
      plan: 'free',
    });
  });
});

describe('metrics', () => {
  it('count rate-limit rejections by plan, never by key', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/metrics', headers: adminHeaders() });
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(/txa_rate_limit_rejections_total\{plan="free"\} [1-9]/);
    expect(res.body).toMatch(/txa_rate_limit_rejections_total\{plan="anonymous"\} [1-9]/);
    expect(res.body).not.toContain('limit-test');
  });
});
