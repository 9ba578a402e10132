// The operator side: key creation and listing (the secret shown once, only its hash
// stored), status and plan changes, per-key usage written in batches, /health, and the
// `npm run keys` CLI against a listening service.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addAccessTestRoutes } from '../support/access-routes.ts';
import { adminHeaders, createKey } from '../support/api-key.ts';
import { ADMIN_TOKEN, startApp } from '../support/services.ts';

const run = promisify(execFile);
let ctx: Awaited<ReturnType<typeof startApp>>;

beforeAll(async () => {
  // A short flush interval so the timer-driven flush is seen without waiting long.
  ctx = await startApp({ USAGE_FLUSH_MS: '300' });
  addAccessTestRoutes(ctx.app);
  await ctx.app.ready();
});
afterAll(async () => {
  await ctx?.cleanup();
});

const admin = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
  ctx.app.inject({ method, url, headers: adminHeaders(), ...(payload ? { payload } : {}) });

describe('POST /admin/keys', () => {
  it('creates a key and shows its secret once; only the hash is stored', async () => {
    const res = await admin('POST', '/admin/keys', { name: 'ci', plan: 'free' });
    expect(res.statusCode).toBe(201);
    const body = res.json<{ id: string; key: string; name: string; plan: string; status: string; createdAt: string }>();
    expect(Object.keys(body).sort()).toEqual(['createdAt', 'id', 'key', 'name', 'plan', 'status']);
    expect(body).toMatchObject({ name: 'ci', plan: 'free', status: 'active' });
    expect(body.key).toMatch(/^txa_[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(body.createdAt)).toBeGreaterThan(Date.now() - 60_000);

    const rows = await ctx.services.wh.query<Record<string, string>>('SELECT * FROM api_keys WHERE id = {id:String}', { params: { id: body.id } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.key_hash).toBe(createHash('sha256').update(body.key).digest('hex'));
    expect(JSON.stringify(rows)).not.toContain(body.key);

    const list = await admin('GET', '/admin/keys');
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain(body.key);
    const listed = list.json<{ data: { id: string; key?: string; keyPrefix: string }[] }>().data.find((k) => k.id === body.id);
    expect(listed).toMatchObject({ id: body.id, name: 'ci', plan: 'free', status: 'active', lastUsedAt: null });
    expect(listed?.key).toBeUndefined();
    expect(body.key.startsWith(listed!.keyPrefix)).toBe(true);
  });

  it('rejects bad input and requires the admin token', async () => {
    expect((await admin('POST', '/admin/keys', { name: 'x', plan: 'gold' })).json()).toMatchObject({ error: 'Bad Request' });
    expect((await admin('POST', '/admin/keys', { name: '', plan: 'free' })).statusCode).toBe(400);
    expect((await admin('PATCH', '/admin/keys/nope', { status: 'inactive' })).statusCode).toBe(404);
    expect((await admin('POST', '/admin/keys/nope/revoke')).statusCode).toBe(404);
    const { id } = await createKey(ctx.app, 'free');
    expect((await admin('PATCH', `/admin/keys/${id}`, { status: 'paused' })).statusCode).toBe(400);
    expect((await admin('PATCH', `/admin/keys/${id}`, {})).statusCode).toBe(400);
    const anon = await ctx.app.inject({ method: 'POST', url: '/admin/keys', payload: { name: 'x', plan: 'free' } });
    expect(anon.statusCode).toBe(401);
    const wrong = await ctx.app.inject({ method: 'GET', url: '/admin/keys', headers: { authorization: 'Bearer wrong-token-wrong-token' } });
    expect(wrong.statusCode).toBe(403);
  });
});

describe('usage', () => {
  it('is recorded per key, interface and method, and readable by the operator', async () => {
    const { id, key } = await createKey(ctx.app, 'enterprise', 'usage');
    const h = { 'x-api-key': key };
    for (let i = 0; i < 3; i++) await ctx.app.inject({ method: 'GET', url: '/api/v1/__access-test', headers: h });
    await ctx.app.inject({ method: 'GET', url: '/api/v1/__access-test/fail', headers: h });
    await ctx.app.inject({
      method: 'POST',
      url: '/v1/rpc',
      headers: h,
      payload: [
        { jsonrpc: '2.0', id: 1, method: 'getProtocols' },
        { jsonrpc: '2.0', id: 2, method: 'getProtocols' },
        { jsonrpc: '2.0', id: 3, method: 'getTransaction', params: ['x'] },
      ],
    });
    const res = await admin('GET', `/admin/keys/${id}/usage?granularity=minute&flush=true`);
    expect(res.statusCode).toBe(200);
    const rows = res.json<{ data: { interface: string; method: string; requests: number; errors: number }[] }>().data;
    const find = (iface: string, method: string) => rows.find((r) => r.interface === iface && r.method === method);
    expect(find('rest', 'GET /api/v1/__access-test')).toMatchObject({ requests: 3, errors: 0 });
    expect(find('rest', 'GET /api/v1/__access-test/fail')).toMatchObject({ requests: 1, errors: 1 });
    expect(find('rpc', 'getProtocols')).toMatchObject({ requests: 2 });
    expect(find('rpc', 'getTransaction')).toMatchObject({ requests: 1, errors: 1 });

    const all = await admin('GET', '/admin/usage?granularity=day');
    expect(all.json<{ data: { keyId: string }[] }>().data.some((r) => r.keyId === id)).toBe(true);
    const listed = (await admin('GET', '/admin/keys')).json<{ data: { id: string; lastUsedAt: string | null }[] }>().data;
    expect(Date.parse(listed.find((k) => k.id === id)!.lastUsedAt!)).toBeGreaterThan(Date.now() - 60_000);
    const one = (await admin('GET', `/admin/keys/${id}`)).json<{ lastUsedAt: string | null }>();
    expect(one.lastUsedAt).toBe(listed.find((k) => k.id === id)!.lastUsedAt);
    const never = await createKey(ctx.app, 'free', 'never-used');
    expect((await admin('GET', `/admin/keys/${never.id}`)).json()).toMatchObject({ id: never.id, lastUsedAt: null });
  });

  it('JSON-RPC: invented method names fold into one label, errors count as errors, notifications not at all', async () => {
    const { id, key } = await createKey(ctx.app, 'enterprise', 'rpc-usage');
    const probes = Array.from({ length: 5 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: `probe_${'x'.repeat(50)}${i}` }));
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/rpc',
      headers: { 'x-api-key': key },
      payload: [
        ...probes,
        { jsonrpc: '2.0', method: 'notif_method_0' },
        { jsonrpc: '2.0', method: 'getProtocols' },
        { jsonrpc: '2.0', id: 10, method: 'getProtocols' },
        { jsonrpc: '2.0', id: 11, method: 'getTransaction', params: ['not base58!'] },
        { jsonrpc: '2.0', id: 12, method: '__proto__' },
        { jsonrpc: '2.0', id: 13 },
      ],
    });
    expect(res.statusCode).toBe(200);
    const answers = res.json<{ id: number; error?: { code: number } }[]>();
    expect(answers.map((a) => [a.id, a.error?.code ?? 'ok'])).toEqual([
      [0, -32601],
      [1, -32601],
      [2, -32601],
      [3, -32601],
      [4, -32601],
      [10, 'ok'],
      [11, -32602],
      [12, -32601],
      [13, -32600],
    ]);
    // A lone call answered with an error, and a body that is not JSON.
    await ctx.app.inject({
      method: 'POST',
      url: '/v1/rpc',
      headers: { 'x-api-key': key },
      payload: { jsonrpc: '2.0', id: 1, method: 'getProtocolStats', params: [{}] },
    });
    await ctx.app.inject({ method: 'POST', url: '/v1/rpc', headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload: '{"jsonrpc":' });
    // A notification alone: nothing runs, nothing is recorded.
    expect(
      (await ctx.app.inject({ method: 'POST', url: '/v1/rpc', headers: { 'x-api-key': key }, payload: { jsonrpc: '2.0', method: 'probe_notification' } }))
        .statusCode,
    ).toBe(204);

    const usage = await admin('GET', `/admin/keys/${id}/usage?granularity=day&flush=true`);
    const rows = usage.json<{ data: { interface: string; method: string; requests: number; errors: number }[] }>().data;
    const byMethod = Object.fromEntries(rows.map((r) => [`${r.interface} ${r.method}`, { requests: r.requests, errors: r.errors }]));
    expect(byMethod).toEqual({
      'rpc (unknown)': { requests: 5 + 2 + 1, errors: 5 + 2 + 1 },
      'rpc getProtocols': { requests: 1, errors: 0 },
      'rpc getTransaction': { requests: 1, errors: 1 },
      'rpc getProtocolStats': { requests: 1, errors: 1 },
    });
  });

  it('is flushed by the timer, off the request path', async () => {
    const { id, key } = await createKey(ctx.app, 'free', 'timer');
    await ctx.app.inject({ method: 'GET', url: '/api/v1/__access-test', headers: { 'x-api-key': key } });
    let rows: unknown[] = [];
    const t0 = Date.now();
    while (rows.length === 0 && Date.now() - t0 < 5000) {
      await new Promise((r) => setTimeout(r, 100));
      rows = (await admin('GET', `/admin/keys/${id}/usage`)).json<{ data: unknown[] }>().data;
    }
    expect(rows).toHaveLength(1);
  });

  it('rejects a bad range', async () => {
    const { id } = await createKey(ctx.app, 'free');
    expect((await admin('GET', `/admin/keys/${id}/usage?from=yesterday`)).statusCode).toBe(400);
    expect((await admin('GET', `/admin/keys/${id}/usage?granularity=week`)).statusCode).toBe(400);
  });
});

describe('GET /health', () => {
  it('reports engine, migrations and ingest freshness', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    const body = res.json<{ status: string; checks: Record<string, { ok: boolean; expected?: number; applied?: number }> }>();
    expect(body.status).toBe('ok');
    expect(body.checks.engine?.ok).toBe(true);
    expect(body.checks.migrations).toMatchObject({ ok: true });
    expect(body.checks.migrations?.applied).toBe(body.checks.migrations?.expected);
    expect(body.checks.ingest).toMatchObject({ ok: true, newestBlockTime: null });
  });

  it('fails naming the ingest check when data is older than HEALTH_MAX_INGEST_AGE_SECONDS', async () => {
    // The stored data is empty, so any maximum age fails the ingest check; the health
    // routes are mounted alone with that setting on the same engine.
    const { healthRoutes } = await import('../../api/doors/probes/health-routes.ts');
    const Fastify = (await import('fastify')).default;
    const app = Fastify();
    await app.register(healthRoutes, { wh: ctx.services.wh, maxIngestAgeSeconds: 60 });
    const res = await app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ status: 'unavailable', failing: 'ingest' });
    await app.close();
  });
});

describe('npm run keys (CLI)', () => {
  it('creates, lists, changes and revokes keys over HTTP', async () => {
    const address = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const env = { ...process.env, TXA_URL: address, ADMIN_TOKEN };
    // node --import tsx: what `npm run keys` runs, without npm's and npx's start-up time.
    const cli = (...args: string[]) => run(process.execPath, ['--import', 'tsx', 'scripts/keys-cli.ts', ...args], { env });

    const created = await cli('create', '--plan', 'free', '--name', 'ci-cli');
    const secret = /txa_[A-Za-z0-9_-]{43}/.exec(created.stdout)?.[0];
    const id = /created key ([0-9a-f-]{36})/.exec(created.stdout)?.[1];
    expect(secret).toBeDefined();
    expect(id).toBeDefined();
    expect(created.stdout).toContain('shown only once');

    const listed = await cli('list');
    expect(listed.stdout).toContain(id!);
    expect(listed.stdout).toContain('ci-cli');
    expect(listed.stdout).not.toContain(secret!);

    const ok = await fetch(`${address}/api/v1/__access-test`, { headers: { 'x-api-key': secret! } });
    expect(ok.status).toBe(200);

    expect((await cli('set-plan', id!, 'x402')).stdout).toContain('plan x402');
    expect((await cli('set-status', id!, 'inactive')).stdout).toContain('inactive');
    expect((await cli('revoke', id!)).stdout).toContain('revoked');
    const refused = await fetch(`${address}/api/v1/__access-test`, { headers: { 'x-api-key': secret! } });
    expect(refused.status).toBe(403);

    await expect(cli('set-plan', id!, 'gold')).rejects.toMatchObject({ code: 1 });
    await expect(run(process.execPath, ['--import', 'tsx', 'scripts/keys-cli.ts', 'list'], { env: { ...env, ADMIN_TOKEN: '' } })).rejects.toMatchObject({
      code: 2,
    });
  });
});
