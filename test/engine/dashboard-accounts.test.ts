// The dashboard's account API through app.inject(): sign-up and sign-in, sessions ended by
// sign-out and by expiry, CSRF on every state-changing call, attempt limits per account and
// per address, sign-up closed with invitations instead, keys owned by an account (their
// environment, list, revocation), and the operator's plan and disable switches reaching the
// account's keys. Sign-up closed by configuration: dashboard-invite.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAN_LIMITS, PLAN_QUERY_BUDGET } from '../../core/plans.ts';
import { adminHeaders } from '../support/api-key.ts';
import { call, sessionCookie, signIn, signUp, type DashboardSession } from '../support/dashboard-session.ts';
import { startApp } from '../support/services.ts';

let clock = Date.now();
let t: Awaited<ReturnType<typeof startApp>>;

beforeAll(async () => {
  t = await startApp(
    { SIGNIN_FAILURES_PER_ACCOUNT: '3', SIGNIN_ATTEMPTS_PER_ADDRESS: '8', SESSION_TTL_HOURS: '1', KEY_CACHE_TTL_MS: '200' },
    { now: () => clock },
  );
});
afterAll(async () => t?.cleanup());

const rpc = (key: string) =>
  t.app.inject({
    method: 'POST',
    url: '/v1/rpc',
    headers: { 'x-api-key': key },
    payload: { jsonrpc: '2.0', id: 1, method: 'getProtocols', params: [] },
  });

const createKey = async (s: DashboardSession, name = 'bot', environment = 'staging') => {
  const res = await call(t.app, s, 'POST', '/dashboard/api/keys', { name, environment });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: string; key: string; name: string; environment: string; status: string }>();
};

describe('sign-up and sign-in', () => {
  it('creates an account with a session cookie (HTTP-only, SameSite=Strict) and answers the session probe', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/dashboard/api/signup',
      payload: { email: ' Alice@Example.com ', password: 'correct horse battery' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const setCookie = String(res.headers['set-cookie']);
    expect(setCookie).toMatch(/^txa_session=[A-Za-z0-9_-]{43}; Path=\/dashboard; HttpOnly; SameSite=Strict; Max-Age=3600$/);
    const body = res.json();
    expect(body.account).toMatchObject({ email: 'alice@example.com', plan: 'free', status: 'active' });
    expect(body.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(body)).not.toContain('scrypt');
    const probe = await t.app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie: sessionCookie(res)! } });
    expect(probe.json()).toMatchObject({ account: { email: 'alice@example.com' }, csrfToken: body.csrfToken });
    const stored = await t.services.accounts.findByEmail('alice@example.com');
    expect(stored?.passwordHash).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{86}$/);
  });

  it('refuses a duplicate email (409), a weak password (400 stating the rule) and a bad email, creating nothing', async () => {
    const before = (await t.services.accounts.list()).length;
    const dup = await t.app.inject({
      method: 'POST',
      url: '/dashboard/api/signup',
      payload: { email: 'ALICE@example.com', password: 'another good password' },
    });
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toEqual({ error: 'Conflict', message: 'An account with this email already exists: sign in instead' });
    const weak = await t.app.inject({ method: 'POST', url: '/dashboard/api/signup', payload: { email: 'weak@example.com', password: 'short' } });
    expect(weak.statusCode).toBe(400);
    expect(weak.json().message).toContain('12 to 256 characters');
    const bad = await t.app.inject({ method: 'POST', url: '/dashboard/api/signup', payload: { email: 'not-an-email', password: 'correct horse battery' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['set-cookie']).toBeUndefined();
    expect((await t.services.accounts.list()).length).toBe(before);
  });

  it('signs in with the right password only (401 otherwise, the same for an unknown email)', async () => {
    const wrong = await t.app.inject({
      method: 'POST',
      url: '/dashboard/api/signin',
      payload: { email: 'alice@example.com', password: 'wrong password!!' },
      remoteAddress: '10.0.0.1',
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual({ error: 'Unauthorized', message: 'Email or password is wrong' });
    const unknown = await t.app.inject({
      method: 'POST',
      url: '/dashboard/api/signin',
      payload: { email: 'nobody@example.com', password: 'wrong password!!' },
      remoteAddress: '10.0.0.1',
    });
    expect(unknown.json()).toEqual(wrong.json());
    const s = await signIn(t.app, 'alice@example.com', 'correct horse battery', '10.0.0.1');
    expect(s.csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('limits failed sign-ins per account (429 even for the right password, then free after the window)', async () => {
    await signUp(t.app, 'target@example.com');
    for (let i = 0; i < 3; i++) {
      const r = await t.app.inject({
        method: 'POST',
        url: '/dashboard/api/signin',
        payload: { email: 'target@example.com', password: `guess number ${i}!` },
        remoteAddress: `10.1.0.${i}`,
      });
      expect(r.statusCode).toBe(401);
    }
    const locked = await t.app.inject({
      method: 'POST',
      url: '/dashboard/api/signin',
      payload: { email: 'target@example.com', password: 'correct horse battery' },
      remoteAddress: '10.1.1.1',
    });
    expect(locked.statusCode).toBe(429);
    expect(locked.json().message).toMatch(/Too many failed sign-ins for this account: 3 per 15 minutes; retry after \d+ s/);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    clock += 15 * 60_000;
    await signIn(t.app, 'target@example.com', 'correct horse battery', '10.1.1.1');
  });

  it('limits sign-in and sign-up attempts per client address', async () => {
    const from = '10.2.0.9';
    let last = 0;
    for (let i = 0; i < 9; i++) {
      const r = await t.app.inject({
        method: 'POST',
        url: '/dashboard/api/signin',
        payload: { email: `spray${i}@example.com`, password: 'wrong password!!' },
        remoteAddress: from,
      });
      last = r.statusCode;
      if (i < 8) expect(r.statusCode).toBe(401);
    }
    expect(last).toBe(429);
    const signup = await t.app.inject({
      method: 'POST',
      url: '/dashboard/api/signup',
      payload: { email: 'fresh@example.com', password: 'correct horse battery' },
      remoteAddress: from,
    });
    expect(signup.statusCode).toBe(429);
    expect(signup.json().message).toContain('from this address');
    expect(await t.services.accounts.findByEmail('fresh@example.com')).toBeUndefined();
    clock += 15 * 60_000;
  });
});

describe('sessions and CSRF', () => {
  it('refuses state-changing calls without the CSRF token, with a stale one, and from another origin', async () => {
    const s = await signUp(t.app, 'csrf@example.com');
    const none = await t.app.inject({ method: 'POST', url: '/dashboard/api/keys', headers: { cookie: s.cookie }, payload: { name: 'x' } });
    expect(none.statusCode).toBe(403);
    expect(none.json().message).toContain('security token is missing or stale');
    // A second sign-in is a new session: the first session's token does not work with it.
    const s2 = await signIn(t.app, 'csrf@example.com');
    const stale = await call(t.app, { ...s2, csrf: s.csrf }, 'POST', '/dashboard/api/keys', { name: 'x' });
    expect(stale.statusCode).toBe(403);
    const cross = await call(t.app, s2, 'POST', '/dashboard/api/keys', { name: 'x' }, { origin: 'https://evil.example' });
    expect(cross.statusCode).toBe(403);
    expect(cross.json().message).toContain('Cross-site request refused');
    const ok = await call(t.app, s2, 'POST', '/dashboard/api/keys', { name: 'x' }, { origin: 'http://localhost:80' });
    expect(ok.statusCode).toBe(201);
    expect((await call(t.app, s2, 'GET', '/dashboard/api/keys')).json().data).toHaveLength(1);
  });

  it('sign-out ends the session server-side: the old cookie is refused afterwards', async () => {
    const s = await signUp(t.app, 'out@example.com');
    const out = await call(t.app, s, 'POST', '/dashboard/api/signout');
    expect(out.statusCode).toBe(200);
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0');
    const after = await call(t.app, s, 'GET', '/dashboard/api/keys');
    expect(after.statusCode).toBe(401);
    expect(after.json().message).toBe('Your session has ended; sign in again');
  });

  it('an expired session is refused with 401 saying so', async () => {
    const s = await signUp(t.app, 'expire@example.com');
    clock += 3_600_000 + 1000;
    const res = await call(t.app, s, 'GET', '/dashboard/api/keys');
    expect(res.statusCode).toBe(401);
    expect(res.json().message).toBe('Your session has expired; sign in again');
    const probe = await t.app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie: s.cookie } });
    expect(probe.statusCode).toBe(200);
    expect(probe.json()).toEqual({ account: null, reason: 'Your session has expired; sign in again' });
  });

  it('calls without a session are 401 and need no API key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/dashboard/api/keys' });
    expect(res.statusCode).toBe(401);
    expect(res.json().message).toContain('Sign in first');
    const page = await t.app.inject({ method: 'GET', url: '/dashboard' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(page.body).not.toMatch(/<script>|<style|style="/);
  });

  it('a path under /dashboard/ that reaches another route is not exempt from the API key', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/dashboard/../v1/rpc', payload: { jsonrpc: '2.0', id: 1, method: 'getProtocols', params: [] } });
    expect(res.statusCode).toBe(401);
    // The key is decided by the route reached (its declared policy), not by how the path starts.
    expect((await t.app.inject({ method: 'GET', url: '/dashboard/static/app.js' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/dashboard/static/../../api/v1/stats' })).statusCode).toBe(401);
  });
});

describe('keys of an account', () => {
  it('creates a key with an environment, shows its secret once, lists it and revokes it (the API answers 403)', async () => {
    const s = await signUp(t.app, 'keys@example.com');
    const k = await createKey(s, '<img src=x onerror=alert(1)>', 'staging');
    expect(k.key).toMatch(/^txa_/);
    expect(k).toMatchObject({ name: '<img src=x onerror=alert(1)>', environment: 'staging', status: 'active' });
    expect((await rpc(k.key)).statusCode).toBe(200);
    const list = (await call(t.app, s, 'GET', '/dashboard/api/keys')).json();
    expect(list.data).toHaveLength(1);
    expect(JSON.stringify(list)).not.toContain(k.key);
    // Another account cannot see or revoke it.
    const other = await signUp(t.app, 'other@example.com');
    expect((await call(t.app, other, 'GET', '/dashboard/api/keys')).json().data).toEqual([]);
    expect((await call(t.app, other, 'POST', `/dashboard/api/keys/${k.id}/revoke`)).statusCode).toBe(404);
    const revoked = await call(t.app, s, 'POST', `/dashboard/api/keys/${k.id}/revoke`);
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().status).toBe('revoked');
    const refused = await rpc(k.key);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toBe('API key has been revoked');
  });

  it('refuses bad names and environments', async () => {
    const s = await signUp(t.app, 'names@example.com');
    for (const [body, field] of [
      [{ name: '' }, 'name'],
      [{ name: 'a'.repeat(101) }, 'name'],
      [{ name: 'a\u202eb' }, 'name'],
      [{ name: 'x', environment: 'prod<script>' }, 'environment'],
      [{ name: 'x', environment: 'e'.repeat(33) }, 'environment'],
      [{ name: 'x', environment: 7 }, 'environment'],
    ] as const) {
      const res = await call(t.app, s, 'POST', '/dashboard/api/keys', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().message).toContain(field);
    }
    expect((await call(t.app, s, 'GET', '/dashboard/api/keys')).json().data).toEqual([]);
  });

  it("usage of the account moves with the key's requests, with the plan limit and the window's remaining requests", async () => {
    const s = await signUp(t.app, 'usage@example.com');
    const k = await createKey(s, 'usage', 'production');
    for (let i = 0; i < 3; i++) expect((await rpc(k.key)).statusCode).toBe(200);
    // One MCP tool call: the usage page counts it under MCP, not "other".
    const mcp = await t.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { 'x-api-key': k.key, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'getProtocols', arguments: {} } },
    });
    expect(mcp.statusCode).toBe(200);
    await t.services.access.usage.flush();
    const u = (await call(t.app, s, 'GET', '/dashboard/api/usage?key=all&granularity=minute')).json();
    expect(u.totals.requests).toBe(4);
    expect(u.totals.byInterface.rpc).toBe(3);
    expect(u.totals.byInterface.mcp).toBe(1);
    expect(u.limitPerMinute).toBe(PLAN_LIMITS.free);
    // The scale of the costs shown: what one request of the plan may cost, in the same units.
    expect(u.costBudgetPerRequest).toBe(PLAN_QUERY_BUDGET.free);
    expect(u.buckets).toHaveLength(60);
    expect(u.windows[0]).toMatchObject({ keyId: k.id, limit: 100 });
    expect(u.windows[0].remaining).toBeLessThanOrEqual(97);
    const one = (await call(t.app, s, 'GET', `/dashboard/api/usage?key=${k.id}&granularity=day`)).json();
    expect(one.totals.requests).toBe(4);
    expect(one.limitPerBucket).toBe(100 * 1440);
    expect((await call(t.app, s, 'GET', '/dashboard/api/usage?granularity=week')).statusCode).toBe(400);
  });
});

describe('operator account routes', () => {
  it("sets an account's plan (its keys follow) and disables it (its keys answer 403, its sessions end), then enables it again", async () => {
    const s = await signUp(t.app, 'ops@example.com');
    const k = await createKey(s, 'ops', 'production');
    expect((await rpc(k.key)).headers['x-ratelimit-plan']).toBe('free');
    const plan = await t.app.inject({ method: 'PATCH', url: `/admin/accounts/${s.accountId}`, headers: adminHeaders(), payload: { plan: 'enterprise' } });
    expect(plan.statusCode, plan.body).toBe(200);
    expect(plan.json()).toMatchObject({ plan: 'enterprise', status: 'active', keys: 1 });
    expect((await rpc(k.key)).headers['x-ratelimit-plan']).toBe('enterprise');

    const off = await t.app.inject({ method: 'PATCH', url: `/admin/accounts/${s.accountId}`, headers: adminHeaders(), payload: { status: 'disabled' } });
    expect(off.json().status).toBe('disabled');
    // The very next request is refused: no cached key outlives the switch.
    const refused = await rpc(k.key);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toBe('API key belongs to a disabled account');
    expect((await call(t.app, s, 'GET', '/dashboard/api/keys')).statusCode).toBe(403);
    const signin = await t.app.inject({
      method: 'POST',
      url: '/dashboard/api/signin',
      payload: { email: 'ops@example.com', password: 'correct horse battery' },
    });
    expect(signin.statusCode).toBe(403);

    await t.app.inject({ method: 'PATCH', url: `/admin/accounts/${s.accountId}`, headers: adminHeaders(), payload: { status: 'active' } });
    expect((await rpc(k.key)).statusCode).toBe(200);
    const listed = (await t.app.inject({ method: 'GET', url: '/admin/keys', headers: adminHeaders() })).json().data;
    expect(listed.find((x: { id: string }) => x.id === k.id)).toBeDefined();
  });

  it('needs the admin token and answers 404 / 400 for unknown accounts and bad changes', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/admin/accounts' })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'PATCH', url: '/admin/accounts/nope', headers: adminHeaders(), payload: { plan: 'free' } })).statusCode).toBe(404);
    const s = await signUp(t.app, 'bad-change@example.com');
    for (const payload of [{ plan: 'gold' }, { status: 'revoked' }, {}]) {
      const res = await t.app.inject({ method: 'PATCH', url: `/admin/accounts/${s.accountId}`, headers: adminHeaders(), payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
    }
    const all = (await t.app.inject({ method: 'GET', url: '/admin/accounts', headers: adminHeaders() })).json().data;
    expect(all.some((a: { email: string }) => a.email === 'bad-change@example.com')).toBe(true);
  });
});
