// DASHBOARD_SIGNUP=invite: self sign-up is refused (403) and the operator's invitation
// (POST /admin/accounts) is the way in, once, for the invited address only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders } from '../support/api-key.ts';
import { call, signIn, signUp } from '../support/dashboard-session.ts';
import { startApp } from '../support/services.ts';

describe('sign-up closed (DASHBOARD_SIGNUP=invite)', () => {
  let c: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    c = await startApp({ DASHBOARD_SIGNUP: 'invite' });
  });
  afterAll(async () => c?.cleanup());

  it('refuses self sign-up with 403 and lets an invited address join once with its invitation', async () => {
    const meta = (await c.app.inject({ method: 'GET', url: '/dashboard/api/meta' })).json();
    expect(meta.signup).toBe('invite');
    const open = await c.app.inject({
      method: 'POST',
      url: '/dashboard/api/signup',
      payload: { email: 'walk-in@example.com', password: 'correct horse battery' },
    });
    expect(open.statusCode).toBe(403);
    expect(open.json().message).toContain('by invitation only');
    expect(await c.services.accounts.findByEmail('walk-in@example.com')).toBeUndefined();

    const inv = await c.app.inject({
      method: 'POST',
      url: '/admin/accounts',
      headers: adminHeaders(),
      payload: { email: 'Invited@example.com', plan: 'x402' },
    });
    expect(inv.statusCode, inv.body).toBe(201);
    const { invite, invitePath, id } = inv.json();
    expect(invitePath).toBe(`/dashboard/#/signup?invite=${invite}`);
    // Before it is accepted nobody can sign in as the invited address.
    expect(
      (await c.app.inject({ method: 'POST', url: '/dashboard/api/signin', payload: { email: 'invited@example.com', password: 'correct horse battery' } }))
        .statusCode,
    ).toBe(401);
    const wrongEmail = await c.app.inject({
      method: 'POST',
      url: '/dashboard/api/signup',
      payload: { email: 'someone@example.com', password: 'correct horse battery', invite },
    });
    expect(wrongEmail.statusCode).toBe(400);
    const joined = await signUp(c.app, 'invited@example.com', 'correct horse battery', { invite });
    expect(joined.accountId).toBe(id);
    const again = await c.app.inject({
      method: 'POST',
      url: '/dashboard/api/signup',
      payload: { email: 'invited@example.com', password: 'another password!', invite },
    });
    expect(again.statusCode).toBe(403);
    const s = await signIn(c.app, 'invited@example.com');
    const key = (await call(c.app, s, 'POST', '/dashboard/api/keys', { name: 'k', environment: 'development' })).json();
    expect(key.plan).toBe('x402');
    const dup = await c.app.inject({ method: 'POST', url: '/admin/accounts', headers: adminHeaders(), payload: { email: 'invited@example.com' } });
    expect(dup.statusCode).toBe(409);
  });
});
