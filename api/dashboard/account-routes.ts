// The dashboard's account calls: sign-up (open, or through an operator's invitation), sign-in
// with attempt limits per account and per client address, sign-out, and the session probe
// the page starts with. Every answer is JSON; errors are {error, message} from the catalog.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../core/config/load-config.ts';
import { AppError, Errors, invalidParams } from '../../core/errors.ts';
import { DASHBOARD_BODY_LIMIT_BYTES, EMAIL_CLAIM_MS, KEY_ENVIRONMENT_MAX_LENGTH, KEY_NAME_MAX_LENGTH, KEYS_PER_ACCOUNT_MAX, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, SIGNIN_WINDOW_MS } from '../../core/limits/dashboard.ts';
import { sha256Hex, type AccountRecord, type AccountStore } from '../../warehouse/account-store.ts';
import type { Access } from '../access/access.ts';
import { FixedWindowLimiter, type RateDecision } from '../access/rate-limiter.ts';
import { decoyHasher, hashPassword, PASSWORD_RULE, passwordProblem, verifyPassword } from './passwords.ts';
import { checkOrigin, type Sessions } from './sessions.ts';
import { ENVIRONMENTS, objectBody, parseEmail } from '../../core/vocabulary/account-input.ts';

export interface AccountRouteOptions {
  config: Config;
  access: Access;
  accounts: AccountStore;
  sessions: Sessions;
}

/** What the page may show of an account. */
export const publicAccount = (a: AccountRecord) => ({ id: a.id, email: a.email, plan: a.plan, status: a.status, createdAt: a.createdAt });

const windowMinutes = SIGNIN_WINDOW_MS / 60_000;

const tooMany = (d: RateDecision, what: string): AppError =>
  new AppError(Errors.rateLimited, `${what}; retry after ${d.retryAfterSeconds} s`, { retryAfterSeconds: d.retryAfterSeconds });

export async function accountRoutes(app: FastifyInstance, opts: AccountRouteOptions): Promise<void> {
  const { config, access, accounts, sessions } = opts;
  const decoyHash = decoyHasher();
  const limits = config.dashboard;
  const limiter = new FixedWindowLimiter(access.rateLimitStore, access.now, SIGNIN_WINDOW_MS);
  const addressSubject = (req: FastifyRequest): string => `dashboard-address:${req.ip}`;
  const accountSubject = (email: string): string => `dashboard-account:${sha256Hex(email)}`;
  const bodyLimit = DASHBOARD_BODY_LIMIT_BYTES;

  /** Refuse before any work once the address has used its budget of attempts. */
  async function addressBudget(req: FastifyRequest): Promise<void> {
    const d = await limiter.peek(addressSubject(req), limits.signinAttemptsPerAddress);
    if (!d.allowed) {
      access.metrics.rateLimitRejections.inc({ plan: 'dashboard' });
      throw tooMany(d, `Too many sign-in and sign-up attempts from this address: ${d.limit} per ${windowMinutes} minutes`);
    }
  }
  const spendAddress = (req: FastifyRequest) => limiter.consume(addressSubject(req), limits.signinAttemptsPerAddress, 1);

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

  const started = async (req: FastifyRequest, reply: FastifyReply, account: AccountRecord) => {
    const csrfToken = await sessions.start(req, reply, account);
    return { account: publicAccount(account), csrfToken };
  };

  app.post('/dashboard/api/signup', { bodyLimit }, async (req, reply) => {
    checkOrigin(req);
    await addressBudget(req);
    // Every sign-up attempt counts: one address cannot mint accounts at speed.
    await spendAddress(req);
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
    await addressBudget(req);
    const body = objectBody(req.body, '{"email": "...", "password": "..."}');
    const email = parseEmail(body.email);
    if (typeof body.password !== 'string' || body.password === '' || [...body.password].length > PASSWORD_MAX_LENGTH) {
      throw invalidParams('password is required', 'password');
    }
    const password = body.password;
    // Checked before the password, so an exhausted budget answers the same whatever is sent.
    const before = await limiter.peek(accountSubject(email), limits.signinFailuresPerAccount);
    if (!before.allowed) {
      access.metrics.rateLimitRejections.inc({ plan: 'dashboard' });
      throw tooMany(before, `Too many failed sign-ins for this account: ${before.limit} per ${windowMinutes} minutes`);
    }
    const account = await accounts.findByEmail(email);
    // An unknown email costs the same hash as a known one (no enumeration by timing).
    const ok = await verifyPassword(password, account !== undefined && account.passwordHash !== '' ? account.passwordHash : await decoyHash());
    if (!ok || account === undefined) {
      access.metrics.authFailures.inc({ reason: 'dashboard_password' });
      await Promise.all([spendAddress(req), limiter.consume(accountSubject(email), limits.signinFailuresPerAccount, 1)]);
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
