// Operator API for dashboard accounts (docs/dashboard.md), behind the admin token: invite an
// account (the way in when DASHBOARD_SIGNUP=invite), list them, set an account's plan, and
// disable or re-enable one. Its keys follow at once: they are served with the account's plan,
// and a disabled account's keys answer 403 within a second (the key-change announcement
// drops every process's key snapshot, as for a revocation).
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { AppError, Errors, invalidParams, notFound } from '../../../core/errors.ts';
import { INVITE_TTL_MS } from '../../../core/limits/dashboard.ts';
import { isPlan, PLANS, type Plan } from '../../../core/plans.ts';
import { sha256Hex, type AccountRecord, type AccountStore } from '../../../warehouse/account-store.ts';
import type { Access } from '../../services/access/access.ts';
import { objectBody, parseEmail } from '../../../core/vocabulary/account-input.ts';
import { SECRET_BYTES } from '../../../core/limits/access.ts';

const view = (a: AccountRecord, keys: number) => ({
  id: a.id,
  email: a.email,
  plan: a.plan,
  status: a.status,
  keys,
  createdAt: a.createdAt,
  updatedAt: a.updatedAt,
  inviteExpiresAt: a.status === 'invited' ? new Date(a.inviteExpiresAt).toISOString() : null,
});

export async function accountAdminRoutes(app: FastifyInstance, opts: { access: Access; accounts: AccountStore }): Promise<void> {
  const { access, accounts } = opts;

  const keyCount = async (id: string): Promise<number> => (await access.keys.listByAccount(id)).length;

  // An invitation: the account exists (status invited) and its one-time token, shown only
  // here, lets its holder choose a password at /dashboard/#/signup?invite=<token>.
  app.post('/admin/accounts', async (req, reply) => {
    const body = objectBody(req.body, '{"email": "...", "plan": "free" | "x402" | "enterprise" (optional)}');
    const email = parseEmail(body.email);
    const plan = body.plan ?? 'free';
    if (!isPlan(plan)) throw invalidParams(`plan must be one of ${PLANS.join(', ')}`, 'plan');
    const invite = randomBytes(SECRET_BYTES).toString('base64url');
    const expiresAt = access.now() + INVITE_TTL_MS;
    const account = await accounts.create({ email, passwordHash: '', plan, status: 'invited', inviteHash: sha256Hex(invite), inviteExpiresAt: expiresAt });
    if (account === undefined) throw new AppError(Errors.conflict, 'An account with this email already exists');
    req.log.info({ accountId: account.id, plan }, 'dashboard account invited');
    reply.code(201);
    return { ...view(account, 0), invite, invitePath: `/dashboard/#/signup?invite=${invite}` };
  });

  app.get('/admin/accounts', async () => {
    const [all, keys] = await Promise.all([accounts.list(), access.keys.list()]);
    const counts = new Map<string, number>();
    for (const k of keys) if (k.accountId !== '') counts.set(k.accountId, (counts.get(k.accountId) ?? 0) + 1);
    return { data: all.map((a) => view(a, counts.get(a.id) ?? 0)) };
  });

  app.get<{ Params: { id: string } }>('/admin/accounts/:id', async (req) => {
    const account = await accounts.get(req.params.id);
    if (!account) throw notFound(`no account with id "${req.params.id}"`);
    return view(account, await keyCount(account.id));
  });

  app.patch<{ Params: { id: string } }>('/admin/accounts/:id', async (req) => {
    const body = objectBody(req.body, '{"plan": "...", "status": "active" | "disabled"}');
    const change: { plan?: Plan; status?: 'active' | 'disabled' } = {};
    if (body.plan !== undefined) {
      if (!isPlan(body.plan)) throw invalidParams(`plan must be one of ${PLANS.join(', ')}`, 'plan');
      change.plan = body.plan;
    }
    if (body.status !== undefined) {
      if (body.status !== 'active' && body.status !== 'disabled') throw invalidParams('status must be active or disabled', 'status');
      change.status = body.status;
    }
    if (change.plan === undefined && change.status === undefined) throw invalidParams('body must carry "plan" and/or "status"');
    const updated = await accounts.update(req.params.id, change, (current) => {
      // An invitation not yet accepted has no password: it cannot be made active by hand.
      if (current.status === 'invited' && change.status === 'active') {
        throw invalidParams('this account has not accepted its invitation yet; it becomes active when it does', 'status');
      }
    });
    if (!updated) throw notFound(`no account with id "${req.params.id}"`);
    // Every process reloads its key snapshot: the keys' plan and the account's status apply
    // to the next request (here at once; elsewhere via Redis or within KEY_CACHE_TTL_MS).
    await access.keyChanged(updated.id);
    req.log.info({ accountId: updated.id, ...change }, 'dashboard account changed');
    return view(updated, await keyCount(updated.id));
  });
}
