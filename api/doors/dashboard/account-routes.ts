// The dashboard's account calls: sign-up (open, or through an operator's invitation), sign-in
// with attempt limits per account and per client address, sign-out, and the session probe
// the page starts with. Every answer is JSON; errors are {error, message} from the catalog.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../../core/config/load-config.ts';
import { AppError, Errors, invalidParams } from '../../../core/errors.ts';
import {
  DASHBOARD_BODY_LIMIT_BYTES,
  EMAIL_CLAIM_MS,
  KEY_ENVIRONMENT_MAX_LENGTH,
  KEY_NAME_MAX_LENGTH,
  KEYS_PER_ACCOUNT_MAX,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
} from '../../../core/limits/dashboard.ts';
import { sha256Hex, type AccountRecord, type AccountStore } from '../../../warehouse/account-store.ts';
import type { Access } from '../../services/access/access.ts';
import { AttemptLimits } from './attempt-limits.ts';
import { decoyHasher, hashPassword, PASSWORD_RULE, passwordProblem, verifyPassword } from './passwords.ts';
import { checkOrigin, type Sessions } from './sessions.ts';
import { ENVIRONMENTS, objectBody, parseEmail } from '../../../core/vocabulary/account-input.ts';

export interface AccountRouteOptions {
  config: Config;
  access: Access;
  accounts: AccountStore;
  sessions: Sessions;
}

/** What the page may show of an account. */
export const publicAccount = (a: AccountRecord) => ({ id: a.id, email: a.email, plan: a.plan, status: a.status, createdAt: a.createdAt });

/** The invited account of `email`, made active with its password: the invitation used once. */
async function joinByInvitation(accounts: AccountStore, access: Access, email: string, password: string, invite: string): Promise<AccountRecord> {
  const invited = await accounts.findByInvite(sha256Hex(invite));
  if (invited === undefined || invited.status !== 'invited' || invited.inviteExpiresAt <= access.now()) {
    throw new AppError(Errors.forbidden, 'This invitation is not valid (used, withdrawn or expired); ask the operator for a new one');
  }
  if (invited.email !== email) throw invalidParams('This invitation is for another email address', 'email');
  const passwordHash = await hashPassword(password);
  const account = await accounts.update(invited.id, { passwordHash, status: 'active', inviteHash: '', inviteExpiresAt: 0 }, (current) => {
    if (current.status !== 'invited') throw new AppError(Errors.forbidden, 'This invitation has already been used');
  });
  if (account === undefined) throw new AppError(Errors.forbidden, 'This invitation is not valid; ask the operator for a new one');
  return account;
}

export async function accountRoutes(app: FastifyInstance, opts: AccountRouteOptions): Promise<void> {
  const { config, access, accounts, sessions } = opts;
  const decoyHash = decoyHasher();
  const limits = config.dashboard;
  const attempts = new AttemptLimits(access, limits);
  const bodyLimit = DASHBOARD_BODY_LIMIT_BYTES;

  pageCalls(app, limits, sessions);

  const started = async (req: FastifyRequest, reply: FastifyReply, account: AccountRecord) => {
    const csrfToken = await sessions.start(req, reply, account);
    return { account: publicAccount(account), csrfToken };
  };

  app.post('/dashboard/api/signup', { bodyLimit }, async (req, reply) => {
    checkOrigin(req);
    await attempts.checkAddress(req);
    // Every sign-up attempt counts: one address cannot mint accounts at speed.
    await attempts.spendAddress(req);
    const body = objectBody(req.body, '{"email": "...", "password": "...", "invite": "..." (optional)}');
    const email = parseEmail(body.email);
    const problem = passwordProblem(body.password);
    if (problem !== undefined) throw invalidParams(problem, 'password');
    const password = body.password as string;
    const invite = body.invite;
    if (invite !== undefined && (typeof invite !== 'string' || !/^[A-Za-z0-9_-]{20,100}$/.test(invite))) {
      throw invalidParams('invite must be the token of an invitation link', 'invite');
    }

    if (typeof invite === 'string') {
      const account = await joinByInvitation(accounts, access, email, password, invite);
      req.log.info({ accountId: account.id }, 'dashboard account joined by invitation');
      reply.code(201);
      return started(req, reply, account);
    }

    if (limits.signup !== 'open') {
      throw new AppError(Errors.forbidden, 'Sign-up is by invitation only on this service: ask the operator for an invitation link');
    }
    // Hashed before anything is written: nothing half-created when hashing fails.
    const passwordHash = await hashPassword(password);
    const claimed = await access.rateLimitStore.increment(`dashboard-email-claim:${sha256Hex(email)}`, 1, EMAIL_CLAIM_MS);
    const account = claimed === 1 ? await accounts.create({ email, passwordHash, plan: 'free', status: 'active' }) : undefined;
    if (account === undefined) {
      throw new AppError(Errors.conflict, 'An account with this email already exists: sign in instead');
    }
    req.log.info({ accountId: account.id }, 'dashboard account created');
    reply.code(201);
    return started(req, reply, account);
  });

  app.post('/dashboard/api/signin', { bodyLimit }, async (req, reply) => {
    checkOrigin(req);
    await attempts.checkAddress(req);
    const body = objectBody(req.body, '{"email": "...", "password": "..."}');
    const email = parseEmail(body.email);
    if (typeof body.password !== 'string' || body.password === '' || [...body.password].length > PASSWORD_MAX_LENGTH) {
      throw invalidParams('password is required', 'password');
    }
    const password = body.password;
    await attempts.checkAccount(email);
    const account = await accounts.findByEmail(email);
    // An unknown email costs the same hash as a known one (no enumeration by timing).
    const ok = await verifyPassword(password, account !== undefined && account.passwordHash !== '' ? account.passwordHash : await decoyHash());
    if (!ok || account === undefined) {
      access.metrics.authFailures.inc({ reason: 'dashboard_password' });
      await attempts.spendFailure(req, email);
      throw new AppError(Errors.unauthorized, 'Email or password is wrong');
    }
    if (account.status !== 'active') throw new AppError(Errors.forbidden, 'This account is disabled; contact the operator');
    return started(req, reply, account);
  });

  app.post('/dashboard/api/signout', { bodyLimit }, async (req, reply) => {
    const caller = await sessions.requireWithCsrf(req);
    await sessions.end(caller);
    sessions.clearCookie(req, reply);
    return { signedOut: true };
  });
}

/** What the page asks first: the service's rules for its forms, and who is signed in. */
function pageCalls(app: FastifyInstance, limits: Config['dashboard'], sessions: Sessions): void {
  app.get('/dashboard/api/meta', async () => ({
    signup: limits.signup,
    passwordRule: PASSWORD_RULE,
    passwordMinLength: PASSWORD_MIN_LENGTH,
    passwordMaxLength: PASSWORD_MAX_LENGTH,
    environments: ENVIRONMENTS,
    keyNameMaxLength: KEY_NAME_MAX_LENGTH,
    environmentMaxLength: KEY_ENVIRONMENT_MAX_LENGTH,
    keysPerAccount: KEYS_PER_ACCOUNT_MAX,
  }));

  // The page's first call: who is signed in (account null when nobody; not an error, so a
  // signed-out visit logs nothing in the browser's console).
  app.get('/dashboard/api/session', async (req, reply) => {
    const { caller, problem } = await sessions.lookup(req);
    if (caller === undefined) {
      if (req.headers.cookie !== undefined) sessions.clearCookie(req, reply);
      return { account: null, reason: problem?.kind.http === 401 && req.headers.cookie?.includes('txa_session=') ? problem.message : null };
    }
    return { account: publicAccount(caller.account), csrfToken: caller.session.csrfToken };
  });
}
