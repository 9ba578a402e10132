// Several API processes: two apps, each with its own key cache and rate-limit client,
// share one real redis-server (started here from the Debian binary) and one warehouse.
// They must enforce one limit per key between them and see a revocation made through
// either within one second. A third app without Redis shows the cache TTL alone bounds
// how late a revocation is seen.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/logger.ts';
import { createAccess, type Access } from '../../api/services/access/access.ts';
import { Metrics } from '../../core/metrics.ts';
import { buildApp } from '../../api/server/app.ts';
import { loadConfig } from '../../core/config/load-config.ts';
import { addAccessTestRoutes } from '../support/access-routes.ts';
import { adminHeaders, createKey } from '../support/api-key.ts';
import { startRedisServer, type RedisServer } from '../../scripts/daemons/redis-server.ts';
import { ADMIN_TOKEN, startServices } from '../support/services.ts';

let redis: RedisServer;
let services: Awaited<ReturnType<typeof startServices>>;
let appA: FastifyInstance;
let appB: FastifyInstance;
let appC: FastifyInstance;
const extra: Access[] = [];

/** Another "process": its own access parts (cache, limiter client, usage buffer) and app. */
async function secondApp(env: Record<string, string>): Promise<FastifyInstance> {
  const config = loadConfig({ DATA_DIR: services.config.dataDir, DEMO_ROWS: '0', ADMIN_TOKEN, LOG_LEVEL: 'silent', ...env });
  const metrics = new Metrics();
  const access = await createAccess({ config, wh: services.wh, logger: createLogger('silent'), metrics });
  extra.push(access);
  const app = await buildApp({ ...services, config, metrics, access });
  addAccessTestRoutes(app);
  await app.ready();
  return app;
}

beforeAll(async () => {
  redis = await startRedisServer();
  services = await startServices({ REDIS_URL: redis.url });
  appA = await buildApp(services);
  addAccessTestRoutes(appA);
  await appA.ready();
  appB = await secondApp({ REDIS_URL: redis.url });
  appC = await secondApp({});
});

afterAll(async () => {
  for (const app of [appA, appB, appC]) await app?.close();
  for (const a of extra) await a.close();
  await services?.cleanup();
  await redis?.stop();
});

const get = (app: FastifyInstance, key: string) => app.inject({ method: 'GET', url: '/api/v1/__access-test', headers: { 'x-api-key': key } });

/** Milliseconds until `app` answers 403 for `key`, polling every 20 ms for up to 3 s. */
async function msUntilRefused(app: FastifyInstance, key: string, since: number): Promise<number> {
  while (Date.now() - since < 3000) {
    if ((await get(app, key)).statusCode === 403) return Date.now() - since;
    await new Promise((r) => setTimeout(r, 20));
  }
  return Infinity;
}

describe('one limit across API processes (Redis store)', () => {
  it('uses the redis store', () => {
    expect(services.access.rateLimitStore.kind).toBe('redis');
    expect(extra[0]!.rateLimitStore.kind).toBe('redis');
  });

  it('100 requests of a free key split over two apps exhaust the one limit', async () => {
    const { key } = await createKey(appA, 'free', 'shared-limit');
    // Stay clear of a minute boundary, where the window (rightly) restarts mid-test.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 55_000) await new Promise((r) => setTimeout(r, 60_500 - intoMinute));
    for (let i = 1; i <= 100; i++) {
      const res = await get(i % 2 === 0 ? appA : appB, key);
      expect(res.statusCode, `request ${i}`).toBe(200);
      expect(res.headers['x-ratelimit-remaining']).toBe(String(100 - i));
    }
    for (const app of [appA, appB]) {
      const res = await get(app, key);
      expect(res.statusCode).toBe(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
  });
});

describe('one budget of wrong operator tokens across API processes', () => {
  it('10 wrong admin tokens on one app and 10 on the other exhaust it; then the right token is 429 on both', async () => {
    const ip = '192.0.2.77';
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 55_000) await new Promise((r) => setTimeout(r, 60_500 - intoMinute));
    const admin = (app: FastifyInstance, token: string) =>
      app.inject({ method: 'GET', url: '/admin/keys', headers: { authorization: `Bearer ${token}` }, remoteAddress: ip });
    for (let i = 0; i < 20; i++) expect((await admin(i % 2 === 0 ? appA : appB, `wrong-${i}`)).statusCode, `guess ${i}`).toBe(403);
    for (const app of [appA, appB]) {
      const res = await admin(app, ADMIN_TOKEN);
      expect(res.statusCode).toBe(429);
      expect(res.json()).toMatchObject({ error: 'Too Many Requests' });
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
  });
});

describe('concurrent requests', () => {
  it('150 at once over two apps: exactly 100 get through (the Redis increment is atomic)', async () => {
    const { key } = await createKey(appA, 'free', 'concurrent');
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 55_000) await new Promise((r) => setTimeout(r, 60_500 - intoMinute));
    // A route outside the per-key cap on requests in flight (JSON-RPC and REST only), so
    // only the per-minute limit decides.
    const post = (app: FastifyInstance) => app.inject({ method: 'POST', url: '/graphql/__access-test', headers: { 'x-api-key': key }, payload: {} });
    const answers = await Promise.all(Array.from({ length: 150 }, (_, i) => post(i % 2 === 0 ? appA : appB)));
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    expect(statuses.filter((s) => s === 429)).toHaveLength(50);
    // Each allowed request saw a distinct count: remaining values 0..99 once each.
    const remaining = answers.filter((a) => a.statusCode === 200).map((a) => Number(a.headers['x-ratelimit-remaining']));
    expect(new Set(remaining).size).toBe(100);
  });
});

describe('revocation reaches every process within one second', () => {
  it('through Redis announcements', async () => {
    const { id, key } = await createKey(appA, 'enterprise', 'revoke-shared');
    expect((await get(appB, key)).statusCode).toBe(200); // B now has the key cached
    const t0 = Date.now();
    const res = await appA.inject({ method: 'POST', url: `/admin/keys/${id}/revoke`, headers: adminHeaders() });
    expect(res.statusCode).toBe(200);
    expect(await msUntilRefused(appB, key, t0)).toBeLessThan(1000);
  });

  it('through the cache TTL alone (a process without Redis)', async () => {
    const { id, key } = await createKey(appA, 'enterprise', 'revoke-ttl');
    expect((await get(appC, key)).statusCode).toBe(200);
    const t0 = Date.now();
    await appA.inject({ method: 'PATCH', url: `/admin/keys/${id}`, headers: adminHeaders(), payload: { status: 'inactive' } });
    expect(await msUntilRefused(appC, key, t0)).toBeLessThan(1000);
  });
});

describe('Redis outage', () => {
  it('fails /health naming the store, while requests are still served and limited per process', async () => {
    const { key } = await createKey(appA, 'free', 'outage');
    await redis.stop();
    const health = await appA.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(503);
    expect(health.json()).toMatchObject({ status: 'unavailable', failing: 'rateLimitStore' });
    const res = await get(appA, key);
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-ratelimit-remaining']).toBe('99');
  });

  it('comes back: /health passes again and the one shared limit counts across both processes again', async () => {
    await redis.restart();
    const { key } = await createKey(appA, 'free', 'after-outage');
    // Each process's client reconnects on its own (ioredis retries); wait for both rather
    // than for a clock.
    for (const app of [appA, appB]) {
      const deadline = Date.now() + 20_000;
      let health = await app.inject({ method: 'GET', url: '/health' });
      while (health.statusCode !== 200 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        health = await app.inject({ method: 'GET', url: '/health' });
      }
      expect(health.statusCode).toBe(200);
    }
    await get(appA, key);
    const fromB = await get(appB, key);
    // One count across the processes again: B sees A's request.
    expect(fromB.headers['x-ratelimit-remaining']).toBe('98');
  }, 60_000);
});
