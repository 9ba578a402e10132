// The attempt limits of the dashboard's sign-in and sign-up (docs/dashboard.md): per client
// address, every sign-up and failed sign-in; per account, failed sign-ins; both over
// SIGNIN_WINDOW_MS. A spent budget is refused before any work (429).
import type { FastifyRequest } from 'fastify';
import type { Config } from '../../../core/config/load-config.ts';
import { AppError, Errors } from '../../../core/errors.ts';
import { SIGNIN_WINDOW_MS } from '../../../core/limits/dashboard.ts';
import { sha256Hex } from '../../../warehouse/account-store.ts';
import type { Access } from '../../services/access/access.ts';
import { FixedWindowLimiter, type RateDecision } from '../../services/access/rate-limiter.ts';

const windowMinutes = SIGNIN_WINDOW_MS / 60_000;

const tooMany = (d: RateDecision, what: string): AppError =>
  new AppError(Errors.rateLimited, `${what}; retry after ${d.retryAfterSeconds} s`, { retryAfterSeconds: d.retryAfterSeconds });

const addressSubject = (req: FastifyRequest): string => `dashboard-address:${req.ip}`;
const accountSubject = (email: string): string => `dashboard-account:${sha256Hex(email)}`;

export class AttemptLimits {
  private readonly limiter: FixedWindowLimiter;

  constructor(
    private readonly access: Access,
    private readonly limits: Config['dashboard'],
  ) {
    this.limiter = new FixedWindowLimiter(access.rateLimitStore, access.now, SIGNIN_WINDOW_MS);
  }

  /** Refuse before any work once the address has used its budget of attempts. */
  async checkAddress(req: FastifyRequest): Promise<void> {
    const d = await this.limiter.peek(addressSubject(req), this.limits.signinAttemptsPerAddress);
    if (!d.allowed) {
      this.access.metrics.rateLimitRejections.inc({ plan: 'dashboard' });
      throw tooMany(d, `Too many sign-in and sign-up attempts from this address: ${d.limit} per ${windowMinutes} minutes`);
    }
  }

  async spendAddress(req: FastifyRequest): Promise<void> {
    await this.limiter.consume(addressSubject(req), this.limits.signinAttemptsPerAddress, 1);
  }

  /** Checked before the password, so an exhausted budget answers the same whatever is sent. */
  async checkAccount(email: string): Promise<void> {
    const before = await this.limiter.peek(accountSubject(email), this.limits.signinFailuresPerAccount);
    if (!before.allowed) {
      this.access.metrics.rateLimitRejections.inc({ plan: 'dashboard' });
      throw tooMany(before, `Too many failed sign-ins for this account: ${before.limit} per ${windowMinutes} minutes`);
    }
  }

  /** A failed sign-in: counted against the address and the account. */
  async spendFailure(req: FastifyRequest, email: string): Promise<void> {
    await Promise.all([this.spendAddress(req), this.limiter.consume(accountSubject(email), this.limits.signinFailuresPerAccount, 1)]);
  }
}
