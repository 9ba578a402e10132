// Authentication on protected routes: missing key 401, invalid/inactive/revoked 403, key
// in the header or the query, X-RateLimit-* headers on success and on errors, and the
// api-key query parameter never reaching the logs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MISSING_KEY_MESSAGE } from '../../api/services/access/presented-key.ts';
import { addAccessTestRoutes } from '../support/access-routes.ts';
import { adminHeaders, apiKeyHeaders, createKey } from '../support/api-key.ts';
import { captureLog } from '../support/log-capture.ts';
import { startApp } from '../support/services.ts';

const log = captureLog('info');

let ctx: Awaited<ReturnType<typeof startApp>>;

beforeAll(async () => {
  ctx = await startApp({}, { logger: log.logger });
  addAccessTestRoutes(ctx.app);
  await ctx.app.ready();
});
afterAll(async () => {
  await ctx?.cleanup();
});

const get = (url: string, headers: Record<string, string> = {}) => ctx.app.inject({ method: 'GET', url, headers });

describe('missing key', () => {
  it('answers 401 with the exact message, on every protected prefix', async () => {
    for (const url of ['/api/v1/__access-test', '/v1/rpc', '/v1/query', '/graphql', '/api/v1/transactions']) {
      const res = await ctx.app.inject({ method: url === '/api/v1/__access-test' ? 'GET' : 'POST', url, payload: url.startsWith('/api') ? undefined : {} });
      expect(res.statusCode, url).toBe(401);
      // GraphQL answers in its own error shape, with the same status and message (docs/graphql.md).
      if (url === '/graphql') expect(res.json()).toMatchObject({ errors: [{ message: MISSING_KEY_MESSAGE, extensions: { code: 'UNAUTHENTICATED' } }] });
      else expect(res.json()).toEqual({ error: 'Unauthorized', message: MISSING_KEY_MESSAGE });
      // The per-address figures of keyless requests (this file raises ANONYMOUS_RATE_LIMIT).
      expect(res.headers['x-ratelimit-plan']).toBe('free');
      expect(res.headers['x-ratelimit-limit']).toBe('100000');
    }
    expect(MISSING_KEY_MESSAGE).toBe('API key required: send it in the x-api-key header or the api-key query parameter');
  });

  it('an empty header counts as missing', async () => {
    expect((await get('/api/v1/__access-test', { 'x-api-key': '' })).statusCode).toBe(401);
  });

  it('leaves /health, /admin and /metrics to their own rules', async () => {
    expect((await get('/health')).statusCode).toBe(200);
    expect((await get('/admin/keys', adminHeaders())).statusCode).toBe(200);
    expect((await get('/admin/keys')).statusCode).toBe(401);
    expect((await get('/metrics', adminHeaders())).statusCode).toBe(200);
  });
});

describe('invalid, inactive and revoked keys', () => {
  it('an unknown key is 403', async () => {
    const res = await get('/api/v1/__access-test', { 'x-api-key': 'txa_not-a-real-key' });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'Forbidden', message: 'Invalid API key' });
  });

  it('an inactive key is 403 and works again once reactivated', async () => {
    const { id, key } = await createKey(ctx.app, 'free', 'inactive-test');
    expect((await get('/api/v1/__access-test', { 'x-api-key': key })).statusCode).toBe(200);
    const patch = await ctx.app.inject({ method: 'PATCH', url: `/admin/keys/${id}`, headers: adminHeaders(), payload: { status: 'inactive' } });
    expect(patch.statusCode).toBe(200);
    expect(patch.json()).toMatchObject({ id, status: 'inactive', plan: 'free' });
    const res = await get('/api/v1/__access-test', { 'x-api-key': key });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'Forbidden', message: 'API key is inactive' });
    await ctx.app.inject({ method: 'PATCH', url: `/admin/keys/${id}`, headers: adminHeaders(), payload: { status: 'active' } });
    expect((await get('/api/v1/__access-test', { 'x-api-key': key })).statusCode).toBe(200);
  });

  it('a revoked key is 403 for good', async () => {
    const { id, key } = await createKey(ctx.app, 'free', 'revoke-test');
    const revoke = await ctx.app.inject({ method: 'POST', url: `/admin/keys/${id}/revoke`, headers: adminHeaders() });
    expect(revoke.statusCode).toBe(200);
    expect(revoke.json()).toMatchObject({ id, status: 'revoked' });
    const res = await get('/api/v1/__access-test', { 'x-api-key': key });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'Forbidden', message: 'API key has been revoked' });
    const back = await ctx.app.inject({ method: 'PATCH', url: `/admin/keys/${id}`, headers: adminHeaders(), payload: { status: 'active' } });
    expect(back.statusCode).toBe(400);
    expect((await get('/api/v1/__access-test', { 'x-api-key': key })).statusCode).toBe(403);
  });
});

describe('presenting a key', () => {
  it('works in the x-api-key header', async () => {
    const res = await get('/api/v1/__access-test', await apiKeyHeaders(ctx.app, 'x402'));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true, plan: 'x402' });
  });

  it('works in the api-key query parameter', async () => {
    const { 'x-api-key': key } = await apiKeyHeaders(ctx.app, 'x402');
    const res = await get(`/api/v1/__access-test?api-key=${encodeURIComponent(key!)}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true, plan: 'x402' });
  });

  it('the header wins when both are sent', async () => {
    const good = (await apiKeyHeaders(ctx.app, 'x402'))['x-api-key']!;
    expect((await get('/api/v1/__access-test?api-key=txa_wrong', { 'x-api-key': good })).statusCode).toBe(200);
    expect((await get(`/api/v1/__access-test?api-key=${encodeURIComponent(good)}`, { 'x-api-key': 'txa_wrong' })).statusCode).toBe(403);
  });
});

describe('rate-limit headers', () => {
  const expectHeaders = (headers: Record<string, unknown>, plan: string, limit: number) => {
    expect(headers['x-ratelimit-limit']).toBe(String(limit));
    expect(Number(headers['x-ratelimit-remaining'])).toBeGreaterThanOrEqual(0);
    expect(Number(headers['x-ratelimit-remaining'])).toBeLessThan(limit);
    const reset = String(headers['x-ratelimit-reset']);
    expect(reset).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00\.000Z$/);
    expect(Date.parse(reset)).toBeGreaterThan(Date.now());
    expect(Date.parse(reset) - Date.now()).toBeLessThanOrEqual(60_000);
    expect(headers['x-ratelimit-plan']).toBe(plan);
    expect(headers['retry-after']).toBeUndefined();
  };

  it('are on a successful response', async () => {
    const res = await get('/api/v1/__access-test', await apiKeyHeaders(ctx.app, 'enterprise'));
    expect(res.statusCode).toBe(200);
    expectHeaders(res.headers, 'enterprise', 2000);
    expect(res.headers['x-request-id']).toMatch(/[0-9a-f-]{36}/);
  });

  it('are on error responses: a failing handler and an unknown route', async () => {
    const headers = await apiKeyHeaders(ctx.app, 'free');
    const failed = await get('/api/v1/__access-test/fail', headers);
    expect(failed.statusCode).toBe(400);
    expect(failed.json()).toEqual({ error: 'Bad Request', message: 'this test route always fails' });
    expectHeaders(failed.headers, 'free', 100);
    const missing = await get('/api/v1/no-such-route', headers);
    expect(missing.statusCode).toBe(404);
    expectHeaders(missing.headers, 'free', 100);
  });

  it('remaining goes down by one per request', async () => {
    const headers = await apiKeyHeaders(ctx.app, 'x402');
    const a = Number((await get('/api/v1/__access-test', headers)).headers['x-ratelimit-remaining']);
    const b = Number((await get('/api/v1/__access-test', headers)).headers['x-ratelimit-remaining']);
    // Both requests normally fall in one window; across a minute boundary b restarts high.
    expect(b === a - 1 || b > a).toBe(true);
  });
});

describe('logs', () => {
  it('never contain a key: not the api-key query parameter, not at creation', async () => {
    // The log holds everything since start-up, key creations included.
    const { 'x-api-key': key } = await apiKeyHeaders(ctx.app, 'x402');
    expect(log.text()).toContain('api key created');
    await get(`/api/v1/__access-test?api-key=${encodeURIComponent(key!)}&other=1`);
    await get('/api/v1/no-such-route?api-key=txa_guessed_secret_value');
    await get('/api/v1/__access-test/fail?api-key=txa_another_guess');
    // pino writes asynchronously to the stream; give it a tick.
    await new Promise((r) => setTimeout(r, 50));
    expect(log.text()).toContain('[REDACTED]');
    expect(log.text()).toContain('other=1');
    expect(log.text()).not.toContain(key!);
    expect(log.text()).not.toContain('txa_guessed_secret_value');
    expect(log.text()).not.toContain('txa_another_guess');
  });
});
